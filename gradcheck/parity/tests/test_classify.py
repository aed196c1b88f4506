"""Each kind of difference is named as such: classify re-evaluates a failing check's instance."""

import numpy as np
import pytest

from gradcheck.engines import kind_engines
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.classify import classify_check, problem_text
from gradcheck.parity.compare import check_graph, kink_graphs
from gradcheck.parity.kinds import Kind


def one_op(op: str, x: float, **attrs) -> Graph:
    return Graph([Input("x0", x)], [OpNode(op, (0,), tuple(sorted(attrs.items())))], [1])


def in_graph(op: str, x: float) -> Graph:
    """op applied inside a small graph: y = op(x0) * x1 + x1."""
    nodes = [OpNode(op, (0,)), OpNode("mul", (2, 1)), OpNode("add", (3, 1))]
    return Graph([Input("x0", x), Input("x1", 1.5)], nodes, [4])


@pytest.mark.parametrize(
    ("engine", "graph", "kind", "check"),
    [
        (kind_engines.ReluTimesTwo(), in_graph("relu", 0.7), Kind.WRONG_GRADIENT, "gradient"),
        (
            kind_engines.TanhFirstOrderOnly(),
            in_graph("tanh", 0.4),
            Kind.WRONG_SECOND_DERIVATIVE,
            "second-derivative",
        ),
        (kind_engines.TanhValueOff(), in_graph("tanh", 0.4), Kind.WRONG_VALUE, "forward"),
        (kind_engines.SqrtNanSlope(), in_graph("sqrt", 2.0), Kind.NONFINITE, "gradient"),
        (kind_engines.ExpRaises(), in_graph("exp", 0.3), Kind.EXCEPTION, "gradient"),
    ],
    ids=lambda v: getattr(v, "name", None) or str(v),
)
def test_each_kind_of_difference_is_named(engine, graph, kind, check):
    result = check_graph(graph, engine)
    assert not result.passed
    difference = classify_check(result, engine)
    assert (difference.kind, difference.check) == (kind, check)


def test_a_slope_between_the_one_sided_derivatives_at_a_kink_is_a_convention():
    engine = kind_engines.ReluHalfAtZero()
    (at_zero, _) = [g for g in kink_graphs(["relu"])]
    result = check_graph(at_zero, engine, numeric=False, second_order=False)
    assert not result.passed
    assert classify_check(result, engine).kind is Kind.CONVENTION


def test_a_slope_outside_the_one_sided_derivatives_at_a_kink_is_a_wrong_gradient():
    engine = kind_engines.ReluTimesTwo()  # at 0.5 the slope 2 is outside [1, 1]: no kink there
    result = check_graph(one_op("relu", 0.5), engine, second_order=False)
    assert classify_check(result, engine).kind is Kind.WRONG_GRADIENT


def test_the_same_engine_away_from_the_kink_agrees():
    assert check_graph(in_graph("relu", 0.7), kind_engines.ReluHalfAtZero()).passed


def test_a_passing_check_has_nothing_to_classify():
    result = check_graph(one_op("tanh", 0.2), "minigrad")
    with pytest.raises(ValueError, match="no failing instance"):
        classify_check(result, "minigrad")


def test_problem_text_drops_the_point_prefix_only():
    assert (
        problem_text("point 2 (x0=0.5, x1=[1.0, 2.0]): gradient of x0: engine 1")
        == "gradient of x0: engine 1"
    )
    assert problem_text("second derivatives: entry 0") == "second derivatives: entry 0"


def test_nonfinite_means_a_different_pattern_of_nan_and_inf():
    from gradcheck.parity.classify import _same_pattern

    nan, inf = float("nan"), float("inf")
    assert _same_pattern(np.array([nan, inf, 1.0]), np.array([nan, inf, 2.0]))
    assert not _same_pattern(np.array([inf]), np.array([-inf]))
    assert not _same_pattern(np.array([nan]), np.array([1.0]))
