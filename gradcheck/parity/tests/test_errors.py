"""All points compared at once: the same figures, verdicts and words as comparing each point alone,
and a check stops at its most telling failing point (the furthest outside its allowance)."""

from __future__ import annotations

import numpy as np

from gradcheck.checker.tolerance import Tolerance
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.compare import check_graph
from gradcheck.parity.errors import FIGURES, PointErrors
from gradcheck.parity.numeric_reference import NumericResult
from gradcheck.parity.problem import What
from gradcheck.parity.result import GraphCheck
from gradcheck.parity.torch_reference import TorchResult


def references(rng: np.random.Generator, k: int) -> tuple[TorchResult, NumericResult]:
    grads = rng.normal(size=(3, k)) * 10.0 ** rng.integers(-9, 3, size=(3, k))
    torch = TorchResult(rng.normal(size=(2, k)), grads)
    numeric_grads = grads * (1 + 1e-7 * rng.normal(size=(3, k)))
    numbers = NumericResult(torch.forward, numeric_grads, 1e-9 * np.ones((3, k)), np.ones(k, bool))
    return torch, numbers


def test_columns_at_once_equal_each_column_alone():
    rng = np.random.default_rng(0)
    k = 40
    torch, numbers = references(rng, k)
    fwd = torch.forward * (1 + 1e-9 * (rng.random((2, k)) < 0.1))
    grads = torch.grads * (1 + 1e-6 * (rng.random((3, k)) < 0.1))
    fwd[0, 7], grads[1, 9], grads[2, 11] = np.nan, np.inf, np.nan
    policy, labels = Tolerance(1e-7, 1e-5), ["x0", "x1", "x2"]
    cols = np.arange(k)
    together = PointErrors(policy, fwd, grads, torch, numbers, cols)
    assert together.bad.any() and not together.bad.all()
    for c in range(k):
        alone = PointErrors(policy, fwd[:, c : c + 1], grads[:, c : c + 1], torch, numbers, cols[c : c + 1])
        assert alone.bad[0] == together.bad[c]
        assert list(map(str, alone.problems(0, labels))) == list(map(str, together.problems(c, labels)))
        assert bool(alone.problems(0, labels)) == alone.bad[0]
        for a, b in zip(alone.figures, together.figures):
            assert np.array_equal(a, b[c : c + 1], equal_nan=True)


def test_folding_keeps_the_largest_figure_of_the_first_points_and_skips_nan():
    rng = np.random.default_rng(1)
    torch, numbers = references(rng, 4)
    grads = torch.grads.copy()
    grads[:, 1] *= 1 + 1e-12
    grads[:, 3] *= 2.0  # after the points folded
    errors = PointErrors(Tolerance(1e-7, 1e-5), torch.forward, grads, torch, numbers, np.arange(4))
    errors.figures[0][2] = np.nan
    result = GraphCheck("e", (), 0, 0)
    errors.fold_into(result, 3)
    assert result.max_abs_err_torch == errors.figures[1][:3].max() > 0
    assert result.max_forward_err == 0.0  # the NaN at point 2 does not replace a number
    assert result.max_rel_err_torch < 1e-6  # point 3's error is not folded
    assert set(FIGURES) <= set(result.to_dict())


def engine_rule(x: float) -> float:
    """The engine's own code (not its adapter's): it raises at 2.0."""
    if x == 2.0:
        raise ArithmeticError("at two")
    return 1 + 1e-6 if x >= 1.0 else 1.0


class WrongFromThePoint(MinigradValue):
    """Correct at the first points, a gradient off by 1e-6 from input value 1.0 on, and raising
    at the input value 2.0."""

    def gradients(self, outputs, inputs, cotangent):
        grads = super().gradients(outputs, inputs, cotangent)
        factor = engine_rule(inputs[0].data)
        return [g * factor for g in grads]


def line_graph(points: list[float]) -> Graph:
    nodes = [OpNode("tanh", (0,)), OpNode("mul", (1, 0))]
    return Graph([Input("x0", points[0])], nodes, [2], [np.array(points)])


def test_the_check_stops_at_its_first_failing_point_with_its_figures_so_far():
    result = check_graph(line_graph([0.1, 0.3, 1.0, 2.0, 1.5]), WrongFromThePoint(), second_order=False)
    assert not result.passed and result.failing_point == 2 and result.points_checked == 3
    assert str(result.problems[0]).startswith("point 2 (x0=1.0): gradient of x0")
    assert result.failure is not None and result.failure.inputs[0].value == 1.0


def test_an_engine_raising_after_good_points_fails_at_that_point():
    result = check_graph(line_graph([0.1, 0.3, 2.0, 1.0]), WrongFromThePoint(), second_order=False)
    assert not result.passed and result.failing_point == 2 and result.points_checked == 3
    assert "engine raised ArithmeticError: at two" in str(result.problems[0])
    assert 0 < result.max_abs_err_numeric < 1e-8  # the good points' figures are kept


class OffMostAtOnePointFive(MinigradValue):
    """A gradient off by 1e-6 relative from input value 1.0 on, and by 10% at 1.5."""

    def gradients(self, outputs, inputs, cotangent):
        grads = super().gradients(outputs, inputs, cotangent)
        x = inputs[0].data
        factor = 1.1 if x == 1.5 else 1 + 1e-6 if x >= 1.0 else 1.0
        return [g * factor for g in grads]


def test_the_check_reports_its_failing_point_furthest_outside_its_allowance():
    result = check_graph(line_graph([0.1, 1.0, 1.5, 1.2]), OffMostAtOnePointFive(), second_order=False)
    assert not result.passed and result.failing_point == 2 and result.points_checked == 3
    assert str(result.problems[0]).startswith("point 2 (x0=1.5): gradient of x0")
    weak = check_graph(line_graph([1.0]), OffMostAtOnePointFive(), second_order=False)
    assert result.failing_excess > 1e4 * weak.failing_excess > 1e4, "10% off, not 1e-6"


def test_an_engine_that_raises_fails_infinitely_far_outside_any_allowance():
    result = check_graph(line_graph([0.1, 2.0]), WrongFromThePoint(), second_order=False)
    assert result.failing_excess == float("inf")
    assert check_graph(line_graph([0.1, 0.3]), WrongFromThePoint()).failing_excess is None


def test_a_nan_output_is_named_by_its_own_index():
    # two outputs, the second nan where torch has a number: the message names output 1
    torch = TorchResult(np.array([[1.0], [2.0]]), np.array([[1.0]]))
    fwd = np.array([[1.0], [np.nan]])
    errors = PointErrors(Tolerance(1e-7, 1e-5), fwd, np.array([[1.0]]), torch, None, np.arange(1))
    (problem,) = errors.problems(0, ["x0"])
    assert (problem.what, problem.output) == (What.FORWARD, 1)
    assert str(problem).startswith("forward: output 1 is nan but torch gives 2.0")
