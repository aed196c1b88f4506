"""Small micrograd-style engines, each with one bug in its graph code and correct op rules.

The structural phase's tests run campaigns on these and expect each bug to be named once, as a
`structural` (or `nondeterministic`) finding, and never blamed on an op:

- `DoubledSharedAdapter`: the topological order lists a node again each time it is reached, so a
  node used twice runs its backward twice (a shared node's gradient is counted twice);
- `OverwriteAdapter`: the rules assign their gradient (`=`) where they should add (`+=`);
- `LeafZeroGradAdapter`: backward keeps interior gradients between passes (like micrograd) and the
  engine's `zero_grad` resets only the leaves;
- `RecursiveSortAdapter`: a recursive topological sort, which overflows Python's stack on deep chains;
- `IdOrderAdapter`: an iterative sort over sets of children that pushes a node once per parent still
  waiting for it, so whether a shared node runs twice depends on the set's order, that is on ids.

`Value` itself is correct: like torch, each backward pass starts the interior gradients afresh and
adds into the leaves'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from gradcheck.engines.adapter import EngineAdapter

Rule = Callable[[float], tuple[float, ...]]


class Value:
    """A scalar with a gradient; the ops of a micrograd clone, each rule beside its forward."""

    def __init__(self, data: float, children: tuple[Value, ...] = (), rule: Rule | None = None) -> None:
        self.data = float(data)
        self.grad = 0.0
        self._prev = children
        self._rule = rule

    def _make(self, data: float, children: tuple[Value, ...], rule: Rule) -> Value:
        return type(self)(data, children, rule)

    def _lift(self, other: Any) -> Value:
        return other if isinstance(other, Value) else type(self)(other)

    def __add__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._make(self.data + other.data, (self, other), lambda g: (g, g))

    def __mul__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._make(self.data * other.data, (self, other), lambda g: (g * other.data, g * self.data))

    def __neg__(self) -> Value:
        return self._make(-self.data, (self,), lambda g: (-g,))

    def __sub__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._make(self.data - other.data, (self, other), lambda g: (g, -g))

    def __radd__(self, other: Any) -> Value:
        return self._lift(other) + self

    def __rmul__(self, other: Any) -> Value:
        return self._lift(other) * self

    def __rsub__(self, other: Any) -> Value:
        return self._lift(other) - self

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        return self._make(t, (self,), lambda g: (g * (1.0 - t * t),))

    def order(self) -> list[Value]:
        """Every node this one depends on, each after its children (iterative: no depth limit)."""
        return topological_order(self)

    def propagate(self, node: Value) -> None:
        """Add `node`'s contribution into its children's gradients."""
        if node._rule is not None:
            for child, g in zip(node._prev, node._rule(node.grad)):
                child.grad += g

    def backward(self) -> None:
        order = self.order()
        for node in order:
            if node._prev:
                node.grad = 0.0  # interior gradients belong to one pass
        self.grad += 1.0
        for node in reversed(order):
            self.propagate(node)


def topological_order(root: Any) -> list[Any]:
    """Every node `root` depends on through its children (`_prev`), each after them; iterative, so
    depth is free."""
    order: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in node._prev)
    return order


class DoubledSharedValue(Value):
    def order(self) -> list[Value]:
        order: list[Value] = []
        seen: set[int] = set()
        stack: list[tuple[Value, bool]] = [(self, False)]
        while stack:
            node, done = stack.pop()
            if done or id(node) in seen:
                order.append(node)  # the bug: a node reached again is listed again
            else:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((child, False) for child in node._prev)
        return order


class OverwriteValue(Value):
    def propagate(self, node: Value) -> None:
        if node._rule is not None:
            for child, g in zip(node._prev, node._rule(node.grad)):
                child.grad = g  # the bug: `=` where `+=` belongs


class LeafZeroGradValue(Value):
    def backward(self) -> None:
        self.grad = 1.0  # interior gradients are kept from the last pass, as in micrograd
        for node in reversed(self.order()):
            self.propagate(node)

    def zero_grad(self) -> None:
        for node in self.order():
            if not node._prev:  # the bug: interior gradients are left as they are
                node.grad = 0.0


class RecursiveSortValue(Value):
    def order(self) -> list[Value]:
        order: list[Value] = []
        seen: set[int] = set()

        def visit(node: Value) -> None:
            if id(node) not in seen:
                seen.add(id(node))
                for child in node._prev:
                    visit(child)
                order.append(node)

        visit(self)
        return order


class IdOrderValue(Value):
    def __init__(self, data: float, children: tuple[Value, ...] = (), rule: Rule | None = None) -> None:
        super().__init__(data, children, rule)
        self.children = set(children)  # iterated in an order that follows the children's ids

    def order(self) -> list[Value]:
        order: list[Value] = []
        visited: set[Value] = set()
        stack: list[Value] = [self]
        while stack:
            node = stack[-1]
            waiting = [c for c in node.children if c not in visited]
            if waiting:
                stack.extend(waiting)  # the bug: a child already on the stack is pushed again
            else:
                stack.pop()
                visited.add(node)
                order.append(node)  # ... and listed again when its second copy is popped
        return order


class _Adapter(EngineAdapter):
    value_class: type[Value] = Value
    ops = frozenset({"add", "sub", "mul", "neg", "tanh"})

    def leaf(self, value: Any) -> Value:
        return self.value_class(float(value))


class CorrectAdapter(_Adapter):
    """The base engine, without a bug: the structural phase finds nothing."""

    name = "structural-correct"


class DoubledSharedAdapter(_Adapter):
    name = "doubled-shared"
    value_class = DoubledSharedValue


class OverwriteAdapter(_Adapter):
    name = "overwrite"
    value_class = OverwriteValue


class LeafZeroGradAdapter(_Adapter):
    name = "leaf-zero-grad"
    value_class = LeafZeroGradValue

    def zero_grad(self, nodes: Sequence[Any]) -> None:
        """The engine's own zero_grad, from each output (the harness passes the outputs last)."""
        for node in nodes:
            node.zero_grad()


class RecursiveSortAdapter(_Adapter):
    name = "recursive-sort"
    value_class = RecursiveSortValue


class IdOrderAdapter(_Adapter):
    name = "id-order"
    value_class = IdOrderValue
