"""Every scalar op of `Value`, its gradient and its 2nd and 3rd derivatives, against torch float64.

Each op is written once as a Python function that works on a `Value` and on a 0-d torch tensor
alike (`x.tanh()`, `2 / x`, ...), so minigrad and the reference run the very same expression.
Hypothesis draws points inside each op's domain, away from kinks; the kinks and domain edges
themselves are checked at exact points in `test_value_edges.py`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import minigrad
from minigrad import Value

torch = pytest.importorskip("torch")

VALUE_RTOL = 1e-12
GRAD_RTOL = 1e-9


def floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def away_from_zero(lo: float, hi: float, gap: float = 1e-3) -> st.SearchStrategy[float]:
    return floats(lo, hi).filter(lambda x: abs(x) > gap)


@dataclass(frozen=True)
class Op:
    """An expression `fn(*inputs, *constants)`; the inputs are differentiated, the constants not."""

    name: str
    fn: Callable[..., Any]
    inputs: tuple[st.SearchStrategy[float], ...]
    constants: tuple[st.SearchStrategy[Any], ...] = ()

    def __repr__(self) -> str:
        return self.name


OPS = [
    # Value with Value
    Op("x + y", lambda x, y: x + y, (floats(-1e3, 1e3), floats(-1e3, 1e3))),
    Op("x - y", lambda x, y: x - y, (floats(-1e3, 1e3), floats(-1e3, 1e3))),
    Op("x * y", lambda x, y: x * y, (floats(-1e3, 1e3), floats(-1e3, 1e3))),
    Op("x / y", lambda x, y: x / y, (floats(-1e3, 1e3), away_from_zero(-1e3, 1e3))),
    Op("x ** y", lambda x, y: x**y, (floats(1e-2, 20), floats(-4, 4))),
    Op("x * x (reused input)", lambda x: x * x, (floats(-1e3, 1e3),)),
    # Value with a number, in both orders
    Op("x + c", lambda x, c: x + c, (floats(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("c + x", lambda x, c: c + x, (floats(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("x - c", lambda x, c: x - c, (floats(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("c - x", lambda x, c: c - x, (floats(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("x * c", lambda x, c: x * c, (floats(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("c * x", lambda x, c: c * x, (floats(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("x / c", lambda x, c: x / c, (floats(-1e3, 1e3),), (away_from_zero(-1e3, 1e3),)),
    Op("c / x", lambda x, c: c / x, (away_from_zero(-1e3, 1e3),), (floats(-1e3, 1e3),)),
    Op("x ** c", lambda x, c: x**c, (floats(1e-2, 20),), (floats(-4, 4),)),
    Op("x ** k (int k)", lambda x, k: x**k, (away_from_zero(-20, 20),), (st.integers(-4, 4),)),
    Op("x ** 0.5", lambda x: x**0.5, (floats(1e-3, 1e3),)),
    Op("x ** -0.5", lambda x: x**-0.5, (floats(1e-3, 1e3),)),
    Op("c ** x", lambda x, c: c**x, (floats(-10, 10),), (floats(1e-2, 20),)),
    # unary
    Op("-x", lambda x: -x, (floats(-1e3, 1e3),)),
    Op("relu", lambda x: x.relu(), (away_from_zero(-1e3, 1e3),)),
    Op("tanh", lambda x: x.tanh(), (floats(-20, 20),)),
    Op("sigmoid", lambda x: x.sigmoid(), (floats(-40, 40),)),
    Op("exp", lambda x: x.exp(), (floats(-50, 50),)),
    Op("log", lambda x: x.log(), (floats(1e-3, 1e3),)),
    Op("sin", lambda x: x.sin(), (floats(-10, 10),)),
    Op("cos", lambda x: x.cos(), (floats(-10, 10),)),
    Op("sqrt", lambda x: x.sqrt(), (floats(1e-3, 1e3),)),
    Op("abs", lambda x: abs(x), (away_from_zero(-1e3, 1e3),)),
]


def close(mine: float, ref: float, rtol: float, atol: float = 0.0) -> bool:
    """Equal as IEEE numbers (nan matches nan, inf matches inf of the same sign) or within tolerance."""
    if math.isnan(ref) or math.isnan(mine):
        return math.isnan(ref) and math.isnan(mine)
    if math.isinf(ref) or math.isinf(mine):
        return mine == ref
    return math.isclose(mine, ref, rel_tol=rtol, abs_tol=atol)


def draw_case(data: st.DataObject, op: Op) -> tuple[list[float], list[Any]]:
    inputs = [data.draw(s, label=f"input {i}") for i, s in enumerate(op.inputs)]
    constants = [data.draw(s, label=f"constant {i}") for i, s in enumerate(op.constants)]
    return inputs, constants


@pytest.mark.parametrize("op", OPS, ids=repr)
@given(data=st.data())
def test_value_and_gradient_match_torch(op: Op, data: st.DataObject) -> None:
    inputs, constants = draw_case(data, op)
    seed = data.draw(floats(-3, 3), label="output gradient")

    xs = [Value(v) for v in inputs]
    out = op.fn(*xs, *constants)
    out.backward(seed)

    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in inputs]
    ref = op.fn(*ts, *constants)
    ref.backward(torch.tensor(seed, dtype=torch.float64))

    assert close(out.data, ref.item(), VALUE_RTOL), (out.data, ref.item())
    # a derivative that cancels (tanh's 1 - t * t near |x| = 10) carries an ulp of its terms times
    # the output gradient, whatever its own size: torch's and ours may round that ulp differently
    cancelled = 4 * sys.float_info.epsilon * abs(seed)
    for x, t in zip(xs, ts):
        assert close(x.grad, t.grad.item(), GRAD_RTOL, atol=max(1e-300, cancelled)), (x.grad, t.grad.item())


def minigrad_derivatives(op: Op, inputs: list[float], constants: list[Any], order: int) -> list[list[float]]:
    """All partial derivatives of orders 1..order, each level flattened in the same order as torch's."""
    xs = [Value(v) for v in inputs]
    level = [op.fn(*xs, *constants)]
    levels = []
    for _ in range(order):
        nxt: list[Any] = []
        for y in level:
            nxt.extend(minigrad.grad(y, xs, create_graph=True, allow_unused=True, materialize_grads=True))
        levels.append([v.data for v in nxt])
        level = nxt
    return levels


def torch_derivatives(op: Op, inputs: list[float], constants: list[Any], order: int) -> list[list[float]]:
    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in inputs]
    level = [op.fn(*ts, *constants)]
    levels = []
    for _ in range(order):
        nxt: list[Any] = []
        for y in level:
            if y.requires_grad:
                grads = torch.autograd.grad(
                    y, ts, create_graph=True, allow_unused=True, materialize_grads=True
                )
                nxt.extend(grads)
            else:  # a derivative torch computed as a constant: all its derivatives are zero
                nxt.extend(torch.zeros((), dtype=torch.float64) for _ in ts)
        levels.append([t.item() for t in nxt])
        level = nxt
    return levels


@pytest.mark.parametrize("op", OPS, ids=repr)
@given(data=st.data())
def test_first_second_third_derivatives_match_torch(op: Op, data: st.DataObject) -> None:
    inputs, constants = draw_case(data, op)
    # torch's d²/da db of a ** b is 0 at b == 0, the exact one 1/a (test_exact_where_torch_is_not.py);
    # its higher derivatives meet that mask again at a ** (b - k): b = 1, 2, 3 at the third order
    assume(not (op.name == "x ** y" and inputs[1] in (0, 1, 2, 3)))
    mine = minigrad_derivatives(op, inputs, constants, order=3)
    ref = torch_derivatives(op, inputs, constants, order=3)
    for order, (m_level, r_level) in enumerate(zip(mine, ref), start=1):
        # Higher derivatives are composed of several rounded steps that torch orders differently,
        # so the absolute floor scales with the size of the terms at that order.
        scale = max([1.0, *(abs(r) for r in r_level if math.isfinite(r))])
        for index, (m, r) in enumerate(zip(m_level, r_level)):
            assert close(m, r, GRAD_RTOL, atol=1e-12 * scale), (
                f"order {order} entry {index}: {m} vs torch {r}"
            )


@pytest.mark.parametrize("op", OPS, ids=repr)
@given(data=st.data())
def test_grad_leaves_dot_grad_alone_and_agrees_with_backward(op: Op, data: st.DataObject) -> None:
    inputs, constants = draw_case(data, op)
    xs = [Value(v) for v in inputs]
    out = op.fn(*xs, *constants)
    returned = minigrad.grad(out, xs)
    assert all(x.grad == 0.0 for x in xs)
    out.backward()
    assert [type(g) for g in returned] == [float] * len(xs)
    assert list(returned) == [x.grad for x in xs]
