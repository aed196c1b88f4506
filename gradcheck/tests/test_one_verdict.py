"""One verdict: `gradcheck.check_graph` judges a graph as the campaign and the parity suite do."""

from pathlib import Path

import gradcheck
from gradcheck.campaign import graph_seed
from gradcheck.campaign.checking import GraphChecker
from gradcheck.campaign.settings import Settings
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.ir import Graph
from gradcheck.parity.compare import compare_once

# Graph 15579 of `gradcheck run --seed 12345`: minigrad and torch agree bit for bit at every point,
# central differences alone dissent at one (a false alarm the precise oracle clears).
FALSE_ALARM = Path(gradcheck.__file__).parent / "parity/tests/data/false_alarm_seed12345_graph15579.json"
SEED, INDEX = 12345, 15579


class _StoredGraph(GraphChecker):
    """The campaign's checker of graph `INDEX`, given the stored graph rather than drawing it again."""

    def graph(self, index: int) -> Graph:
        return Graph.from_json(FALSE_ALARM.read_text())


def test_a_false_alarm_of_central_differences_alone_fails_the_unsettled_comparison():
    graph = Graph.from_json(FALSE_ALARM.read_text())
    plain = compare_once(graph, load_engine("minigrad"), seed=graph_seed(SEED, INDEX))
    assert not plain.passed and plain.oracle_only, "the graph still tells the two checks apart"


def test_the_public_check_gives_the_campaigns_verdict_on_a_point_only_central_differences_fail():
    graph = Graph.from_json(FALSE_ALARM.read_text())
    adapter = load_engine("minigrad")
    public = gradcheck.check_graph(graph, adapter, seed=graph_seed(SEED, INDEX))
    campaign = _StoredGraph(Settings(engine="minigrad", seed=SEED), adapter)(INDEX)
    assert public.passed and campaign.passed
    assert public.settled_points == 1 and public.points_checked == graph.n_points - 1


def test_the_public_check_is_the_one_the_campaign_and_the_suite_call():
    from gradcheck.campaign import checking
    from gradcheck.suite import test_parity

    assert gradcheck.check_graph is checking.check_graph is test_parity.check_graph
