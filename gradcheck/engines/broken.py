"""Deliberately broken engines: the harness must catch every one (and pass the unbroken one).

`TinyValue` is a small, correct scalar engine in micrograd's style (a node stores its op, its
arguments and its data; backward walks a topological order). Each broken engine flips one
switch in it, reproducing a bug seen in real engines. They plug into the harness through the
same adapter protocol as any third-party engine (`TinyAdapter` and its subclasses).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.graphs.registry import SCALAR_OPS
from minigrad import tensor_ops
from minigrad.tensor import apply_op
from minigrad.tensor_ops import TensorOp


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


class TinyValue:
    """A scalar node. The class attributes are the bug switches, all off in the correct engine."""

    __slots__ = ("data", "grad", "op", "args", "const", "height")

    assign_grads: ClassVar[bool] = False  # `grad = contribution` instead of `grad += contribution`
    wrong_cos: ClassVar[bool] = False  # d/dx cos x = +sin x (sign error in one local derivative)
    seed_scale: ClassVar[float] = 1.0  # the backward seed; 1 + 1e-6 makes every gradient off by 1e-6
    bfs_order: ClassVar[bool] = False  # breadth-first order instead of a topological order
    shared_scale: ClassVar[float] = 1.0  # factor on later contributions into a shared interior node
    deep_limit: ClassVar[int | None] = None  # nodes higher than this scale their gradients by 1 + 1e-6

    def __init__(self, data: float, op: str = "", args: tuple[TinyValue, ...] = (), const: float = 0.0):
        self.data = float(data)
        self.grad = 0.0
        self.op = op
        self.args = args
        self.const = const
        self.height = 1 + max((a.height for a in args), default=-1)  # longest path down to a leaf

    def _new(self, data: float, op: str, args: tuple[TinyValue, ...], const: float = 0.0) -> TinyValue:
        return type(self)(data, op, args, const)

    def _wrap(self, other: Any) -> TinyValue:
        return other if isinstance(other, TinyValue) else type(self)(float(other))

    # --- forward rules -------------------------------------------------------------------------

    def __add__(self, other: Any) -> TinyValue:
        other = self._wrap(other)
        return self._new(self.data + other.data, "add", (self, other))

    def __sub__(self, other: Any) -> TinyValue:
        other = self._wrap(other)
        return self._new(self.data - other.data, "sub", (self, other))

    def __mul__(self, other: Any) -> TinyValue:
        other = self._wrap(other)
        return self._new(self.data * other.data, "mul", (self, other))

    def __truediv__(self, other: Any) -> TinyValue:
        other = self._wrap(other)
        return self._new(self.data / other.data, "div", (self, other))

    def __pow__(self, other: Any) -> TinyValue:
        if isinstance(other, TinyValue):
            return self._new(self.data**other.data, "pow", (self, other))
        return self._new(self.data ** float(other), "pow_const", (self,), float(other))

    def __neg__(self) -> TinyValue:
        return self._new(-self.data, "neg", (self,))

    def relu(self) -> TinyValue:
        return self._new(max(self.data, 0.0), "relu", (self,))

    def tanh(self) -> TinyValue:
        return self._new(math.tanh(self.data), "tanh", (self,))

    def sigmoid(self) -> TinyValue:
        return self._new(_sigmoid(self.data), "sigmoid", (self,))

    def exp(self) -> TinyValue:
        return self._new(math.exp(self.data), "exp", (self,))

    def log(self) -> TinyValue:
        return self._new(math.log(self.data), "log", (self,))

    def sin(self) -> TinyValue:
        return self._new(math.sin(self.data), "sin", (self,))

    def cos(self) -> TinyValue:
        return self._new(math.cos(self.data), "cos", (self,))

    def sqrt(self) -> TinyValue:
        return self._new(math.sqrt(self.data), "sqrt", (self,))

    def abs(self) -> TinyValue:
        return self._new(abs(self.data), "abs", (self,))

    # --- derivative rules ----------------------------------------------------------------------

    def local_grads(self) -> tuple[float, ...]:
        """d(self)/d(arg) for each argument."""
        op, out = self.op, self.data
        a = self.args[0].data
        b = self.args[1].data if len(self.args) > 1 else 0.0
        if op == "add":
            return (1.0, 1.0)
        if op == "sub":
            return (1.0, -1.0)
        if op == "mul":
            return (b, a)
        if op == "div":
            return (1.0 / b, -a / (b * b))
        if op == "pow":
            return (b * a ** (b - 1.0) if b != 0 else 0.0, out * math.log(a) if a > 0 else 0.0)
        if op == "pow_const":
            c = self.const
            return (c * a ** (c - 1.0) if c != 0 else 0.0,)
        if op == "neg":
            return (-1.0,)
        if op == "relu":
            return (1.0 if a > 0 else 0.0,)
        if op == "tanh":
            return (1.0 - out * out,)
        if op == "sigmoid":
            return (out * (1.0 - out),)
        if op == "exp":
            return (out,)
        if op == "log":
            return (1.0 / a,)
        if op == "sin":
            return (math.cos(a),)
        if op == "cos":
            return (math.sin(a) if self.wrong_cos else -math.sin(a),)
        if op == "sqrt":
            return (0.5 / out,)
        if op == "abs":
            return (math.copysign(1.0, a) if a != 0 else 0.0,)
        raise ValueError(f"TinyValue: no derivative rule for op {op!r}")

    # --- backward ------------------------------------------------------------------------------

    def order(self) -> list[TinyValue]:
        """Every node self depends on, inputs before the ops that use them."""
        if self.bfs_order:
            seen, queue = {id(self)}, [self]
            for node in queue:
                for arg in node.args:
                    if id(arg) not in seen:
                        seen.add(id(arg))
                        queue.append(arg)
            return queue[::-1]
        order: list[TinyValue] = []
        placed: set[int] = set()
        stack: list[tuple[TinyValue, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in placed:
                continue
            if expanded:
                placed.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((arg, False) for arg in node.args if id(arg) not in placed)
        return order

    def backward(self) -> None:
        order = self.order()
        received: dict[int, int] = {}
        self.grad = self.seed_scale
        for node in reversed(order):
            if not node.args:
                continue
            deep = self.deep_limit is not None and node.height > self.deep_limit
            for arg, local in zip(node.args, node.local_grads()):
                contribution = local * node.grad * (1 + 1e-6 if deep else 1.0)
                count = received.get(id(arg), 0)
                received[id(arg)] = count + 1
                if count and arg.args:
                    contribution *= self.shared_scale
                if self.assign_grads:
                    arg.grad = contribution
                else:
                    arg.grad += contribution


class TinyAdapter(EngineAdapter):
    """The correct TinyValue engine: the harness must raise no alarm on it."""

    name = "tiny"
    ops = frozenset(SCALAR_OPS)
    value_type: ClassVar[type[TinyValue]] = TinyValue

    def leaf(self, value: Any) -> TinyValue:
        return self.value_type(float(value))

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        return super().gradients(outputs, inputs, cotangent)


def _broken(name: str, doc: str, **switches: Any) -> type[TinyAdapter]:
    value_type = type(f"TinyValue_{name}", (TinyValue,), {"__slots__": (), **switches})
    return type(
        f"Broken_{name}", (TinyAdapter,), {"name": f"broken-{name}", "value_type": value_type, "__doc__": doc}
    )


AssignGrads = _broken(
    "assign", "Gradients assigned with = instead of accumulated with +=.", assign_grads=True
)
WrongDerivative = _broken("derivative", "A wrong local derivative: d/dx cos x = +sin x.", wrong_cos=True)
OffByMillionth = _broken(
    "1e-6", "Every gradient off by 1e-6 relative (the seed is 1 + 1e-6).", seed_scale=1 + 1e-6
)
WrongOrder = _broken("order", "Backward in breadth-first order, not a topological order.", bfs_order=True)
SharedOnly = _broken(
    "shared",
    "Only shared interior nodes go wrong: later contributions scaled by 1 + 1e-6.",
    shared_scale=1 + 1e-6,
)
DeepOnly = _broken(
    "deep",
    "Only graphs deeper than 50 go wrong: nodes more than 50 ops above a leaf are off by 1e-6.",
    deep_limit=50,
)

BROKEN_ENGINES: dict[str, type[TinyAdapter]] = {
    cls.name: cls for cls in (AssignGrads, WrongDerivative, OffByMillionth, WrongOrder, SharedOnly, DeepOnly)
}


# --- a tensor engine whose broadcasting is not summed back -------------------------------------


def _first_slice_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The bug: leading broadcast dims are summed, but a broadcast size-1 dim keeps only slice 0."""
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    return g[tuple(slice(0, 1) if s == 1 and n != 1 else slice(None) for s, n in zip(shape, g.shape))]


class _UnsummedBroadcast(TensorOp):
    """A binary elementwise op whose gradient is not summed over broadcast size-1 dims."""

    name = "unsummed_broadcast"

    @staticmethod
    def forward(a, b, *, elementwise):
        return elementwise.forward(a, b)

    @staticmethod
    def backward(g, out, a, b, *, needs, elementwise):
        wide_a, wide_b = np.broadcast_to(a, out.shape), np.broadcast_to(b, out.shape)
        grad_a, grad_b = elementwise.backward(g, out, wide_a, wide_b, needs=(True, True))
        return (
            _first_slice_to(grad_a, a.shape) if needs[0] else None,
            _first_slice_to(grad_b, b.shape) if needs[1] else None,
        )


_BINARY_RULES = {
    "add": tensor_ops.Add,
    "sub": tensor_ops.Sub,
    "mul": tensor_ops.Mul,
    "div": tensor_ops.Div,
    "pow": tensor_ops.Pow,
    "maximum": tensor_ops.Maximum,
    "minimum": tensor_ops.Minimum,
}


class UnsummedBroadcast(MinigradTensor):
    """minigrad Tensor with broadcasting not summed back over size-1 dims (first order only)."""

    name = "broken-broadcast"
    create_graph = False

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op in _BINARY_RULES and args[0].shape != args[1].shape:
            return apply_op(_UnsummedBroadcast, tuple(args), elementwise=_BINARY_RULES[op])
        return super().apply(op, args, attrs)


BROKEN_TENSOR_ENGINES: dict[str, type[EngineAdapter]] = {UnsummedBroadcast.name: UnsummedBroadcast}
