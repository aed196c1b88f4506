"""Judged against the exact values (`check_graph(..., reference="exact")`), torch is judged beside
the engine: each entry off its allowance says who is off (the engine alone, torch alone, or both),
and an engine that is right where torch is not passes, torch's answer kept apart as off."""

import math

import numpy as np
import pytest

from gradcheck.campaign import tiers
from gradcheck.campaign.edge_phase import findings_of
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.edge_values import describe
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.classify import classify_check
from gradcheck.parity.compare import check_graph
from gradcheck.parity.edge_check import check_edge, check_edges, edge_graph, has_real_derivative
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import FORWARD_MODE, Off, What
from gradcheck.testing.accurate_engines import KeptPowHessian, ScaledAtan2, atan2_slopes
from gradcheck.testing.kind_engines import TanhValueOff
from gradcheck.testing.reordered_engines import DivisionByReciprocal

# atan2(y, x) where x * x + y * y overflows: torch's gradient is 0, the exact one 1 / (2 * 1e155)
LARGE = 1e155
OVERFLOWING_ATAN2 = Graph([Input("y", LARGE), Input("x", LARGE)], [OpNode("atan2", (0, 1))], [2])
# a ** b at b = 0: torch's second derivative d²/da db is 0 one way, 1 / a the other
POW_AT_EXPONENT_ZERO = Graph([Input("a", 2.0), Input("b", 0.0)], [OpNode("pow", (0, 1))], [2])


def test_the_scaled_atan2_slopes_are_the_exact_ones_where_the_squares_overflow():
    dy, dx = atan2_slopes(LARGE, LARGE)
    assert math.isclose(dy, 1 / (2 * LARGE), rel_tol=1e-15) and math.isclose(
        dx, -1 / (2 * LARGE), rel_tol=1e-15
    )
    assert atan2_slopes(3.0, 4.0) == pytest.approx((4 / 25, -3 / 25), rel=1e-15)
    assert [math.copysign(1, d) for d in atan2_slopes(0.0, 0.0)] == [1, -1], "torch's signed 0 at the origin"


def test_an_engine_more_accurate_than_torch_passes_and_torch_is_reported_off():
    check = check_graph(OVERFLOWING_ATAN2, ScaledAtan2(), reference="exact", seed=0)
    assert check.passed and not check.problems
    assert [(p.what, p.input, p.off) for p in check.torch_off] == [
        (What.GRADIENT, "y", Off.TORCH),
        (What.GRADIENT, "x", Off.TORCH),
    ]
    dy = check.torch_off[0]
    assert dy.reference == 0.0, "torch's gradient: 0 once x * x + y * y overflows"
    at = check.torch_off_instance
    assert at is not None and at.input_values(0) == [LARGE, LARGE] and at.cotangent is not None
    assert math.isclose(dy.exact, at.cotangent[0] / (2 * LARGE), rel_tol=1e-15), (
        "the cotangent-weighted gradient"
    )
    assert abs(dy.engine - dy.exact) <= dy.allowed < dy.error
    assert "torch is off: torch 0.0" in str(dy) and "the engine is within its allowance" in str(dy)
    assert check_graph(OVERFLOWING_ATAN2, ScaledAtan2(), seed=0).passed, "against torch: no bug either"


@pytest.mark.parametrize("reference", ["torch", "exact"])
def test_an_engine_right_about_a_second_derivative_torch_masks_passes_and_torch_is_reported_off(reference):
    # against torch the right H·v differs from torch's masked one; the exact value settles it
    check = check_graph(
        POW_AT_EXPONENT_ZERO, KeptPowHessian(), second_order=True, reference=reference, seed=0
    )
    assert check.passed, [str(p) for p in check.problems]
    (off,) = check.torch_off
    assert (off.what, off.index, off.off) == (What.HESSIAN, 1, Off.TORCH)
    assert math.isclose(off.engine, off.exact, rel_tol=1e-12) and off.error > off.allowed


# torch's second derivatives of a ** b at base 0 are nan (its masked d/db differentiated again)
POW_AT_BASE_ZERO = Graph([Input("a", 0.0), Input("b", 2.0)], [OpNode("pow", (0, 1))], [2])


@pytest.mark.parametrize("engine", ["minigrad", KeptPowHessian()], ids=["minigrad", "kept-pow-hessian"])
@pytest.mark.parametrize("graph", [POW_AT_EXPONENT_ZERO, POW_AT_BASE_ZERO], ids=["exponent-0", "base-0"])
def test_where_torchs_second_derivatives_of_pow_are_off_the_default_reference_says_torch_is_off(
    engine, graph
):
    check = check_graph(graph, load_engine(engine), second_order=True, seed=0)
    assert check.passed, [str(p) for p in check.problems]
    assert check.torch_off and {(p.what, p.off) for p in check.torch_off} == {(What.HESSIAN, Off.TORCH)}
    for p in check.torch_off:
        assert p.engine == pytest.approx(p.exact, rel=1e-12) and not p.error <= p.allowed, str(p)


def test_an_engine_off_where_torch_is_off_too_is_judged_by_the_exact_values_under_the_default_reference():
    pytest.importorskip("autograd")  # HIPS autograd's d/da of a ** b at b = 0 is g * b * a: d²/da db = a
    check = check_graph(POW_AT_EXPONENT_ZERO, load_engine("autograd"), second_order=True, seed=0)
    assert not check.passed and not check.torch_off
    (wrong,) = [p for p in check.problems if p.what is What.HESSIAN]
    assert (wrong.what, wrong.index, wrong.off) == (What.HESSIAN, 1, Off.BOTH)
    assert "torch is off too" in str(wrong)
    # forward over reverse differentiates the same masked d/da along b: its wrong a lands in entry 0
    (other,) = [p for p in check.problems if p.what is What.TRANSFORM]
    assert other.index == 0 and abs(other.engine - other.exact) > 0.1
    # one mistake: its kind is the engine's own second derivatives, not the other order's
    assert classify_check(check, load_engine("autograd")).kind is Kind.WRONG_SECOND_DERIVATIVE


def test_the_engine_alone_is_off_where_torch_is_within_its_allowance():
    check = check_graph(
        Graph([Input("x0", 0.4), Input("x1", 1.5)], [OpNode("tanh", (0,)), OpNode("mul", (2, 1))], [3]),
        TanhValueOff(),
        reference="exact",
        seed=0,
    )
    assert not check.passed and not check.torch_off
    judged = [p for p in check.problems if p.off is not None]
    assert judged and {p.off for p in judged} == {Off.ENGINE}
    assert all(p.reference == pytest.approx(p.exact, rel=1e-14) for p in judged), (
        "torch agrees with the exact"
    )
    assert "torch is within its allowance" in str(judged[0])


def test_an_engine_off_where_torch_is_off_too_says_both():
    pytest.importorskip("autograd")  # its atan2 squares x and y: x*x + y*y overflows as torch's does
    check = check_graph(OVERFLOWING_ATAN2, load_engine("autograd"), reference="exact", seed=0)
    assert not check.passed and not check.torch_off
    gradient = [p for p in check.problems if p.what is not What.TRANSFORM]
    assert [(p.input, p.off) for p in gradient] == [("y", Off.BOTH), ("x", Off.BOTH)]
    # its forward mode overflows alike, but agrees with its reverse mode: the gradient's problem;
    # its forward over reverse divides inf by inf: nan, where its reverse over reverse gives 0
    assert all(math.isnan(p.engine) for p in check.problems if p.what is What.TRANSFORM)
    assert "torch is off too" in str(check.problems[0])


def test_torch_itself_can_be_the_engine_under_test():
    check = check_graph(OVERFLOWING_ATAN2, load_engine("torch"), reference="exact", seed=0)
    assert not check.passed and [p.engine for p in check.problems] == [0.0, -0.0]
    # torch's forward mode squares x and y as its backward does: the two modes agree, and the
    # difference is the gradient's alone
    assert not [p for p in check.problems if p.check == FORWARD_MODE]
    for seed in range(3):
        graph = random_graph(np.random.default_rng(seed), tensor=True, points=4)
        for dtype in ("float64", "float32"):
            judged = check_graph(graph, load_engine("torch"), reference="exact", dtype=dtype, seed=seed)
            assert judged.passed, (seed, dtype, [str(p) for p in judged.problems])


def test_a_reference_that_is_not_torch_or_exact_is_refused_by_name():
    with pytest.raises(ValueError, match=r"reference must be one of \['torch', 'exact'\], got 'mpmath'"):
        check_graph(OVERFLOWING_ATAN2, load_engine("minigrad"), reference="mpmath")


def test_an_edge_case_where_the_engine_is_the_exact_answer_and_torch_is_not_is_torchs():
    # atan2(5e-324, 0): torch's d/dx is -0.0 (its y² + x² underflows to 0), the exact -1 / y is -inf
    (problem,) = [p for p in check_edges(load_engine("minigrad"), ["atan2"]) if p.where == "at (5e-324, 0.0)"]
    assert problem.problem.off is Off.TORCH, problem.message
    assert (problem.problem.engine, problem.problem.reference, problem.problem.exact) == (
        -math.inf,
        -0.0,
        -math.inf,
    )
    # two findings, both torch's: at a pole (the squares underflow) and at an overflow point
    findings = findings_of(check_edges(load_engine("minigrad"), ["atan2"]), load_engine("minigrad"))
    assert len(findings) == 2
    for finding in findings:
        assert finding.tier == tiers.TORCH_OFF and not finding.is_failure(), finding.title


@pytest.mark.parametrize(
    "op, args",
    [
        ("pow", (-1.0, 0.5)),  # a negative base to a fractional power: no real value
        ("pow", (-1.0, 0.0)),  # real at integer exponents alone: no rate along the exponent
        ("pow", (0.0, -1.0)),  # a pole
        ("atan2", (0.0, 0.0)),  # the origin: torch's 0 is a convention, not torch off
        ("sqrt", (-0.0,)),  # sqrt's slope at 0 is infinite: the sign of its inf is a choice
    ],
)
def test_no_edge_case_without_a_real_derivative_is_judged_by_the_exact_value(op, args):
    graph = edge_graph(op, args, {})
    assert not has_real_derivative(graph)
    off = [p for p in check_edges(DivisionByReciprocal(), [op]) if p.problem.off is Off.TORCH]
    assert all(p.where != graph_where(graph) for p in off), [p.message for p in off]


def test_a_finite_derivative_that_overflows_float64_has_a_real_value_to_judge_by():
    # atan2's d/dy at (0, 5e-324) is 1 / 5e-324 = 2e323: finite, past float64's range
    assert has_real_derivative(edge_graph("atan2", (0.0, 5e-324), {}))
    assert has_real_derivative(edge_graph("exp", (1000.0,), {}))


def graph_where(graph: Graph) -> str:
    """The edge case's place in words, as EdgeProblem.where says it."""
    return describe(tuple(float(i.value) for i in graph.inputs), graph.nodes[0].attr)


def test_torchs_zero_where_the_exact_slope_is_a_float64_number_is_torch_off_under_either_reference():
    # atan2 at (1e300, 2.0): torch's y² + x² overflows, so its d/dx is -0.0; the exact -1e-300 is
    # a normal float64, within the edge tolerance's absolute part of 0, yet torch is off it wholly
    for reference in ("torch", "exact"):
        found = check_edges(load_engine("minigrad"), ["atan2"], reference)
        (problem,) = [p for p in found if p.where == "at (1e+300, 2.0)"]
        assert problem.problem.off is Off.TORCH and problem.problem.exact == -1e-300, problem.message


def test_under_the_exact_reference_an_engine_that_agrees_with_torch_off_the_exact_slope_is_off_with_it():
    # pow's d/da at (5e-324, 5e-324): b * a ** (b - 1) overflows to inf in torch and in an engine
    # that writes it so (DivisionByReciprocal's pow is torch's rule); the exact slope is 1
    graph = edge_graph("pow", (5e-324, 5e-324), {}, reference="exact")
    (problem,) = check_edge(DivisionByReciprocal(), graph)
    assert (problem.problem.off, problem.problem.engine, problem.problem.exact) == (Off.BOTH, math.inf, 1.0)
    assert "torch is off too" in problem.message
    assert check_edge(DivisionByReciprocal(), edge_graph("pow", (5e-324, 5e-324), {})) == []
    assert check_edge(load_engine("minigrad"), graph)[0].problem.off is Off.TORCH


def test_under_the_exact_reference_a_case_without_an_exact_value_says_so_and_is_judged_against_torch():
    graph = edge_graph("atan2", (0.0, 0.0), {}, reference="exact")
    (problem,) = check_edge(DivisionByReciprocal(), graph)
    assert problem.problem.off is None and "no exact value here" in problem.message
