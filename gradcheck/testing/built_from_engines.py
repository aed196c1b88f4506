"""Value classes that build some ops from others, as the autograd tutorials teach, for the
campaign's blame through the engine's own graph (`campaign.primitives`).

`Value` keeps its operands in `_parents` and its operation's name in `_op`, and has five
primitives of its own (`+`, `*`, `**` with a number, `tanh`, `exp`); negation is `x * -1`,
subtraction `x + (-y)` and division `x * y ** -1`, each a graph of primitive nodes. It is correct.
- `MulNoUpstream`: mul's backward leaves out the upstream gradient (`self.grad += other.data`), the
  tutorial's forgotten `out.grad`: neg, sub and div fail with it, and the campaign must blame mul.
- `NegOwnNode`: negation a node of its own (`neg`), subtraction `x + (-y)`: sub is built from add
  and neg, none from mul.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


class Value:
    """A scalar with a gradient; `backward()` runs each node's `_backward` in reverse topological order."""

    def __init__(self, data: float, _parents: tuple[Value, ...] = (), _op: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self._parents = _parents
        self._op = _op
        self._backward: Callable[[], None] = lambda: None

    @classmethod
    def lift(cls, x: Any) -> Value:
        return x if isinstance(x, Value) else cls(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.data!r}, grad={self.grad!r})"

    # --- primitives: one node each --------------------------------------------------------------

    def __add__(self, other: Any) -> Value:
        other = self.lift(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Any) -> Value:
        other = self.lift(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += out.grad * other.data
            other.grad += out.grad * self.data

        out._backward = _backward
        return out

    def __pow__(self, k: float) -> Value:
        if not isinstance(k, (int, float)):
            raise TypeError(f"Value ** {type(k).__name__}: only a number exponent is supported")
        out = type(self)(self.data**k, (self,), f"**{k}")

        def _backward() -> None:
            self.grad += out.grad * k * self.data ** (k - 1)

        out._backward = _backward
        return out

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        out = type(self)(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += out.grad * (1.0 - t * t)

        out._backward = _backward
        return out

    def exp(self) -> Value:
        out = type(self)(math.exp(self.data), (self,), "exp")

        def _backward() -> None:
            self.grad += out.grad * out.data

        out._backward = _backward
        return out

    # --- built from the primitives --------------------------------------------------------------

    def __neg__(self) -> Value:
        return self * -1.0

    def __sub__(self, other: Any) -> Value:
        return self + (-self.lift(other))

    def __truediv__(self, other: Any) -> Value:
        return self * self.lift(other) ** -1.0

    def __radd__(self, other: Any) -> Value:
        return self + other

    def __rmul__(self, other: Any) -> Value:
        return self * other

    def __rsub__(self, other: Any) -> Value:
        return self.lift(other) + (-self)

    def __rtruediv__(self, other: Any) -> Value:
        return self.lift(other) * self**-1.0

    def backward(self) -> None:
        order: list[Value] = []
        seen: set[int] = set()
        stack: list[tuple[Value, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in node._parents)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


class MulNoUpstream(Value):
    """`Value` whose mul forgets the upstream gradient: right only where it is 1."""

    def __mul__(self, other: Any) -> Value:
        other = self.lift(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data
            other.grad += self.data

        out._backward = _backward
        return out


class NegOwnNode(Value):
    """`Value` with negation a node of its own: subtraction is built from add and neg."""

    def __neg__(self) -> Value:
        out = type(self)(-self.data, (self,), "neg")

        def _backward() -> None:
            self.grad -= out.grad

        out._backward = _backward
        return out
