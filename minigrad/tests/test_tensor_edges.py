"""Kinks, signed zeros, infinities and nan: minigrad's Tensor gives torch's values, gradients and
second derivatives (float64 and float32), as its scalar Value does (test_value_edges.py).

Each case runs one expression on 1-element minigrad and torch tensors; the second derivative is
the gradient of the first (built with create_graph=True), 0 where the first has no graph.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan
DTYPES = {np.float64: torch.float64, np.float32: torch.float32}


def unary(name: str, fn: Any, points: list[float]) -> list[Any]:
    return [pytest.param(fn, (x,), id=f"{name}({x})") for x in points]


def binary(name: str, fn: Any, pairs: list[tuple[float, float]]) -> list[Any]:
    return [pytest.param(fn, pair, id=f"{name}{pair}") for pair in pairs]


def power(c: float) -> Any:
    return lambda x: x**c


CASES = [
    *unary("relu", lambda x: x.relu(), [NAN, 0.0, -0.0, 1.0, -1.0]),
    *unary("abs", lambda x: x.abs(), [NAN, 0.0, -0.0, INF, -INF]),
    *(
        pytest.param(power(c), (x,), id=f"({x})**{c}")
        for c in (0.0, 0.5, -0.5, 1.5, -1.5, 2.0, -1.0)
        for x in (0.0, -0.0, 1e-160, -INF, INF, NAN, -2.0)
    ),
    *binary(
        "maximum", lambda x, y: x.maximum(y), [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (NAN, -INF), (2.0, 2.0)]
    ),
    *binary(
        "minimum", lambda x, y: x.minimum(y), [(NAN, 1.0), (1.0, NAN), (NAN, NAN), (NAN, INF), (2.0, 2.0)]
    ),
    # a² + b² == 0: both gradients 0, signed as torch's g * b * 0 and g * -a * 0
    *binary(
        "atan2",
        lambda y, x: y.atan2(x),
        [
            *((y, x) for y in (0.0, -0.0) for x in (0.0, -0.0)),
            # y² + x² underflowing: torch's gradient 0, minigrad's exact (test_exact_where_torch_is_not.py)
            *[(0.0, INF), (1.0, INF), (INF, INF), (NAN, 0.0)],
        ],
    ),
    # a tensor exponent: torch's tensor kernel (std::pow, not sqrt) and its where(b == 0, 0, ...) rule
    # at 0 ** 0 (at a != 0, b == 0 minigrad's Hessian is the exact one: test_exact_where_torch_is_not.py)
    *binary("x**y", lambda x, y: x**y, [(-0.0, 0.5), (-INF, 0.5), (-0.0, -0.5), (0.0, 0.0)]),
    # a 0-d tensor exponent, which numpy alone would compute as sqrt at 0.5
    *binary(
        "x**y.sum()",
        lambda x, y: x ** y.sum(),
        [(-0.0, 0.5), (-INF, 0.5), (-INF, 1.5), (0.0, 0.0), (-2.0, 0.5)],
    ),
]


def same(mine: float, ref: float, dtype: type) -> bool:
    """The same IEEE outcome: nan for nan, the same infinity, else equal to the dtype's precision."""
    if math.isnan(ref) or math.isnan(mine):
        return math.isnan(ref) and math.isnan(mine)
    if math.isinf(ref) or math.isinf(mine):
        return mine == ref
    return math.isclose(mine, ref, rel_tol=1e-12 if dtype is np.float64 else 1e-6, abs_tol=0.0)


def derivatives(grad: Any, fn: Any, inputs: list[Any]) -> list[tuple[float, ...]]:
    """fn's value, its gradients and the gradients of their sum (second derivatives), by `grad`."""
    out = fn(*inputs)
    grads = grad(out.sum(), inputs, create_graph=True)
    total = sum(grads[1:], grads[0])
    second = grad(total.sum(), inputs, allow_unused=True) if total.requires_grad else [None] * len(inputs)
    return [
        (out.item(),),
        tuple(g.item() for g in grads),
        tuple(0.0 if s is None else s.item() for s in second),
    ]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("fn", "inputs"), CASES)
def test_values_and_two_derivatives_match_torch(fn: Any, inputs: tuple[float, ...], dtype: type) -> None:
    theirs = [torch.tensor([v], dtype=DTYPES[dtype], requires_grad=True) for v in inputs]
    mine = [minigrad.tensor(np.array([v], dtype=dtype), requires_grad=True) for v in inputs]
    expected = derivatives(torch.autograd.grad, fn, theirs)
    with np.errstate(all="ignore"):
        actual = derivatives(minigrad.grad, fn, mine)
    for what, got, ref in zip(("value", "gradient", "second derivative"), actual, expected):
        assert all(same(m, r, dtype) for m, r in zip(got, ref)), f"{what}: minigrad {got}, torch {ref}"


def test_signed_zero_powers_keep_torchs_sign() -> None:
    """torch computes x ** 0.5 as sqrt and x ** -0.5 as 1 / sqrt, so -0.0 keeps its sign."""
    x = minigrad.tensor([-0.0], requires_grad=True)
    assert math.copysign(1.0, (x**0.5).item()) == -1.0
    assert (x**-0.5).item() == -INF
    (g,) = minigrad.grad((x**0.5).sum(), [x])
    assert g.item() == -INF
