"""Kinks, domain edges, overflow and nan: minigrad gives exactly torch float64's values and gradients.

Each case runs the same expression on Values and on 0-d torch tensors, then compares the result,
the gradients from `backward()` (the float path) and from `grad(create_graph=True)` (the Value
path, which builds the derivative as a graph).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import minigrad
from minigrad import Value

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def unary(name: str, fn: Any, points: list[float]) -> list[Any]:
    return [pytest.param(fn, (x,), id=f"{name}({x})") for x in points]


def binary(name: str, fn: Any, pairs: list[tuple[float, float]]) -> list[Any]:
    return [pytest.param(fn, pair, id=f"{name}{pair}") for pair in pairs]


def with_constant(name: str, fn: Any, pairs: list[tuple[float, Any]]) -> list[Any]:
    """`fn(x, c)` differentiated in x only, c a plain number."""
    return [pytest.param(lambda x, c=c: fn(x, c), (x,), id=name.format(x=x, c=c)) for x, c in pairs]


CASES = [
    *unary("relu", lambda x: x.relu(), [0.0, -0.0, NAN, 1e-300, -1e-300, INF, -INF]),
    *unary("abs", lambda x: abs(x), [0.0, -0.0, NAN, INF, -INF]),
    *unary("tanh", lambda x: x.tanh(), [1000.0, -1000.0, 20.0, INF, -INF, NAN, 0.0]),
    *unary("sigmoid", lambda x: x.sigmoid(), [1000.0, -1000.0, 710.0, -710.0, -745.0, 40.0, INF, -INF, NAN]),
    *unary("exp", lambda x: x.exp(), [709.0, 710.0, 1000.0, -1000.0, INF, -INF, NAN]),
    *unary("log", lambda x: x.log(), [0.0, -0.0, -1.0, INF, -INF, NAN, 1e-320]),
    *unary("sqrt", lambda x: x.sqrt(), [0.0, -0.0, -1.0, INF, -INF, NAN]),
    *unary("sin", lambda x: x.sin(), [INF, -INF, NAN, 0.0]),
    *unary("cos", lambda x: x.cos(), [INF, -INF, NAN, 0.0]),
    *unary("neg", lambda x: -x, [0.0, INF, NAN]),
    *with_constant(
        "({x})**{c}",
        lambda x, c: x**c,
        [
            *(
                (base, c)
                for base in (0.0, -0.0)
                for c in (0.0, 0.5, -0.5, 1.0, 1.5, 2.0, 3.0, -1.0, -2.0, -1.5)
            ),
            *((-2.0, c) for c in (0.5, 1.5, -0.5, 2.0, 3.0, -1.0, 0.0)),
            *((-INF, c) for c in (0.5, -0.5, 1.5, 2.0, 3.0)),
            (INF, 0.0),
            (NAN, 0.0),
            (2.0, NAN),
            (1e300, 2.0),
        ],
    ),
    *with_constant(
        "{c}**({x})",
        lambda x, c: c**x,
        [
            *((x, 0.0) for x in (0.0, 1.0, -1.0, 0.5, -0.5)),
            *((x, -2.0) for x in (0.5, 2.0, 3.0)),
            (1000.0, 2.0),
            (INF, 1.0),
            (0.0, 1.0),
        ],
    ),
    *binary(
        "x**y",
        lambda x, y: x**y,
        [
            *((0.0, y) for y in (0.0, 1.0, 2.0, -1.0, 0.5, -0.5)),
            *((-2.0, y) for y in (0.5, 2.0, 3.0, 0.0)),
            *[(2.0, 0.0), (1e300, 2.0), (INF, 0.0), (1.0, INF)],
        ],
    ),
    *binary(
        "atan2",
        lambda y, x: y.atan2(x),
        [
            *((y, x) for y in (0.0, -0.0) for x in (0.0, -0.0)),
            # y² + x² underflowing: torch's gradient 0, minigrad's exact (test_exact_where_torch_is_not.py)
            *[(0.0, INF), (1.0, INF), (INF, INF), (NAN, 0.0)],
        ],
    ),
    *binary("x/y", lambda x, y: x / y, [(1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (1.0, -0.0), (INF, INF)]),
    *with_constant("{c}/({x})", lambda x, c: c / x, [(0.0, 1.0), (-0.0, 1.0), (0.0, -1.0), (0.0, 0.0)]),
    *with_constant("({x})/{c}", lambda x, c: x / c, [(1.0, 0.0), (0.0, 0.0), (-1.0, -0.0)]),
    *binary("x*y", lambda x, y: x * y, [(INF, 0.0), (1e300, 1e300)]),
    *binary("x-y", lambda x, y: x - y, [(INF, INF)]),
    *binary("x+y", lambda x, y: x + y, [(INF, -INF)]),
]


def same(mine: float, ref: float) -> bool:
    """Identical IEEE outcome: nan for nan, the same infinity, else equal to a few ulps."""
    if math.isnan(ref) or math.isnan(mine):
        return math.isnan(ref) and math.isnan(mine)
    if math.isinf(ref) or math.isinf(mine):
        return mine == ref
    return math.isclose(mine, ref, rel_tol=1e-12, abs_tol=0.0)


@pytest.mark.parametrize(("fn", "inputs"), CASES)
def test_value_and_gradients_match_torch_exactly(fn: Any, inputs: tuple[float, ...]) -> None:
    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in inputs]
    ref = fn(*ts)
    ref.backward()
    ref_grads = [t.grad.item() for t in ts]

    xs = [Value(v) for v in inputs]
    out = fn(*xs)
    out.backward()
    assert same(out.data, ref.item()), f"value {out.data} vs torch {ref.item()}"
    for i, (x, r) in enumerate(zip(xs, ref_grads)):
        assert same(x.grad, r), f"backward(): gradient {i} is {x.grad}, torch says {r}"

    fresh = [Value(v) for v in inputs]
    graph_grads = minigrad.grad(fn(*fresh), fresh, create_graph=True)
    for i, (g, r) in enumerate(zip(graph_grads, ref_grads)):
        assert isinstance(g, Value)
        assert same(g.data, r), f"grad(create_graph=True): gradient {i} is {g.data}, torch says {r}"


def test_tanh_of_large_arguments_is_exactly_one_without_overflow() -> None:
    assert Value(1000.0).tanh().data == 1.0
    assert Value(-1000.0).tanh().data == -1.0


def test_sigmoid_saturates_to_exactly_zero_and_one_without_raising() -> None:
    assert Value(-1000.0).sigmoid().data == 0.0
    assert Value(1000.0).sigmoid().data == 1.0
