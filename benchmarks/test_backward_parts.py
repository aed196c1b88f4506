"""Where minigrad's scalar backward pass goes, beside micrograd's whole backward pass, under
pytest-benchmark: on micrograd's demo network (the graph of `scalar_workloads.py`), with the
garbage collector off, minigrad's two walks apart (the topological order; the propagation, which
also adds into `.grad`), its whole backward, and micrograd's `backward()`. Each round gets a
freshly built graph (pytest-benchmark's `pedantic` setup, not timed).

Beside them, one floor for each walk, measured on the same graphs (neither is the engine):
- reachability: every node visited once with the same marker, in no particular order; a
  topological order cannot cost less than this;
- the propagation with the math of the demo's ops (Mul, Add, ReLU) written into the loop, the
  rule call taken out; what the engine would gain by writing each rule a second time there.

    pytest benchmarks/test_backward_parts.py --benchmark-only
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from scalar_workloads import ENGINES, mlp_graph, mlp_numbers

from minigrad import value_backward
from minigrad.elementwise import Add, Mul, ReLU
from minigrad.value_backward import REACHED

GROUP = "backward pass of micrograd's demo MLP, collector off"
ROUNDS = 40


def reach_every_node(root: Any) -> list[Any]:
    """The floor of the topological order: each node reached once, marked as the engine marks it."""
    seen: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node._g is not None:
            continue
        node._g = REACHED
        seen.append(node)
        a, b = node._a, node._b
        if a is not None and type(a) is not float and a._g is None:
            stack.append(a)
        if b is not None and type(b) is not float and b._g is None:
            stack.append(b)
    return seen


def check_inlinable(order: list[Any]) -> None:
    """`propagate_inlined` knows only the demo's rules, with a constant only on the right."""
    others = {node._rule for node in order} - {Add, Mul, ReLU, None}
    if others or any(type(node._a) is float for node in order):
        raise ValueError(f"propagate_inlined knows Add, Mul and ReLU (constants on the right), not {others}")


def propagate_inlined(order: list[Any]) -> None:
    """The floor of the propagation: the demo network's rules (Mul, Add, ReLU; two Values or a
    Value and a constant on the right) written into the loop, so no rule is called."""
    reached = REACHED
    for node in reversed(order):
        g = node._g
        node._g = None
        node.grad += g
        a, b, rule = node._a, node._b, node._rule
        if b is None:
            if rule is ReLU:
                grad = 0.0 if node.data <= 0 else g
                old = a._g
                a._g = grad if old is reached else old + grad
            continue  # (a leaf)
        if type(b) is float:
            grad = g * b if rule is Mul else g
            old = a._g
            a._g = grad if old is reached else old + grad
            continue
        if rule is Mul:
            grad_a, grad_b = g * b.data, g * a.data
        else:
            grad_a = grad_b = g
        old = a._g
        a._g = grad_a if old is reached else old + grad_a
        old = b._g
        b._g = grad_b if old is reached else old + grad_b


@pytest.fixture
def collector_off():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def minigrad_graph() -> Any:
    return mlp_graph(ENGINES[0], mlp_numbers())[0]()


def ordered() -> tuple[tuple[Any], dict]:
    """A fresh minigrad graph in topological order, seeded as backward() seeds it."""
    out = minigrad_graph()
    order = value_backward.topological_order([out], False)
    out._g = 1.0
    return (order,), {}


def reached_then_ordered() -> tuple[tuple[Any], dict]:
    """`ordered`, checked to hold only the rules `propagate_inlined` knows."""
    (order,), _ = ordered()
    check_inlinable(order)
    return (order,), {}


def propagate(order: list[Any]) -> None:
    value_backward.propagate_floats(order, False, into_grad=True)


def whole_backward(out: Any) -> None:
    out.backward()


PARTS = {
    "minigrad: topological order": (lambda out: value_backward.topological_order([out], False), "graph"),
    "minigrad: propagation (+ .grad)": (propagate, "ordered"),
    "minigrad: backward": (whole_backward, "graph"),
    "micrograd: backward": (whole_backward, "micrograd"),
    "floor of the order: reachability alone": (reach_every_node, "graph"),
    "floor of the propagation: rules inlined": (propagate_inlined, "inlinable"),
}
SETUPS = {
    "graph": lambda: ((minigrad_graph(),), {}),
    "micrograd": lambda: ((mlp_graph(ENGINES[1], mlp_numbers())[0](),), {}),
    "ordered": ordered,
    "inlinable": reached_then_ordered,
}


@pytest.mark.parametrize("part", list(PARTS))
def test_backward_part(benchmark, collector_off, part):
    benchmark.group = GROUP
    target, setup = PARTS[part]
    benchmark.extra_info["nodes"] = len(value_backward.topological_order([minigrad_graph()], False))
    benchmark.pedantic(target, setup=SETUPS[setup], rounds=ROUNDS)


def test_the_inlined_propagation_gives_the_engines_gradients():
    """The floor computes what the engine does: the same leaf gradients on the same graph."""
    build, params = mlp_graph(ENGINES[0], mlp_numbers())
    build().backward()
    engine = [p.grad for p in params]
    for p in params:
        p.grad = 0.0
    out = build()
    order = value_backward.topological_order([out], False)
    check_inlinable(order)
    out._g = 1.0
    propagate_inlined(order)
    assert [p.grad for p in params] == pytest.approx(engine, rel=1e-12)
