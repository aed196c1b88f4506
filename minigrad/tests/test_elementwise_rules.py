"""Every shared elementwise rule, found in the engine's own table `elementwise.RULES`, against torch.

Each rule is compared by name with `torch.<name>`, on Values and on Tensors (float64 and float32,
broadcast operands), for values, gradients and second derivatives. A rule says where its inputs
may be drawn (`domain`), so a new op is tested here with no edit to this file.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minigrad
from minigrad import Value
from minigrad.elementwise import RULES
from minigrad.tests.tensor_torch_check import check, check_second

torch = pytest.importorskip("torch")

# The Python operators that spell an op on Value and Tensor (every other op is a method of its name).
OPERATORS: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "pow": operator.pow,
    "neg": operator.neg,
}
BROADCAST = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((4,), (0, 4))]


def minigrad_op(name: str) -> Callable[..., Any]:
    if name in OPERATORS:
        return OPERATORS[name]
    return lambda x, *others: getattr(x, name)(*others)


def torch_op(name: str) -> Callable[..., Any]:
    return getattr(torch, name)


def sample(domain: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Points of `domain` ("real" or "positive") kept 0.2 away from zero, where kinks and poles are."""
    magnitude = rng.uniform(0.2, 2.0, shape)
    return magnitude if domain == "positive" else magnitude * rng.choice([-1.0, 1.0], shape)


def points(rule: Any, shapes: tuple[tuple[int, ...], ...], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [sample(domain, shape, rng) for domain, shape in zip(rule.domain, shapes)]


def test_the_table_holds_every_shared_rule_once_by_torchs_name():
    assert len(RULES) >= 15
    for name, rule in RULES.items():
        assert rule.name == name and hasattr(torch, name)
        assert len(rule.domain) == rule.arity


@pytest.mark.parametrize("name", RULES)
def test_value_and_tensor_both_expose_the_rule(name):
    x, t = Value(0.5), minigrad.tensor([0.5], requires_grad=True)
    args = [0.7] * (RULES[name].arity - 1)
    assert minigrad_op(name)(x, *[Value(a) for a in args])._rule is RULES[name]
    assert minigrad_op(name)(t, *[minigrad.tensor([a]) for a in args])._rule is RULES[name]


@pytest.mark.parametrize("name", RULES)
def test_value_matches_torch_with_first_and_second_derivatives(name):
    rule, mine, theirs = RULES[name], minigrad_op(name), torch_op(name)
    for seed in range(8):
        inputs = [float(x) for x in points(rule, ((),) * rule.arity, seed)]
        xs = [Value(x) for x in inputs]
        ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
        out, ref = mine(*xs), theirs(*ts)
        assert out.data == pytest.approx(ref.item(), rel=1e-12, abs=1e-12)
        firsts = minigrad.grad(out, xs, create_graph=True)
        ref_firsts = torch.autograd.grad(ref, ts, create_graph=True)
        assert [g.data for g in firsts] == pytest.approx([r.item() for r in ref_firsts], rel=1e-9, abs=1e-12)
        for first, ref_first in zip(firsts, ref_firsts):
            seconds = minigrad.grad(first, xs, allow_unused=True, materialize_grads=True)
            ref_seconds = (
                torch.autograd.grad(
                    ref_first, ts, allow_unused=True, materialize_grads=True, retain_graph=True
                )
                if ref_first.requires_grad
                else [torch.zeros(())] * len(ts)
            )
            assert [s.data if isinstance(s, Value) else s for s in seconds] == pytest.approx(
                [r.item() for r in ref_seconds], rel=1e-9, abs=1e-12
            )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", RULES)
def test_tensor_matches_torch_over_broadcast_shapes(name, dtype):
    rule = RULES[name]
    shape_sets = BROADCAST if rule.arity == 2 else [((3, 4),), ((),), ((2, 0),)]
    for seed, shapes in enumerate(shape_sets):
        check((minigrad_op(name), torch_op(name)), points(rule, shapes, seed), dtype)


@pytest.mark.parametrize("name", RULES)
def test_tensor_second_derivatives_match_torch(name):
    rule = RULES[name]
    shapes = ((3, 1), (1, 4)) if rule.arity == 2 else ((3, 4),)
    check_second((minigrad_op(name), torch_op(name)), points(rule, shapes, 7))


class MulWithDoubledGradient(RULES["mul"]):  # type: ignore[misc, valid-type]
    """A subclass that rewrites `backward`: every walk must use it, not the parent's `gradients`."""

    @classmethod
    def backward(cls, g, out, a, b, needs=(True, True)):
        grad_a, grad_b = RULES["mul"].gradients(g, out, a, b)
        return 2 * grad_a, 2 * grad_b


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_rule_whose_backward_is_rewritten_is_used_as_rewritten(create_graph):
    assert RULES["mul"].direct and not MulWithDoubledGradient.direct
    x, y = Value(3.0), Value(5.0)
    out = minigrad.apply_op(MulWithDoubledGradient, x, y)
    grads = minigrad.grad(out, [x, y], create_graph=create_graph)
    assert [g.data if isinstance(g, Value) else g for g in grads] == [10.0, 6.0]
    out.backward()
    assert (x.grad, y.grad) == (10.0, 6.0)
