"""A micrograd-style scalar engine (Python floats and `math`) with one planted gradient bug, for
`bench_sensitivity.py`: op PLANTED_OP ("mul" or "tanh") differentiates to (1 + PLANTED_DELTA)
times its right local derivative. With PLANTED_DELTA=0 it is correct.

Checked as any user's value class is, with no adapter (`--engine benchmarks/planted_value.py:Value`),
so a harness of any commit runs it the same way.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

PLANTED_OP = os.environ.get("PLANTED_OP", "mul")
PLANTED_DELTA = float(os.environ.get("PLANTED_DELTA", "0"))


def _factor(op: str) -> float:
    return 1.0 + PLANTED_DELTA if op == PLANTED_OP else 1.0


class Value:
    """A scalar node: its number, its gradient, the nodes it was made from and how it passes a
    gradient back to them."""

    def __init__(self, data: float, parents: tuple[Value, ...] = ()) -> None:
        self.data = float(data)
        self.grad = 0.0
        self.parents = parents
        self.pass_back: Callable[[], None] = lambda: None

    @staticmethod
    def of(x: Any) -> Value:
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other: Any) -> Value:
        other = Value.of(other)
        out = Value(self.data + other.data, (self, other))

        def pass_back() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out.pass_back = pass_back
        return out

    def __mul__(self, other: Any) -> Value:
        other = Value.of(other)
        out = Value(self.data * other.data, (self, other))
        factor = _factor("mul")

        def pass_back() -> None:
            self.grad += factor * other.data * out.grad
            other.grad += factor * self.data * out.grad

        out.pass_back = pass_back
        return out

    def __pow__(self, exponent: float) -> Value:
        if not isinstance(exponent, (int, float)):
            return NotImplemented
        out = Value(self.data**exponent, (self,))

        def pass_back() -> None:
            slope = 0.0 if exponent == 0 else exponent * self.data ** (exponent - 1)
            self.grad += slope * out.grad

        out.pass_back = pass_back
        return out

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        out = Value(t, (self,))
        factor = _factor("tanh")

        def pass_back() -> None:
            self.grad += factor * (1.0 - t * t) * out.grad

        out.pass_back = pass_back
        return out

    def exp(self) -> Value:
        out = Value(math.exp(self.data), (self,))

        def pass_back() -> None:
            self.grad += out.data * out.grad

        out.pass_back = pass_back
        return out

    def relu(self) -> Value:
        out = Value(self.data if self.data > 0 else 0.0, (self,))

        def pass_back() -> None:
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad

        out.pass_back = pass_back
        return out

    def __neg__(self) -> Value:
        return self * -1.0

    def __sub__(self, other: Any) -> Value:
        return self + (-Value.of(other))

    def __truediv__(self, other: Any) -> Value:
        return self * Value.of(other) ** -1.0

    def __radd__(self, other: Any) -> Value:
        return self + other

    def __rmul__(self, other: Any) -> Value:
        return self * other

    def __rsub__(self, other: Any) -> Value:
        return Value.of(other) - self

    def __rtruediv__(self, other: Any) -> Value:
        return Value.of(other) / self

    def backward(self) -> None:
        """Gradients of this node with respect to every node it depends on (iterative: no
        recursion limit)."""
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
            stack.extend((p, False) for p in node.parents if id(p) not in seen)
        self.grad = 1.0
        for node in reversed(order):
            node.pass_back()
