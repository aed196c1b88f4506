"""Tiers: each finding's tier is decided once, from its kind, where its exception was raised and
the numbers at its failing point (`gradcheck.campaign.tiers`), one test per row of the table."""

import math

import pytest

from gradcheck.campaign import tiers
from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.tiers import EdgeFacts, decide_tier, edge_facts
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.regions import region_of
from gradcheck.parity.kinds import Kind

NO_EDGE = EdgeFacts(special_argument=False, torch_special=False)


@pytest.mark.parametrize(
    ("kind", "adapter_fault", "facts", "tier"),
    [
        (Kind.STRUCTURAL, False, None, "graph-code"),
        (Kind.NONDETERMINISTIC, False, NO_EDGE, "graph-code"),
        (Kind.CONVENTION, False, NO_EDGE, "convention"),
        (Kind.EXCEPTION, True, NO_EDGE, "adapter"),
        (Kind.EXCEPTION, False, EdgeFacts(True, False), "edge"),
        (Kind.NONFINITE, False, EdgeFacts(False, True), "edge"),
        (Kind.WRONG_GRADIENT, False, NO_EDGE, "bug"),
        (Kind.WRONG_TYPE, False, None, "bug"),
        (Kind.CRASH, False, NO_EDGE, "bug"),
        (Kind.TIMEOUT, False, NO_EDGE, "bug"),
        (Kind.CRASH, False, EdgeFacts(True, True), "bug"),
        (Kind.TIMEOUT, False, EdgeFacts(True, False), "bug"),
    ],
)
def test_the_tier_table(kind, adapter_fault, facts, tier):
    assert decide_tier(kind, adapter_fault, facts) == tier


def one_op(op: str, *values: float, **attrs: float) -> Graph:
    inputs = [Input(f"x{i}", v) for i, v in enumerate(values)]
    return Graph(inputs, [OpNode(op, tuple(range(len(values))), tuple(sorted(attrs.items())))], [len(values)])


@pytest.mark.parametrize(
    ("graph", "at_edge"),
    [
        (one_op("div", 1.0, 0.0), True),  # torch's value is inf
        (one_op("log", -1.0), True),  # torch's value is nan
        (one_op("sqrt", 0.0), True),  # torch's gradient is inf
        (one_op("tanh", math.inf), True),  # an argument is inf
        (one_op("mul", 5e-324, 2.0), True),  # an argument is subnormal
        (one_op("tanh", 1e300), True),  # an argument at float overflow
        (one_op("sigmoid", -710.0), True),  # torch's value underflows to 0 (exactly 4.5e-309)
        (one_op("pow_const", 0.0, exponent=0.0), False),  # a pole where torch gives 1 and slope 0
        (one_op("pow", 0.0, 0.0), False),  # torch 1, slopes 0 and -inf * 0 = 0: smooth enough nearby
        (one_op("atan2", 0.0, 0.0), True),  # torch's 0 is a convention: the slopes grow as 1 / r
        (one_op("tanh", 355.0), False),  # torch: 1.0 (its slope underflows, its value does not)
        (one_op("tanh", 1e-9), False),  # tiny normal magnitudes: lost accuracy is a bug
        (one_op("exp", 700.0), False),  # large, but the value (1e304) is finite
    ],
)
def test_an_edge_is_a_special_argument_or_a_special_answer_of_torch(graph, at_edge):
    assert edge_facts(graph.to_dict(), region_of(graph)).at_edge is at_edge


def finding(kind: Kind, graph: Graph, problem: str = "", region: str = "", **options) -> Finding:
    ops = tuple(graph.ops())
    return Finding(
        kind, ops, "gradient", graph.to_dict(), problems=sentences((problem,)), region=region, **options
    )


def test_a_finding_decides_its_tier_when_it_is_made_and_keeps_it_in_report_json():
    raised = "point 0 (x0=0.0): engine raised ZeroDivisionError: 0.0 cannot be raised to a negative power"
    bug = finding(Kind.EXCEPTION, one_op("pow_const", 0.0, exponent=0.0), raised, "pole")
    assert bug.tier == "bug" and bug.to_dict()["tier"] == "bug"
    assert Finding.from_dict(bug.to_dict()).tier == "bug"
    edge = finding(Kind.EXCEPTION, one_op("pow_const", 0.0, exponent=-1.0), raised, "pole")
    assert edge.tier == "edge"


def test_an_exception_raised_in_the_adapter_is_the_adapter_tier_with_a_fix():
    problem = (
        "point 0 (x0=[1.0]): adapter raised AttributeError: 'Tensor' object has no attribute "
        "'expand' (in gradcheck's default spelling)"
    )
    found = finding(Kind.EXCEPTION, one_op("neg", 1.0), problem)
    assert found.tier == "adapter"
    assert found.title == "neg — adapter fault (AttributeError)"
    assert found.fix == (
        "the adapter lists neg but the engine has no `.expand`: spell it in `apply` or leave it out of `ops`"
    )


def test_an_adapters_faults_are_one_finding_per_op_whatever_each_raised():
    attribute = "adapter raised AttributeError: no attribute 'x' (in gradcheck's default spelling)"
    key = "adapter raised KeyError: 'lib.functional' (in gradcheck's default spelling)"
    found = [
        finding(Kind.EXCEPTION, one_op("neg", 1.0), attribute, "ordinary"),
        finding(Kind.EXCEPTION, one_op("neg", 0.0), key, "ordinary"),
        finding(Kind.EXCEPTION, one_op("neg", math.inf), key, "nan/inf"),
    ]
    (merged,) = group_findings(found)
    assert (merged.tier, merged.graphs) == ("adapter", 3)


def test_a_bugs_rule_met_at_an_edge_value_joins_the_bug():
    # maximum's partials (0, 0) at a tie of 1e300s are the bug met at a tie of 1.0s
    wrong = "gradient of x0: engine 0.0, torch 0.5"
    at_one = finding(Kind.WRONG_GRADIENT, one_op("atan2", 1.0, 1.0), wrong, "tie")
    at_huge = finding(Kind.WRONG_GRADIENT, one_op("atan2", 1e300, 1e300), wrong, "tie")
    assert (at_one.tier, at_huge.tier) == ("bug", "edge")
    (merged,) = group_findings([at_huge, at_one])
    assert (merged.tier, merged.graphs, merged.graph) == ("bug", 2, at_one.graph)


def test_bugs_come_first_then_graph_code_then_the_rest():
    edge = finding(Kind.NONFINITE, one_op("div", 1.0, 0.0), "value: engine nan, torch inf", "pole", graphs=9)
    graph = one_op("add", 1.0, 2.0).to_dict()
    code = Finding(Kind.STRUCTURAL, (), "gradient", graph, where="a chain", phase="structure")
    bug = finding(Kind.WRONG_GRADIENT, one_op("tanh", 0.5), "gradient of x0: engine 1, torch 0.78")
    assert [f.tier for f in group_findings([edge, code, bug])] == ["bug", "graph-code", "edge"]
    # where torch alone is off (judged against the exact values) leads: the engine is right there
    assert tiers.TIERS[:3] == ("torch-off", "bug", "graph-code")


@pytest.mark.parametrize("kind", [Kind.CRASH, Kind.TIMEOUT])
@pytest.mark.parametrize("value", [0.5, math.inf])
def test_an_engine_that_ends_its_process_or_hangs_is_a_bug_at_any_input(kind, value):
    # no input excuses ending the process or never answering: torch answers at inf too
    graph = one_op("relu", value)
    death = "called sys.exit(0)" if kind is Kind.CRASH else "gave no answer within 3 s"
    problem = "the engine's worker process called sys.exit(0) while applying relu"
    finding = Finding(
        kind, ("relu",), "forward", graph.to_dict(), problems=sentences((problem,)), death=death
    )
    assert finding.tier == "bug"
    assert Finding.from_dict(finding.to_dict()).tier == "bug"
