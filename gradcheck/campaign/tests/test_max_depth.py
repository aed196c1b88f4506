"""A campaign honours an engine's `max_depth`: no graph has more op nodes than the engine handles."""

from gradcheck.campaign import Settings
from gradcheck.campaign.checking import campaign_checker
from gradcheck.engines.minigrad_value import MinigradValue


class ShallowMinigrad(MinigradValue):
    """minigrad, claiming it handles graphs only 6 ops deep."""

    max_depth = 6


def test_no_campaign_graph_is_deeper_than_the_engines_max_depth():
    shallow = campaign_checker(Settings(engine=f"{__file__}:ShallowMinigrad"))
    unlimited = campaign_checker(Settings(engine="minigrad"))
    assert max(len(unlimited.graph(i).nodes) for i in range(40)) > 50  # deep chains are drawn
    assert max(len(shallow.graph(i).nodes) for i in range(40)) == 6


class UnspelledMinigrad(MinigradValue):
    """minigrad called one way per op, as micrograd's adapter calls micrograd (no `spellings`)."""

    spellings = ()


def test_an_engine_without_a_limit_gets_the_graphs_it_always_got():
    micrograd = campaign_checker(Settings(engine="micrograd"))  # max_depth 300: above every graph drawn
    unlimited = campaign_checker(Settings(engine=f"{__file__}:UnspelledMinigrad", ops=micrograd.ops))
    assert [micrograd.graph(i).to_dict() for i in range(20)] == [
        unlimited.graph(i).to_dict() for i in range(20)
    ]
