"""The engine a learner types in from an autograd-from-scratch tutorial, and that engine with one
learner's mistake each.

`TutorialValue` is a scalar micrograd-style engine as such tutorials have it written: a
`_backward` closure per node, the operands kept in a set (`_prev`), an `_op` string, a recursive
topological sort with a visited set, negation as `self * -1`, subtraction as `self + (-other)`,
division as `self * other ** -1` and a power with a constant exponent only. It is correct but for
one real difference from torch that the tutorial's power rule has: `x ** 0` at `x = 0` raises
ZeroDivisionError inside `n * x ** (n - 1)`, where torch's gradient is 0. It is kept so.

Every other class is `TutorialValue` with one mistake, in the one method that holds it, written as a
learner's line would be; its docstring says the mistake in a learner's words.
`gradcheck.testing.tutorial_mistakes.MISTAKES` says, as plain data, what the harness should report
first for each.

Campaigns load them by spec, with no adapter, as a learner would run their own file:
`gradcheck run --engine gradcheck.testing.tutorial_engines:TanhOneMinusT`.
"""

from __future__ import annotations

import math
from typing import Any


class _TutorialCore:
    """Everything of the tutorial's engine but `__rsub__` (so that one variant can lack it)."""

    def __init__(self, data: float, _children: tuple[Any, ...] = (), _op: str = "") -> None:
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None  # sends this node's grad on to its operands
        self._prev = set(_children)
        self._op = _op

    def __repr__(self) -> str:
        return f"{type(self).__name__}(data={self.data}, grad={self.grad})"

    def __add__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, n: Any) -> Any:
        assert isinstance(n, (int, float)), "the exponent must be a plain number"
        out = type(self)(self.data**n, (self,), f"**{n}")

        def _backward() -> None:
            self.grad += n * self.data ** (n - 1) * out.grad

        out._backward = _backward
        return out

    def __neg__(self) -> Any:
        return self * -1

    def __sub__(self, other: Any) -> Any:
        return self + (-other)

    def __truediv__(self, other: Any) -> Any:
        return self * other**-1

    def __radd__(self, other: Any) -> Any:
        return self + other

    def __rmul__(self, other: Any) -> Any:
        return self * other

    def __rtruediv__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        return other * self**-1

    def relu(self) -> Any:
        out = type(self)(max(0, self.data), (self,), "ReLU")

        def _backward() -> None:
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad

        out._backward = _backward
        return out

    def tanh(self) -> Any:
        t = math.tanh(self.data)
        out = type(self)(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out

    def sigmoid(self) -> Any:
        s = 1 / (1 + math.exp(-self.data))
        out = type(self)(s, (self,), "sigmoid")

        def _backward() -> None:
            self.grad += s * (1 - s) * out.grad

        out._backward = _backward
        return out

    def exp(self) -> Any:
        out = type(self)(math.exp(self.data), (self,), "exp")

        def _backward() -> None:
            self.grad += out.data * out.grad  # e^x is its own derivative

        out._backward = _backward
        return out

    def log(self) -> Any:
        out = type(self)(math.log(self.data), (self,), "log")

        def _backward() -> None:
            self.grad += (1 / self.data) * out.grad

        out._backward = _backward
        return out

    def backward(self) -> None:
        order = topological_order(self)  # the recursive sort with its visited set
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def topological_order(root: Any) -> list[Any]:
    """The nodes below `root` (itself last), each after its operands, as the tutorial's
    `backward()` sorts them: for the variants whose mistake is in what `backward()` does next."""
    order: list[Any] = []
    seen: set[Any] = set()

    def build_topo(node: Any) -> None:
        if node not in seen:
            seen.add(node)
            for child in node._prev:
                build_topo(child)
            order.append(node)

    build_topo(root)
    return order


class TutorialValue(_TutorialCore):
    """The tutorial's engine, typed in without a mistake."""

    def __rsub__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        return other + (-self)


class AddAssigns(TutorialValue):
    """ "I wrote `=` in add's backward: each side just gets out's gradient." (`x + x` gets 1, not 2.)"""

    def __add__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad = out.grad
            other.grad = out.grad

        out._backward = _backward
        return out


class AddAssignsFirst(TutorialValue):
    """ "I wrote `=` for self in add's backward" (and `+=` for other): `x + x` is still 2, since
    the second line adds to what the first set; a node used again elsewhere loses a gradient
    whenever add's backward runs after the other use's."""

    def __add__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad = out.grad
            other.grad += out.grad

        out._backward = _backward
        return out


class MulAssigns(TutorialValue):
    """ "In mul's backward I set the gradients with `=` instead of adding to them." (`x * x`.)"""

    def __mul__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad

        out._backward = _backward
        return out


class MulNoUpstream(TutorialValue):
    """ "The derivative of x*y with respect to x is y, so I gave x the other side's data." (No
    `out.grad` factor.)"""

    def __mul__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data
            other.grad += self.data

        out._backward = _backward
        return out


class TanhNoUpstream(TutorialValue):
    """ "tanh's derivative is 1 - t², so that is what the input gets." (Upstream gradient forgotten.)"""

    def tanh(self) -> Any:
        t = math.tanh(self.data)
        out = type(self)(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += 1 - t * t

        out._backward = _backward
        return out


class TanhOneMinusT(TutorialValue):
    """ "tanh' is one minus t... I dropped the square." (`1 - t` for `1 - t**2`.)"""

    def tanh(self) -> Any:
        t = math.tanh(self.data)
        out = type(self)(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t) * out.grad

        out._backward = _backward
        return out


class PowUnreduced(TutorialValue):
    """ "Bring the exponent down in front: n times x to the n." (The power not reduced by one.)"""

    def __pow__(self, n: Any) -> Any:
        assert isinstance(n, (int, float)), "the exponent must be a plain number"
        out = type(self)(self.data**n, (self,), f"**{n}")

        def _backward() -> None:
            self.grad += n * self.data**n * out.grad

        out._backward = _backward
        return out


class PowRaised(TutorialValue):
    """ "n times x to the n plus one, I think?" (The power changed by one, the wrong way.)"""

    def __pow__(self, n: Any) -> Any:
        assert isinstance(n, (int, float)), "the exponent must be a plain number"
        out = type(self)(self.data**n, (self,), f"**{n}")

        def _backward() -> None:
            self.grad += n * self.data ** (n + 1) * out.grad

        out._backward = _backward
        return out


class ExpUsesInput(TutorialValue):
    """ "exp is its own derivative, so I multiplied by the data." (The input's, not the output's.)"""

    def exp(self) -> Any:
        out = type(self)(math.exp(self.data), (self,), "exp")

        def _backward() -> None:
            self.grad += self.data * out.grad

        out._backward = _backward
        return out


class LogOverOutput(TutorialValue):
    """ "d log is one over... the value, so one over out.data." (The output where the input belongs.)"""

    def log(self) -> Any:
        out = type(self)(math.log(self.data), (self,), "log")

        def _backward() -> None:
            self.grad += (1 / out.data) * out.grad

        out._backward = _backward
        return out


class LogTimesInput(TutorialValue):
    """ "log's backward multiplies by x." (x where 1/x belongs.)"""

    def log(self) -> Any:
        out = type(self)(math.log(self.data), (self,), "log")

        def _backward() -> None:
            self.grad += self.data * out.grad

        out._backward = _backward
        return out


class ReluFlipped(TutorialValue):
    """ "relu passes the gradient where x is below zero." (The comparison the wrong way round.)"""

    def relu(self) -> Any:
        out = type(self)(max(0, self.data), (self,), "ReLU")

        def _backward() -> None:
            self.grad += (1.0 if self.data < 0 else 0.0) * out.grad

        out._backward = _backward
        return out


class ReluTimesOutput(TutorialValue):
    """ "relu's backward multiplies by out.data, like exp's does." (The output for the 0/1 step.)"""

    def relu(self) -> Any:
        out = type(self)(max(0, self.data), (self,), "ReLU")

        def _backward() -> None:
            self.grad += out.data * out.grad

        out._backward = _backward
        return out


class SigmoidIsS(TutorialValue):
    """ "sigmoid's derivative is sigmoid itself, like exp." (`s` for `s * (1 - s)`.)"""

    def sigmoid(self) -> Any:
        s = 1 / (1 + math.exp(-self.data))
        out = type(self)(s, (self,), "sigmoid")

        def _backward() -> None:
            self.grad += s * out.grad

        out._backward = _backward
        return out


class NoVisited(TutorialValue):
    """ "My build_topo just recurses into the children; I left out the visited set." (A node reached
    by two paths is listed, and back-propagated, twice.)"""

    def backward(self) -> None:
        order: list[Any] = []

        def build_topo(node: Any) -> None:
            for child in node._prev:
                build_topo(child)
            order.append(node)

        build_topo(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


class NoSeed(TutorialValue):
    """ "backward() sorts the nodes and calls each `_backward`." (The root's grad is never set to 1,
    so every gradient stays 0.)"""

    def backward(self) -> None:
        order = topological_order(self)
        for node in reversed(order):
            node._backward()


class SeedEveryNode(TutorialValue):
    """ "Each node's grad starts at 1 before its `_backward` runs." (The seed set at every node, not
    only the root.)"""

    def backward(self) -> None:
        order = topological_order(self)
        for node in reversed(order):
            node.grad = 1.0
            node._backward()


class MulOwnOperand(TutorialValue):
    """ "Each side of a product gets its own value times out.grad." (`self.data` for self and
    `other.data` for other, where each needs the other's.)"""

    def __mul__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += self.data * out.grad
            other.grad += other.data * out.grad

        out._backward = _backward
        return out


class DivSquareLost(TutorialValue):
    """ "Division gets its own backward: 1/y for x, -x/y for y." (The square of y lost in -x/y².)"""

    def __truediv__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        out = type(self)(self.data / other.data, (self, other), "/")

        def _backward() -> None:
            self.grad += (1 / other.data) * out.grad
            other.grad += (-self.data / other.data) * out.grad

        out._backward = _backward
        return out


class AddNoWrap(TutorialValue):
    """ "`__add__` adds the two `.data`s." (A number is never wrapped in a Value first: `x + 2.0`
    and, through `__radd__`, `2.0 + x` raise AttributeError.)"""

    def __add__(self, other: Any) -> Any:
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out


class NotReversed(TutorialValue):
    """ "backward() sorts the nodes and runs them in that order." (`reversed` left out: each node's
    `_backward` runs before the nodes above it have sent it their gradient.)"""

    def backward(self) -> None:
        order = topological_order(self)
        self.grad = 1.0
        for node in order:
            node._backward()


class NoRsub(_TutorialCore):
    """ "I wrote `__radd__` and `__rmul__`; `2 - x` never came up." (No `__rsub__`: a number minus a
    Value raises TypeError.)"""


class RsubSwapped(TutorialValue):
    """ "`__rsub__` is subtraction, so self - other." (It computes `x - 2` for `2 - x`.)"""

    def __rsub__(self, other: Any) -> Any:
        other = other if isinstance(other, _TutorialCore) else type(self)(other)
        return self + (-other)
