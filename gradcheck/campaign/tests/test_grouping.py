"""A campaign reports distinct problems: one finding per bug, blamed on its op, with its kind."""

import math

import pytest

from gradcheck.campaign import Settings, load_adapter, real_backend, run_campaign, tiers
from gradcheck.campaign.blame import blame_nodes
from gradcheck.campaign.edge_phase import edge_findings
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.regions import KINK, ORDINARY, TINY
from gradcheck.parity.classify import Difference
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What
from gradcheck.testing import kind_engines

RELU_TWO = "gradcheck.testing.kind_engines:ReluTimesTwo"


@pytest.fixture(scope="module")
def relu_two_campaign():
    settings = Settings(engine=RELU_TWO, graphs=120, seed=0, ops=("relu", "add", "mul"))
    return run_campaign(settings, real_backend())


def test_one_wrong_relu_derivative_is_exactly_one_finding_blamed_on_relu(relu_two_campaign):
    result = relu_two_campaign
    assert len(result.failures) > 50
    (finding,) = result.findings
    assert finding.kind is Kind.WRONG_GRADIENT and finding.ops == ("relu",) and finding.check == "gradient"
    assert set(finding.graph_indices) == {r.index for r in result.failures}, "every failing graph is covered"
    assert [n["op"] for n in finding.graph["nodes"]] == ["relu"]


def test_the_per_op_table_counts_failures_only_against_the_finding_ops(relu_two_campaign):
    ops = relu_two_campaign.ops
    assert ops["add"].failures == 0 and ops["mul"].failures == 0
    assert ops["relu"].failures == len(relu_two_campaign.failures)
    assert ops["add"].graphs > 0 and ops["mul"].graphs > 0


def test_graphs_a_node_failing_alone_explains_are_accounted_to_it_without_shrinking(relu_two_campaign):
    failures = relu_two_campaign.failures
    assert all(r.failure.shrunk_graph is None for r in failures), "relu fails alone in each"
    assert all(r.failure.finding.ops == ("relu",) for r in failures)


def test_blame_finds_the_op_that_fails_alone_inside_a_bigger_graph():
    nodes = [OpNode("mul", (0, 1)), OpNode("relu", (2,)), OpNode("add", (3, 0))]
    graph = Graph([Input("x0", 0.9), Input("x1", 1.1)], nodes, [4], cotangent=[1.0])
    check = blame_nodes(graph, kind_engines.ReluTimesTwo())
    assert check is not None and check.failure.ops() == ["relu"]
    assert check.failure.inputs[0].value == pytest.approx(0.99), "at the value the node saw"
    assert blame_nodes(graph, "minigrad") is None


@pytest.mark.parametrize(("conventions", "passed"), [("torch", False), ("subgradient", True)])
def test_a_convention_at_a_kink_fails_under_torch_and_is_a_note_under_subgradient(conventions, passed):
    settings = Settings(
        engine="gradcheck.testing.kind_engines:ReluHalfAtZero",
        graphs=20,
        ops=("relu", "mul"),
        conventions=conventions,
    )
    result = run_campaign(settings, real_backend())
    (finding,) = result.findings
    assert finding.kind is Kind.CONVENTION and finding.phase == "isolation" and finding.where == "at 0"
    assert result.passed is passed


def test_without_the_isolation_pass_a_kink_convention_goes_unseen():
    settings = Settings(
        engine="gradcheck.testing.kind_engines:ReluHalfAtZero",
        graphs=20,
        ops=("relu", "mul"),
        isolation=False,
    )
    result = run_campaign(settings, real_backend())
    assert result.findings == [] and result.passed and result.isolation_seconds < 0.1


def test_a_bug_met_by_the_edge_phase_and_by_random_graphs_is_one_finding():
    # PyPI micrograd differentiates x ** 0 as 0 * x ** -1: ZeroDivisionError at x = 0 in backward.
    # The edge table meets it at x = +-0 and random graphs where a relu gives 0: the same check.
    settings = Settings(engine="micrograd", graphs=60, seed=1, ops=("relu", "pow_const", "mul"))
    result = run_campaign(settings, real_backend())
    edges = edge_findings(load_adapter("micrograd"), ["pow_const"])
    assert result.failures and any(f.problems and "ZeroDivisionError" in str(f.problems[0]) for f in edges)
    findings = group_findings([*result.findings, *edges])
    raising = [f for f in findings if any("ZeroDivisionError" in str(p) for p in f.problems)]
    (zero_power,) = [f for f in raising if f.tier == "bug"]
    (negative_power,) = [f for f in raising if f.tier == "edge"]
    assert zero_power.variant == ("to the power 0",) and negative_power.variant == ("to a negative power",)
    assert not negative_power.graph_indices, "x ** -1 at 0: torch's inf, an edge met in the edge table"
    assert zero_power.kind is Kind.EXCEPTION and zero_power.ops == ("pow_const",)
    assert zero_power.check == "gradient", "micrograd's forward computes 0 ** 0 = 1; its backward raises"
    assert set(zero_power.graph_indices) == {r.index for r in result.failures}
    at_pole = [f for f in edges if f.kind is Kind.EXCEPTION and f.region == "pole"]
    (zero_edges,) = [f for f in at_pole if f.variant == ("to the power 0",)]
    assert zero_edges.raised == "OverflowError/ZeroDivisionError", "0 and 5e-324: one rule at one pole"
    assert zero_power.graphs >= zero_edges.graphs + len(result.failures), "edge cases and graphs together"
    (overflow,) = [f for f in findings if f.kind is Kind.EXCEPTION and f.region == "overflow point"]
    assert "1e+300" in str(overflow.problems[0]), "1e300 ** 2 overflows: another region, another finding"


def test_a_graph_raising_on_a_value_that_is_not_a_number_is_blamed_on_the_op_that_made_it():
    nodes = [OpNode("div", (0,), consts=(Constant(0, 1.0),)), OpNode("relu", (1,))]
    graph = Graph([Input("x0", -13.0)], nodes, [2], cotangent=[-1.0])
    adapter = load_adapter("gradcheck.testing.triage_engines:ReciprocalPowerOff")
    raised = Difference(Kind.EXCEPTION, "gradient")  # the relu compares the complex 1.0 / -13.0 with 0
    blamed = blame_nodes(graph, adapter, cause=raised)
    assert blamed is not None and blamed.failure.ops() == ["div"]
    assert blamed.difference == Difference(Kind.WRONG_TYPE, "forward")


def _finding(kind, ops, check, *, variant=(), region=ORDINARY, tier=tiers.BUG, excess=1.0, answer=None):
    graph = {"inputs": [{"name": "x0", "value": 0.5}], "nodes": [{"op": ops[0], "args": [0]}], "outputs": [1]}
    not_a_number = Problem(
        What.NOT_A_NUMBER,
        check,
        output=0,
        answer=f"{type(answer).__name__} {answer!r}",
        answer_type=type(answer).__name__,
    )
    problems = (not_a_number,) if answer is not None else ()
    return Finding(
        kind, ops, check, graph, region=region, tier=tier, variant=variant, excess=excess, problems=problems
    )


def test_an_ops_wrong_numbers_at_ordinary_inputs_are_one_finding_and_the_rest_stays_apart():
    left = ("with a number on the left",)
    div = [
        _finding(Kind.WRONG_VALUE, ("div",), "forward", variant=left, excess=1e12),
        _finding(Kind.WRONG_TYPE, ("div",), "forward", variant=left, excess=math.inf, answer=1 + 2j),
        _finding(Kind.WRONG_GRADIENT, ("div",), "gradient", variant=left, excess=1e11),
    ]
    apart = [
        _finding(Kind.WRONG_GRADIENT, ("mul",), "gradient"),  # another op
        _finding(Kind.EXCEPTION, ("div",), "gradient", variant=left),  # raising: another fix
        _finding(Kind.NONFINITE, ("div",), "gradient", variant=left, region=TINY),  # at tiny inputs only
        _finding(Kind.CONVENTION, ("relu",), "gradient", region=KINK, tier=tiers.CONVENTION),
        _finding(Kind.NONFINITE, ("div",), "forward", variant=left, tier=tiers.EDGE),  # torch's inf there
    ]
    grouped = group_findings([*div, *apart])
    assert len(grouped) == 1 + len(apart)
    (merged,) = [f for f in grouped if f.graphs == 3]
    assert merged.title == "div with a number on the left — wrong value and gradient; not a number (complex)"
    assert merged.kind is Kind.WRONG_VALUE, "a plainly wrong number shows it, not the complex one"
    assert merged.tier == tiers.BUG
    assert sorted(f.title for f in grouped if f is not merged) == sorted(f.title for f in apart)


def test_a_finding_is_shown_at_inputs_near_1_rather_than_where_its_excess_is_largest():
    def at(x1, excess):
        inputs = [{"name": "x0", "value": 0.22}, {"name": "x1", "value": x1}]
        graph = {"inputs": inputs, "nodes": [{"op": "div", "args": [0, 1]}], "outputs": [2]}
        return Finding(Kind.WRONG_GRADIENT, ("div",), "gradient", graph, region=ORDINARY, excess=excess)

    # the gradient doubled reads 4.8e-09 against 2.4e-09 at x1 = -8333, 0.129 against 0.065 at -1.52
    (shown,) = group_findings([at(-8333.0, 1.4e15), at(-1.52, 1.0e15)])
    assert shown.graph["inputs"][1]["value"] == -1.52 and shown.graphs == 2


def test_a_number_the_class_refuses_comes_before_a_bug_that_covers_more_graphs():
    def bug(ops, phase, graphs):
        nodes = [{"op": ops[0], "args": [0]}]
        graph = {"inputs": [{"name": "x0", "value": 0.5}], "nodes": nodes, "outputs": [1]}
        return Finding(Kind.EXCEPTION, ops, "gradient", graph, phase=phase, graphs=graphs, tier=tiers.BUG)

    at_zero, refused = bug(("pow_const",), "isolation", 9), bug(("sub",), "inspection", 1)
    assert [f.ops for f in group_findings([at_zero, refused])] == [("sub",), ("pow_const",)]
    assert [f.ops for f in group_findings([bug(("exp",), "random", 2), at_zero])] == [
        ("pow_const",),
        ("exp",),
    ]
