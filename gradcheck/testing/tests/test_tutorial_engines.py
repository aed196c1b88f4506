"""The tutorial's engine and its one-mistake variants, pinned by their own numbers (not by what the
harness reports on them): the correct engine gives the tutorial's worked example and torch's
gradients, and each variant differs from it in the one op (or the graph code) `MISTAKES` names."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import pytest
import torch

from gradcheck.testing import tutorial_engines
from gradcheck.testing.tutorial_engines import TutorialValue
from gradcheck.testing.tutorial_mistakes import GRAPH_CODE, MISTAKES

UPSTREAM = 1.5  # the out.grad each op's `_backward` is run with, so that a missing factor shows


def local_rule(cls: type, build: Callable[..., Any], *inputs: float, prior: float = 0.0) -> tuple[Any, ...]:
    """One node built by `build` from fresh leaves holding gradient `prior` (what another use gave
    them), its `_backward` run alone with out.grad = UPSTREAM: (value, each leaf's gradient), or
    the exception's type where building raises."""
    leaves = [cls(x) for x in inputs]
    for leaf in leaves:
        leaf.grad = prior
    try:
        out = build(*leaves)
        out.grad = UPSTREAM
        out._backward()
    except (ArithmeticError, AttributeError, TypeError, ValueError) as error:
        return (type(error).__name__,)
    return (out.data, *(leaf.grad for leaf in leaves))


def hand_built_backward(cls: type) -> tuple[float, ...]:
    """backward() of `cls` on a diamond over a shared interior node (r feeds a, a feeds b and c, both
    feed d) and a chain of three, whose nodes carry the test's own `_backward` closures, so that no
    op of the engine takes part."""
    r = cls(2.0)
    a = cls(0.0, (r,), "a")
    b, c = cls(0.0, (a,), "b"), cls(0.0, (a,), "c")
    d = cls(0.0, (b, c), "d")

    def spread_d() -> None:
        b.grad += 3.0 * d.grad
        c.grad += 5.0 * d.grad

    def spread_b() -> None:
        a.grad += 7.0 * b.grad

    def spread_c() -> None:
        a.grad += 11.0 * c.grad

    def spread_a() -> None:
        r.grad += 13.0 * a.grad

    d._backward, b._backward, c._backward, a._backward = spread_d, spread_b, spread_c, spread_a
    d.backward()
    chain = [cls(1.0)]
    for _ in range(2):
        node = cls(0.0, (chain[-1],), "link")
        node._backward = (lambda n, p: lambda: setattr(p, "grad", p.grad + 2.0 * n.grad))(node, chain[-1])
        chain.append(node)
    chain[-1].backward()
    return (r.grad, a.grad, b.grad, c.grad, d.grad, *(n.grad for n in chain))


def probes(cls: type) -> dict[str, tuple[Any, ...]]:
    """What each op's own code does in `cls`, keyed by the op `MISTAKES` would blame."""
    return {
        "add": local_rule(cls, lambda a, b: a + b, 0.7, -1.3)
        + local_rule(cls, lambda a: a + a, 0.7)
        + local_rule(cls, lambda a, b: a + b, 0.7, -1.3, prior=0.25)
        + local_rule(cls, lambda a: a + 2.0, 0.7),
        "mul": local_rule(cls, lambda a, b: a * b, 0.7, -1.3) + local_rule(cls, lambda a: a * a, 0.7),
        "pow_const": sum((local_rule(cls, lambda a, n=n: a**n, 0.7) for n in (3, -1, 0.5, 2.0)), ()),
        "relu": local_rule(cls, lambda a: a.relu(), 1.5) + local_rule(cls, lambda a: a.relu(), -0.5),
        "tanh": local_rule(cls, lambda a: a.tanh(), 0.7) + local_rule(cls, lambda a: a.tanh(), -2.0),
        "sigmoid": local_rule(cls, lambda a: a.sigmoid(), 0.7) + local_rule(cls, lambda a: a.sigmoid(), -2.0),
        "exp": local_rule(cls, lambda a: a.exp(), 0.7) + local_rule(cls, lambda a: a.exp(), -2.0),
        "log": local_rule(cls, lambda a: a.log(), 0.7) + local_rule(cls, lambda a: a.log(), 3.0),
        "sub": local_rule(cls, lambda a: 2.0 - a, 0.7),  # only __rsub__ is sub's own code
        # div is mul and pow in the tutorial: its own code only where a variant writes it
        "div": local_rule(cls, lambda a, b: a / b, 0.7, -1.3) if "__truediv__" in vars(cls) else (),
        GRAPH_CODE: hand_built_backward(cls),
    }


def test_the_tutorial_engine_gives_the_worked_example():
    x, y = TutorialValue(2.0), TutorialValue(3.0)
    z = x * y + x
    z.backward()
    assert (z.data, x.grad, y.grad) == (8.0, 4.0, 2.0)


def test_the_tutorial_engine_builds_neg_sub_and_div_from_mul_pow_and_add():
    x, y = TutorialValue(2.0), TutorialValue(3.0)
    assert (-x)._op == "*" and -1 in {p.data for p in (-x)._prev}
    assert (x - y)._op == "+" and any(p._op == "*" for p in (x - y)._prev)
    assert (x / y)._op == "*" and any(p._op == "**-1" for p in (x / y)._prev)
    assert isinstance((x * y)._prev, set)


def test_the_tutorial_engine_matches_torch():
    def f(x: Any, y: Any) -> Any:
        shared = x * y + x**2
        return (
            (shared / (y - 0.5)).tanh()
            + (x.exp() - y).relu()
            + x.log() * y.sigmoid()
            - (2.0 - shared) * (1.0 / y)
        )

    x, y = TutorialValue(0.7), TutorialValue(1.3)
    out = f(x, y)
    out.backward()
    tx = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    expected = f(tx, ty)
    expected.backward()
    assert out.data == pytest.approx(expected.item(), rel=1e-14)
    assert (x.grad, y.grad) == pytest.approx((tx.grad.item(), ty.grad.item()), rel=1e-13)


def test_the_tutorial_power_rule_raises_at_zero_to_the_power_zero_where_torch_gives_zero():
    power = TutorialValue(0.0) ** 0
    assert power.data == 1.0
    with pytest.raises(ZeroDivisionError):
        power.backward()  # 0 * 0.0 ** -1
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    (t**0).backward()
    assert t.grad.item() == 0.0


def test_the_probes_see_the_correct_engine_right():
    seen = probes(TutorialValue)
    assert seen["add"] == (
        0.7 - 1.3,
        UPSTREAM,
        UPSTREAM,
        1.4,
        2 * UPSTREAM,
        0.7 - 1.3,
        0.25 + UPSTREAM,
        0.25 + UPSTREAM,
        0.7 + 2.0,
        UPSTREAM,
    )
    assert seen["tanh"][:2] == (math.tanh(0.7), (1 - math.tanh(0.7) ** 2) * UPSTREAM)
    assert seen["sub"] == (2.0 - 0.7, 0.0)  # the probe runs only the last node's backward
    assert seen[GRAPH_CODE] == (13 * (3 * 7 + 5 * 11), 3 * 7 + 5 * 11, 3.0, 5.0, 1.0, 4.0, 2.0, 1.0)


VARIANTS = [m for m in MISTAKES if m.engine != "TutorialValue"]


@pytest.mark.parametrize("mistake", VARIANTS, ids=lambda m: m.engine)
def test_each_variant_differs_from_the_tutorial_engine_in_its_one_op(mistake):
    variant = getattr(tutorial_engines, mistake.engine)
    right, wrong = probes(TutorialValue), probes(variant)
    assert {op for op in right if right[op] != wrong[op]} == {mistake.op}


def test_every_engine_of_the_module_has_its_row_and_says_its_mistake():
    core = tutorial_engines._TutorialCore
    classes = {
        name
        for name, value in vars(tutorial_engines).items()
        if inspect.isclass(value) and issubclass(value, core) and value is not core
    }
    rows = [m.engine for m in MISTAKES]
    assert sorted(rows) == sorted(classes) and len(set(rows)) == len(rows) >= 13
    for name in rows:
        assert getattr(tutorial_engines, name).__doc__.strip()
        assert f"{tutorial_engines.__name__}:{name}" == next(m.spec for m in MISTAKES if m.engine == name)
