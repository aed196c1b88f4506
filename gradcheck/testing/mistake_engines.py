"""Micrograd-style value classes with one wrong local derivative: the learner's mistakes that a
finding names (`gradcheck.campaign.mistake_match`).

`Value` has every scalar op of the table (`gradcheck.graphs.mistakes`), each node with the
`_backward` closure a tutorial writes, its local derivatives written out here in Python's `math`
(independently of the registry's numpy rules). `planted(op, mistake)` is `Value` with one op's
partial computed by a table entry's rule instead, as a learner would have written it (times
out.grad, or without it). Three mistakes are also written out by hand, as in a tutorial
(`TanhOneMinusT`, `PowUnreduced`, `MulWithoutUpstream`), and one wrong derivative the table does
not hold (`ExpDoubled`): a wrong gradient with no name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

from gradcheck.graphs.mistakes import Mistake

Partials = Callable[[], tuple[float, ...]]


def _log(x: float) -> float:
    return math.log(x) if x > 0 else math.nan


class Value:
    """A scalar with a gradient, as the tutorials build it: `data`, `grad`, `_parents`, `_op` and
    a `_backward` closure per node; `backward()` seeds the root with 1 and runs the closures in
    reverse topological order. `PLANTED`: (op, operand) -> (rule, whether it uses out.grad)."""

    PLANTED: ClassVar[dict[tuple[str, int], tuple[Callable[..., Any], bool]]] = {}

    def __init__(self, data: float, _parents: tuple[Value, ...] = (), _op: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self._parents = _parents
        self._op = _op
        self._backward: Callable[[], None] = lambda: None

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    def _lift(self, other: Any) -> Value:
        return other if isinstance(other, Value) else type(self)(other)

    def _node(
        self, op: str, data: float, parents: tuple[Value, ...], partials: Partials, **attrs: Any
    ) -> Value:
        """The result of `op` on `parents`, its backward adding out.grad times each local derivative."""
        out = type(self)(data, parents, op)
        planted = type(self).PLANTED

        def _backward() -> None:
            for j, (parent, d) in enumerate(zip(parents, partials())):
                wrong = planted.get((op, j))
                if wrong is None:
                    parent.grad += out.grad * d
                    continue
                rule, upstream = wrong
                written = float(rule([p.data for p in parents], attrs, out.data))
                parent.grad += out.grad * written if upstream else written

        out._backward = _backward
        return out

    # --- arithmetic -----------------------------------------------------------------------------

    def __add__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._node("add", self.data + other.data, (self, other), lambda: (1.0, 1.0))

    def __sub__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._node("sub", self.data - other.data, (self, other), lambda: (1.0, -1.0))

    def __mul__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._node("mul", self.data * other.data, (self, other), lambda: (other.data, self.data))

    def __truediv__(self, other: Any) -> Value:
        other = self._lift(other)
        x, y = self.data, other.data
        return self._node("div", x / y, (self, other), lambda: (1.0 / y, -x / (y * y)))

    def __pow__(self, other: Any) -> Value:
        x = self.data
        if isinstance(other, Value):
            y = other.data
            out = x**y
            return self._node("pow", out, (self, other), lambda: (y * x ** (y - 1.0), out * _log(x)))
        n = float(other)
        return self._node(
            "pow_const", x**n, (self,), lambda: (n * x ** (n - 1.0) if n != 0 else 0.0,), exponent=n
        )

    def __neg__(self) -> Value:
        return self._node("neg", -self.data, (self,), lambda: (-1.0,))

    def __radd__(self, other: Any) -> Value:
        return self._lift(other) + self

    def __rsub__(self, other: Any) -> Value:
        return self._lift(other) - self

    def __rmul__(self, other: Any) -> Value:
        return self._lift(other) * self

    def __rtruediv__(self, other: Any) -> Value:
        return self._lift(other) / self

    def __rpow__(self, other: Any) -> Value:
        return self._lift(other) ** self

    # --- functions ------------------------------------------------------------------------------

    def relu(self) -> Value:
        x = self.data
        return self._node("relu", max(x, 0.0), (self,), lambda: (1.0 if x > 0 else 0.0,))

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        return self._node("tanh", t, (self,), lambda: (1.0 - t * t,))

    def sigmoid(self) -> Value:
        s = 1.0 / (1.0 + math.exp(-self.data))
        return self._node("sigmoid", s, (self,), lambda: (s * (1.0 - s),))

    def exp(self) -> Value:
        e = math.exp(self.data)
        return self._node("exp", e, (self,), lambda: (e,))

    def log(self) -> Value:
        x = self.data
        return self._node("log", math.log(x), (self,), lambda: (1.0 / x,))

    def sin(self) -> Value:
        x = self.data
        return self._node("sin", math.sin(x), (self,), lambda: (math.cos(x),))

    def cos(self) -> Value:
        x = self.data
        return self._node("cos", math.cos(x), (self,), lambda: (-math.sin(x),))

    def atan(self) -> Value:
        x = self.data
        return self._node("atan", math.atan(x), (self,), lambda: (1.0 / (1.0 + x * x),))

    def atan2(self, other: Any) -> Value:
        other = self._lift(other)
        y, x = self.data, other.data
        r2 = x * x + y * y
        return self._node("atan2", math.atan2(y, x), (self, other), lambda: (x / r2, -y / r2))

    def sqrt(self) -> Value:
        r = math.sqrt(self.data)
        return self._node("sqrt", r, (self,), lambda: (0.5 / r,))

    def abs(self) -> Value:
        x = self.data
        return self._node("abs", abs(x), (self,), lambda: (float((x > 0) - (x < 0)),))

    def __abs__(self) -> Value:
        return self.abs()

    # --- backward -------------------------------------------------------------------------------

    def backward(self) -> None:
        topo: list[Value] = []
        visited: set[int] = set()
        stack: list[tuple[Value, bool]] = [(self, False)]
        while stack:  # iterative: a deep chain is no recursion limit here
            v, done = stack.pop()
            if done:
                topo.append(v)
            elif id(v) not in visited:
                visited.add(id(v))
                stack.append((v, True))
                stack.extend((p, False) for p in v._parents)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


def planted(op: str, mistake: Mistake) -> type[Value]:
    """`Value` with `op`'s partial for operand `mistake.operand` computed by the entry's rule."""
    name = f"Planted_{op}_{mistake.key}_{mistake.operand}"
    return type(name, (Value,), {"PLANTED": {(op, mistake.operand): (mistake.rule, mistake.upstream)}})


class TanhOneMinusT(Value):
    """tanh's derivative written `1 - t` (the tutorial's `1 - t**2` with the square dropped)."""

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        out = type(self)(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t) * out.grad

        out._backward = _backward
        return out


class PowUnreduced(Value):
    """`x ** n`'s derivative written `n * x**n` (the power not reduced)."""

    def __pow__(self, other: Any) -> Value:
        if isinstance(other, Value):
            return super().__pow__(other)
        n = float(other)
        out = type(self)(self.data**n, (self,), f"**{n}")

        def _backward() -> None:
            self.grad += (n * self.data**n) * out.grad

        out._backward = _backward
        return out


class MulWithoutUpstream(Value):
    """mul's backward without out.grad: `self.grad += other.data`, `other.grad += self.data`."""

    def __mul__(self, other: Any) -> Value:
        other = self._lift(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data
            other.grad += self.data

        out._backward = _backward
        return out


class ExpDoubled(Value):
    """exp's derivative written `2 * e**x`: wrong, and no entry of the table."""

    def exp(self) -> Value:
        e = math.exp(self.data)
        out = type(self)(e, (self,), "exp")

        def _backward() -> None:
            self.grad += 2 * e * out.grad

        out._backward = _backward
        return out
