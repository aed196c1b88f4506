"""Bugs met in engines published by others, each through the real campaign: exactly one finding
with the right op and kind (or none, for a correct engine whose answers differ only by rounding)."""

import pytest

from gradcheck.campaign import Settings, real_backend, run_campaign, validate
from gradcheck.campaign.settings import CampaignError
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.parity.kinds import Kind

ENGINES = "gradcheck.testing.field_engines:"


def campaign(engine: str, **settings):
    options = {"graphs": 100, "seed": 0, **settings}
    return run_campaign(Settings(engine=ENGINES + engine, **options), real_backend())


def only_finding(result):
    assert len(result.findings) == 1, [f.title for f in result.findings]
    return result.findings[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_division_right_to_rounding_is_no_finding_where_an_output_cancels(seed):
    # x / x is 1 - 1.1e-16 through the reciprocal, so log(x / x) is -1.1e-16 where torch gives 0
    assert campaign("ReciprocalDivision", seed=seed, ops=("div", "log")).findings == []


def test_a_division_off_by_a_part_in_1e12_fails_as_a_wrong_value():
    # 1e-12 is thousands of times the rounding bound of a quotient: wrong wherever it divides
    findings = campaign("DivisionOffByAPart", ops=("div", "log")).findings
    assert any(f.kind is Kind.WRONG_VALUE and f.ops == ("div",) and f.check == "forward" for f in findings)
    assert all("div" in f.ops for f in findings), [f.title for f in findings]


def test_a_node_inside_data_is_one_wrong_type_finding_against_tanh():
    findings = campaign("NodeInData", graphs=50).findings
    (finding,) = [f for f in findings if f.kind is Kind.WRONG_TYPE]
    assert (finding.ops, finding.check) == (("tanh",), "forward")
    assert finding.title == "tanh — not a number"
    # besides: its exp-based tanh (`ExpTanh`) loses digits at tiny inputs, a wrong value there
    assert all(f.kind is Kind.WRONG_VALUE and "tanh at tiny" in f.title for f in findings if f is not finding)


def test_pre_flight_lets_an_engine_answer_with_non_numbers_and_refuses_a_missing_method():
    assert "tanh" in validate(Settings(engine=ENGINES + "NodeInData"))

    class NoLeaf(EngineAdapter):
        ops = frozenset({"add"})

    with pytest.raises(CampaignError, match="adapter NoLeaf does not implement leaf"):
        validate(Settings(engine=NoLeaf()))  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_exp_based_tanh_is_found_by_the_random_graphs_on_every_seed(seed):
    # (e^2x - 1) / (e^2x + 1) loses 4e-10 (relative) at 1.75e-7 and 1e-4 at 1e-12: only tiny
    # inputs show it, and the random graphs draw them (the isolation pass is left out here)
    finding = only_finding(campaign("ExpTanh", graphs=200, seed=seed, isolation=False))
    assert (finding.kind, finding.ops, finding.check) == (Kind.WRONG_VALUE, ("tanh",), "forward")


@pytest.mark.usefixtures("shallow_chains")  # tensor chains 10^3 deep only
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_matmul_backward_that_crashes_on_vectors_is_one_finding_against_matmul(seed):
    result = campaign(
        "VectorMatMulCrashes", graphs=60, seed=seed, tensor=True, ops=("matmul", "add", "tanh", "sum")
    )
    finding = only_finding(result)
    assert (finding.kind, finding.ops) == (Kind.EXCEPTION, ("matmul",))
    shapes = [len(i["shape"]) for i in finding.graph["inputs"]]
    assert 1 in shapes, f"a vector operand: {finding.graph}"


def test_a_complex_number_at_an_edge_value_is_wrong_type():
    # PyPI micrograd computes (-1e-300) ** 0.5 in Python floats: a complex number, not a real one
    pytest.importorskip("micrograd")
    from gradcheck.campaign.edge_phase import edge_findings
    from gradcheck.campaign.validation import load_adapter

    findings = edge_findings(load_adapter("micrograd"), ["pow_const"])
    (complex_result,) = [f for f in findings if any("not a real number" in str(p) for p in f.problems)]
    assert (complex_result.kind, complex_result.ops) == (Kind.WRONG_TYPE, ("pow_const",))


@pytest.mark.usefixtures("shallow_chains")  # tensor chains 10^3 deep only
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_amax_that_doubles_a_tied_gradient_is_one_finding_against_amax(seed):
    # tensor inputs sometimes hold two equal entries; at such a tie central differences mean
    # nothing and the point is judged against torch alone (which shares the gradient evenly).
    # Whether the doubled partials read as a convention or a wrong gradient is the tie classifier's
    # call (`parity.classify`); here: one finding, against amax, in the gradient check.
    result = campaign(
        "AmaxTiesDoubled", seed=seed, tensor=True, isolation=False, ops=("amax", "add", "tanh", "mul")
    )
    finding = only_finding(result)
    assert (finding.ops, finding.check) == (("amax",), "gradient")
    assert finding.kind in (Kind.CONVENTION, Kind.WRONG_GRADIENT)
