"""Engines with the bugs met in autograd engines published by others, for the harness's own tests.

Each reproduces one class of problem the harness must report as exactly one finding (or, for a
correct engine, none): a division through the reciprocal that is right to rounding where an
output cancels exactly (`log(x / x)` is -1.1e-16), a division off by 1e-12 that only a cancelling
output shows, a tanh that puts a node inside `.data`, a tanh computed from exp that loses its
digits near 0, a matmul whose backward knows only matrices (it crashes on `v @ w`), and an amax
that gives each tied maximum the whole gradient.

Beyond minigrad's top-level API, the two tensor bugs subclass minigrad's `MatMul` and `Amax` rules
and reuse the helpers those rules are written with (`swap_last`, `reduced_shape`,
`expand_reduced`), applied with `minigrad.tensor.apply_op` (see `gradcheck.testing`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.engines.minigrad_value import MinigradValue
from minigrad.tensor import apply_op
from minigrad.tensor_dispatch import expand_reduced, reduced_shape
from minigrad.tensor_ops import MatMul, swap_last
from minigrad.tensor_reductions import Amax


class ReciprocalDivision(MinigradValue):
    """A correct engine that divides as `a * b ** -1` (as micrograd does): 1 ulp from torch's
    quotient at times, so `log(x / x)` is -1.1e-16 where torch gives 0. No finding."""

    name = "reciprocal-division"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "div":
            return args[0] * args[1] ** -1.0
        return super().apply(op, args, attrs)


class DivisionOffByAPart(MinigradValue):
    """A quotient 1e-12 (relative) too large: below the forward tolerance of an ordinary output,
    far above the rounding of an output that cancels (`log(x / x)` is 1e-12, not 0)."""

    name = "division-off-by-a-part"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        out = super().apply(op, args, attrs)
        return out * (1.0 + 1e-12) if op == "div" else out


class Scalar:
    """A micrograd-style scalar node: `data`, `grad`, `_prev` and a `_backward` closure."""

    def __init__(self, data: Any, prev: Sequence[Scalar] = ()) -> None:
        self.data = data
        self.grad: Any = 0.0
        self._prev = tuple(prev)
        self._backward: Callable[[], None] = lambda: None

    def __add__(self, other: Any) -> Scalar:
        other = _node(other)
        out = Scalar(self.data + other.data, (self, other))

        def backward() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out._backward = backward
        return out

    def __mul__(self, other: Any) -> Scalar:
        other = _node(other)
        out = Scalar(self.data * other.data, (self, other))

        def backward() -> None:
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = backward
        return out

    def __neg__(self) -> Scalar:
        return self * -1.0

    def __sub__(self, other: Any) -> Scalar:
        return self + (-_node(other))

    def __radd__(self, other: Any) -> Scalar:
        return self + other

    def __rmul__(self, other: Any) -> Scalar:
        return self * other

    def __rsub__(self, other: Any) -> Scalar:
        return _node(other) - self

    def exp(self) -> Scalar:
        out = Scalar(math.exp(_number(self.data)), (self,))

        def backward() -> None:
            self.grad += out.data * out.grad

        out._backward = backward
        return out

    def tanh(self) -> Scalar:
        """tanh from exp, as (e^2x - 1) / (e^2x + 1): right in general, and for small x the
        subtraction keeps few digits (4e-10 relative at 1.75e-7, 1e-4 at 1e-12)."""
        e = math.exp(2.0 * _number(self.data))
        out = Scalar((e - 1.0) / (e + 1.0), (self,))

        def backward() -> None:
            self.grad += (1.0 - out.data**2) * out.grad

        out._backward = backward
        return out

    def backward(self) -> None:
        order: list[Scalar] = []
        seen: set[int] = set()
        stack: list[tuple[Scalar, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node._prev)
        for node in order:
            if node._prev:
                node.grad = 0.0  # interior gradients start afresh; leaves accumulate, as in torch
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def _node(x: Any) -> Scalar:
    return x if isinstance(x, Scalar) else Scalar(x)


def _number(x: Any) -> Any:
    """The number inside `x`, reading through nodes held as data (so that `NodeInData`'s only
    symptom is the type of its answers, not a crash of the ops after its tanh)."""
    while isinstance(x, Scalar):
        x = x.data
    return x


class ExpTanh(EngineAdapter):
    """`Scalar` (+ - * neg exp tanh): its exp-based tanh is a wrong value at tiny inputs only."""

    name = "exp-tanh"
    ops = frozenset({"add", "sub", "mul", "neg", "exp", "tanh"})

    def leaf(self, value: Any) -> Scalar:
        return Scalar(float(value))


class _NodeInDataTanh(Scalar):
    """A tanh computed on the node itself instead of its number: its `.data` holds a node."""

    def tanh(self) -> Scalar:
        e = (self * 2.0).exp()
        t = (e - 1.0) * (e + 1.0).data ** -1.0
        out = _NodeInDataTanh(t, (self,))

        def backward() -> None:
            self.grad += (1.0 - t * t).data * out.grad

        out._backward = backward
        return out


class NodeInData(ExpTanh):
    """`Scalar` whose tanh answers with a node inside `.data`: a wrong-type finding against tanh."""

    name = "node-in-data"

    def leaf(self, value: Any) -> Scalar:
        return _NodeInDataTanh(float(value))


class _MatrixOnlyMatMul(MatMul):
    """The matrix rule `g @ b^T`, `a^T @ g` for a vector operand too: a vector has no two axes
    to swap, so the backward of `v @ w` (or of a matrix-vector product) raises."""

    @staticmethod
    def backward(g, out, a, b, *, needs):
        if a.ndim == 1 or b.ndim == 1:
            return g @ swap_last(b), swap_last(a) @ g
        return MatMul.backward(g, out, a, b, needs=needs)


class VectorMatMulCrashes(MinigradTensor):
    """minigrad.Tensor with a matmul whose backward crashes on 1-D operands (found in two engines)."""

    name = "vector-matmul-crashes"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "matmul":
            return apply_op(_MatrixOnlyMatMul, tuple(args))
        return super().apply(op, args, attrs)


class _AmaxAllToEveryTie(Amax):
    """amax whose gradient goes in full to every entry equal to the maximum: at a two-way tie its
    partials sum to 2, not 1 (no subgradient)."""

    @staticmethod
    def backward(g, out, a, *, needs, axes, keepdim):
        hit = a == np.reshape(out, reduced_shape(a.shape, axes))
        return (expand_reduced(g, a.shape, axes, keepdim) * hit,)


class AmaxTiesDoubled(MinigradTensor):
    """minigrad.Tensor whose amax hands the whole gradient to each tied maximum: right everywhere
    but at a tie, which random graphs reach only when they draw equal entries."""

    name = "amax-ties-doubled"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "amax":
            ndim = args[0].ndim
            axes = tuple(sorted(d % ndim for d in attrs["dims"]))
            return apply_op(_AmaxAllToEveryTie, (args[0],), axes=axes, keepdim=False)
        return super().apply(op, args, attrs)


__all__ = [
    "AmaxTiesDoubled",
    "DivisionOffByAPart",
    "ExpTanh",
    "NodeInData",
    "ReciprocalDivision",
    "Scalar",
    "VectorMatMulCrashes",
]
