"""Where torch's derivative is not the math, minigrad's is: checked against exact values (mpmath).

Two of torch's faults (docs/accuracy.md): pow's d/da masks every exponent b == 0, which also kills
its derivative along b (d²/da db is 0 one way and 1/a the other), and atan2's gradient squares
its inputs (0 once y² + x² overflows, 0 or nan once it underflows). minigrad keeps the mask only
where b * a ** (b - 1) is not a number and scales atan2's inputs by a power of 2 first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest

import minigrad
from minigrad import Value

mpmath.mp.prec = 200
ULPS = 4


def rounded(x: Any, dtype: type = np.float64) -> float:
    """The exact value x rounded to dtype (inf past its range, as a correct float computation gives)."""
    return float(dtype(float(x)))


def close(mine: float, exact: float, dtype: type = np.float64) -> bool:
    """Within ULPS of the exact value rounded to dtype (equal when that is 0 or infinite)."""
    if math.isinf(exact) or exact == 0:
        return mine == exact
    return abs(mine - exact) <= ULPS * float(np.spacing(dtype(abs(exact))))


def value_hessian(fn: Callable[[Value, Value], Value], a: float, b: float) -> list[list[float]]:
    """[[d²/da², d²/da db], [d²/db da, d²/db²]] of fn by minigrad's Value: row i differentiates d/dx_i."""
    xs = [Value(a), Value(b)]
    first = minigrad.grad(fn(*xs), xs, create_graph=True)
    return [list(minigrad.grad(g, xs, allow_unused=True, materialize_grads=True)) for g in first]


def tensor_gradients(fn: Callable[[Any, Any], Any], a: float, b: float, dtype: type) -> list[float]:
    xs = [minigrad.tensor(np.array([v], dtype=dtype), requires_grad=True) for v in (a, b)]
    return [g.item() for g in minigrad.grad(fn(*xs).sum(), xs)]


def tensor_hessian(fn: Callable[[Any, Any], Any], a: float, b: float) -> list[list[float]]:
    xs = [minigrad.tensor(np.array([v]), requires_grad=True) for v in (a, b)]
    first = minigrad.grad(fn(*xs).sum(), xs, create_graph=True)
    return [
        [h.item() for h in minigrad.grad(g.sum(), xs, allow_unused=True, materialize_grads=True)]
        for g in first
    ]


def exact_pow_hessian(a: float, b: float) -> list[list[float]]:
    a_, b_ = mpmath.mpf(a), mpmath.mpf(b)
    mixed = a_ ** (b_ - 1) * (1 + b_ * mpmath.log(a_))
    return [
        [rounded(b_ * (b_ - 1) * a_ ** (b_ - 2)), rounded(mixed)],
        [rounded(mixed), rounded(a_**b_ * mpmath.log(a_) ** 2)],
    ]


POW_POINTS = [(a, b) for a in (2.0, 0.3, 1.0, 7.5, 1e-100) for b in (0.0, -0.0)]


@pytest.mark.parametrize(("a", "b"), POW_POINTS, ids=str)
@pytest.mark.parametrize("hessian", [value_hessian, tensor_hessian], ids=["Value", "Tensor"])
def test_pows_hessian_at_exponent_zero_is_symmetric_and_exact(hessian: Any, a: float, b: float) -> None:
    mine = hessian(lambda x, y: x**y, a, b)
    exact = exact_pow_hessian(a, b)
    assert mine[0][1] == mine[1][0], f"pow({a}, {b}): d²/da db {mine[0][1]} but d²/db da {mine[1][0]}"
    for i in range(2):
        for j in range(2):
            assert close(mine[i][j], exact[i][j]), (
                f"pow({a}, {b}) Hessian[{i}][{j}]: {mine[i][j]}, exact {exact[i][j]}"
            )


def exact_atan2_gradient(y: float, x: float, dtype: type) -> list[float]:
    y_, x_ = mpmath.mpf(y), mpmath.mpf(x)
    norm = y_ * y_ + x_ * x_
    return [rounded(x_ / norm, dtype), rounded(-y_ / norm, dtype)]


ATAN2_POINTS = {
    np.float64: [
        (1e155, 1e155),
        (3e200, -1e180),
        (-1e300, 2e299),
        (1e-170, 1e-170),
        (-2e-200, 1e-200),
        (0.0, 5e-324),
        (5e-324, 0.0),
        (1.5, -0.25),
    ],
    np.float32: [(1e20, 1e20), (-3e37, 1e36), (1e-25, 3e-25), (1e-40, 0.0), (1.5, -0.25)],
}


@pytest.mark.parametrize(
    ("dtype", "y", "x"),
    [(dtype, y, x) for dtype, points in ATAN2_POINTS.items() for y, x in points],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_atan2s_gradient_is_exact_past_overflow_and_underflow_of_its_squares(
    dtype: type, y: float, x: float
) -> None:
    exact = exact_atan2_gradient(float(dtype(y)), float(dtype(x)), dtype)
    with np.errstate(all="ignore"):
        mine = tensor_gradients(lambda p, q: p.atan2(q), y, x, dtype)
    if dtype is np.float64:
        values = [Value(y), Value(x)]
        values[0].atan2(values[1]).backward()
        assert [v.grad for v in values] == mine, "Value and Tensor differ"
    for i in range(2):
        assert close(mine[i], exact[i], dtype), (
            f"atan2({y}, {x}) gradient {i} in {dtype.__name__}: {mine[i]}, exact {exact[i]}"
        )


@pytest.mark.parametrize("hessian", [value_hessian, tensor_hessian], ids=["Value", "Tensor"])
@pytest.mark.parametrize(("y", "x"), [(1e100, 1e100), (1e-100, -3e-100), (2.0, 0.5)], ids=str)
def test_atan2s_hessian_is_exact_where_its_squares_squared_leave_the_range(
    hessian: Any, y: float, x: float
) -> None:
    y_, x_ = mpmath.mpf(y), mpmath.mpf(x)
    norm2 = (y_ * y_ + x_ * x_) ** 2
    exact = [
        [rounded(-2 * x_ * y_ / norm2), rounded((y_ * y_ - x_ * x_) / norm2)],
        [rounded((y_ * y_ - x_ * x_) / norm2), rounded(2 * x_ * y_ / norm2)],
    ]
    with np.errstate(all="ignore"):
        mine = hessian(lambda p, q: p.atan2(q), y, x)
    for i in range(2):
        for j in range(2):
            assert close(mine[i][j], exact[i][j]), (
                f"atan2({y}, {x}) Hessian[{i}][{j}]: {mine[i][j]}, exact {exact[i][j]}"
            )


def test_pows_slope_along_its_base_where_a_to_the_b_minus_1_alone_overflows_is_the_exact_one():
    # d/da a ** b = b * a ** (b - 1): at a = b = 5e-324 the power overflows, the slope is 1
    a, b = Value(5e-324), Value(5e-324)
    (a**b).backward()
    assert a.grad == 1.0
    a, b = Value(2.0), Value(3.0)
    (a**b).backward()
    assert a.grad == 12.0, "elsewhere the usual b * a ** (b - 1)"


@pytest.mark.parametrize("exponent", [np.asarray(0), np.asarray([0, 0, 0, 0])], ids=["0-d", "1-d"])
def test_a_tensor_to_an_integer_array_power_of_0_has_second_derivatives_0_even_at_base_0(exponent) -> None:
    # x ** 0 is 1: its slope is dropped at x == 0 and inf, and the dropped slope's own rule (0 × inf
    # at x == 0) must not reach the second derivative, as it does in torch's x ** tensor(0)
    x = minigrad.Tensor([0.0, -0.0, 0.5, math.inf], requires_grad=True, dtype=minigrad.float64)
    (slope,) = minigrad.grad([x**exponent], [x], [minigrad.Tensor(np.ones(4))], create_graph=True)
    (second,) = minigrad.grad(slope.sum(), [x], allow_unused=True)
    assert slope.data.tolist() == [0.0] * 4
    assert second is not None and second.data.tolist() == [0.0] * 4
