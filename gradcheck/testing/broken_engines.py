"""Deliberately broken engines: the harness must catch every one (and pass the unbroken one).

`TinyValue` is a small, correct scalar engine in micrograd's style (a node stores its op, its
arguments and its data; backward walks a topological order). Each broken engine flips one
switch in it, reproducing a bug seen in real engines. They plug into the harness through the
same adapter protocol as any third-party engine (`TinyAdapter` and its subclasses).

The tensor engines are minigrad's Tensor with one thing changed; the indexing one adds its rule
with `minigrad.tensor.apply_op`, the way to give a Tensor an op of one's own (the top-level
`minigrad.apply_op` is Value's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

import minigrad
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.graphs.layout_ops import index_key
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS
from minigrad import Tensor, TensorOp
from minigrad.tensor import apply_op


class TinyValue:
    """A scalar node. The class attributes are the bug switches, all off in the correct engine.

    Every registry scalar op works, by the registry's reference math: `OpSpec.numpy` forward and
    `OpSpec.grads` local derivatives (the engine is tiny because it owns no op rules).
    """

    __slots__ = ("data", "grad", "op", "args", "attrs", "height", "reflected")

    assign_grads: ClassVar[bool] = False  # `grad = contribution` instead of `grad += contribution`
    flipped: ClassVar[str | None] = None  # this op's local derivatives have the wrong sign
    seed_scale: ClassVar[float] = 1.0  # the backward seed; 1 + 1e-6 makes every gradient off by 1e-6
    bfs_order: ClassVar[bool] = False  # breadth-first order instead of a topological order
    shared_scale: ClassVar[float] = 1.0  # factor on later contributions into a shared interior node
    deep_limit: ClassVar[int | None] = None  # nodes higher than this scale their gradients by 1 + 1e-6
    # with a number on the left (`2 - x`, `2 / x`), these ops differentiate as if it were on the right
    wrong_reflected: ClassVar[frozenset[str]] = frozenset()
    zero_power_raises: ClassVar[bool] = False  # d/dx x**0 as 0 * x**-1: ZeroDivisionError at x = 0
    naive: ClassVar[frozenset[str]] = frozenset()  # tanh, sigmoid by their textbook exp formulas

    def __init__(
        self, data: float, op: str = "", args: tuple[TinyValue, ...] = (), attrs: dict[str, Any] | None = None
    ):
        self.data = float(data)
        self.grad = 0.0
        self.op = op
        self.args = args
        self.attrs = attrs or {}
        self.height = 1 + max((a.height for a in args), default=-1)  # longest path down to a leaf
        self.reflected = False

    @classmethod
    def apply(cls, op: str, args: Sequence[TinyValue | float], attrs: dict[str, Any]) -> TinyValue:
        """The node for registry op `op` on `args` (nodes or plain numbers), its value by the
        registry's reference forward (or, for the `naive` ops, by the textbook formula)."""
        nodes = tuple(a if isinstance(a, TinyValue) else cls(float(a)) for a in args)
        if op in cls.naive:
            data = _NAIVE[op](nodes[0].data)
        else:
            with np.errstate(all="ignore"):
                data = REGISTRY[op].numpy([np.float64(a.data) for a in nodes], attrs)
        node = cls(float(data), op, nodes, attrs)
        node.reflected = len(args) == 2 and not isinstance(args[0], TinyValue)
        return node

    def local_grads(self) -> tuple[float, ...]:
        """d(self)/d(arg) for each argument, by the registry's reference derivatives."""
        spec = REGISTRY[self.op]
        if spec.grads is None:
            raise ValueError(f"TinyValue: registry op {self.op!r} has no reference derivative")
        args = [np.float64(a.data) for a in self.args]
        if self.zero_power_raises and self.op == "pow_const" and self.attrs["exponent"] == 0:
            return (0.0 * self.args[0].data ** -1.0,)  # Python floats: raises at 0 like micrograd
        if self.reflected and self.op in self.wrong_reflected:
            with np.errstate(all="ignore"):
                swapped = spec.grads(args[::-1], self.attrs, np.float64(self.data))
            return (0.0, float(swapped[0]))
        with np.errstate(all="ignore"):
            grads = spec.grads(args, self.attrs, np.float64(self.data))
        sign = -1.0 if self.op == self.flipped else 1.0
        return tuple(sign * float(g) for g in grads)

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


# Textbook formulas in Python floats, as naive engines write them: exp overflows (OverflowError)
# past x = 354.9 in tanh and below x = -709.8 in sigmoid, where torch saturates to +-1 and 0.
_NAIVE = {
    "tanh": lambda x: (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1),
    "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
}


class TinyAdapter(EngineAdapter):
    """The correct TinyValue engine: the harness must raise no alarm on it."""

    name = "tiny"
    ops = frozenset(op for op in SCALAR_OPS if REGISTRY[op].grads is not None)
    value_type: ClassVar[type[TinyValue]] = TinyValue

    def leaf(self, value: Any) -> TinyValue:
        return self.value_type(float(value))

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> TinyValue:
        return self.value_type.apply(op, args, attrs)

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        """One backward pass from the cotangent-weighted sum of the outputs."""
        loss = None
        for out, c in zip(outputs, cotangent):
            term = self.apply("mul", [out, self.leaf(float(c))], {})
            loss = term if loss is None else self.apply("add", [loss, term], {})
        assert loss is not None
        loss.backward()
        return [x.grad for x in inputs]


def _broken(name: str, doc: str, **switches: Any) -> type[TinyAdapter]:
    value_type = type(f"TinyValue_{name}", (TinyValue,), {"__slots__": (), **switches})
    return type(
        f"Broken_{name}", (TinyAdapter,), {"name": f"broken-{name}", "value_type": value_type, "__doc__": doc}
    )


AssignGrads = _broken(
    "assign", "Gradients assigned with = instead of accumulated with +=.", assign_grads=True
)
WrongDerivative = _broken("derivative", "A wrong local derivative: d/dx cos x = +sin x.", flipped="cos")
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

WrongRsub = _broken(
    "rsub", "`c - x` differentiated like `x - c`: d/dx is +1.", wrong_reflected=frozenset({"sub"})
)
WrongRtruediv = _broken(
    "rtruediv", "`c / x` differentiated like `x / c`: d/dx is 1/c.", wrong_reflected=frozenset({"div"})
)
ZeroPowerRaises = _broken(
    "pow0",
    "d/dx x**0 computed as 0 * x**-1: ZeroDivisionError at x = 0 (micrograd's bug).",
    zero_power_raises=True,
)
NaiveTanhSigmoid = _broken(
    "naive-exp",
    "tanh as (exp(2x) - 1) / (exp(2x) + 1) and sigmoid as 1 / (1 + exp(-x)) in Python floats: "
    "OverflowError where torch saturates (found by the edge-value check, not random graphs).",
    naive=frozenset({"tanh", "sigmoid"}),
)


class _MulOffByATrillionth(TinyValue):
    __slots__ = ()

    def local_grads(self) -> tuple[Any, ...]:
        grads = super().local_grads()
        return tuple(g * (1 + 1e-12) for g in grads) if self.op == "mul" else grads


class MulOffByATrillionth(TinyAdapter):
    """mul's local derivatives 1 + 1e-12 times the right ones: the smallest bug the rounding
    bounds must still catch on a well-conditioned graph (a few hundred ulps)."""

    name = "mul-off-by-1e-12"
    value_type = _MulOffByATrillionth


BROKEN_ENGINES: dict[str, type[TinyAdapter]] = {
    cls.name: cls
    for cls in (
        AssignGrads,
        WrongDerivative,
        OffByMillionth,
        WrongOrder,
        SharedOnly,
        DeepOnly,
    )
}
# bugs in what a user's expression can hold besides nodes: numbers on either side, exponent 0
BROKEN_CONSTANT_ENGINES: dict[str, type[TinyAdapter]] = {
    cls.name: cls for cls in (WrongRsub, WrongRtruediv, ZeroPowerRaises)
}
# broken only at the edges of float64: the edge-value check catches them, random graphs cannot
BROKEN_EDGE_ENGINES: dict[str, type[TinyAdapter]] = {NaiveTanhSigmoid.name: NaiveTanhSigmoid}


# --- a tensor engine whose broadcasting is not summed back -------------------------------------


def _first_slice_only(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """`x` widened to the broadcast `shape` along its size-1 dims, as copies of which only the first
    is differentiable: the gradient there is upstream's first slice, not the sum over the dim.
    (Leading dims missing from `x` are left to broadcasting, whose gradients are summed.)"""
    for axis in range(-1, -len(x.shape) - 1, -1):
        n = shape[axis]
        if x.shape[axis] == 1 and n != 1:
            x = minigrad.cat([x] + [x.detach()] * (n - 1), dim=axis)
    return x


# the binary elementwise ops that broadcast their arguments
_BROADCASTING = frozenset({"add", "sub", "mul", "div", "pow", "maximum", "minimum"})


class UnsummedBroadcast(MinigradTensor):
    """minigrad Tensor with broadcasting not summed back over size-1 dims (first order only)."""

    name = "broken-broadcast"
    create_graph = False

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        tensors = all(isinstance(a, Tensor) for a in args)  # a constant operand is a plain number
        if op in _BROADCASTING and tensors and args[0].shape != args[1].shape:
            shape = np.broadcast_shapes(args[0].shape, args[1].shape)
            args = [_first_slice_only(a, shape) for a in args]
        return super().apply(op, args, attrs)


class ScalarBroadcast(MinigradTensor):
    """A 0-d operand broadcast against a tensor gets only upstream's first element as its gradient,
    not the sum over every element it was broadcast to (first order only)."""

    name = "broken-scalar-broadcast"
    create_graph = False
    # the elementwise ops and the reductions: the graphs where 0-d operands meet tensors (among all
    # 47 tensor ops, a 200-example hypothesis run rarely puts a 0-d operand beside a tensor)
    ops = frozenset(SCALAR_OPS) | {"sum", "mean", "maximum", "minimum", "matmul", "reshape", "transpose"}

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op in _BROADCASTING and all(isinstance(a, Tensor) for a in args):
            shape = np.broadcast_shapes(args[0].shape, args[1].shape)
            if shape:
                args = [
                    _first_slice_only(a.reshape((1,) * len(shape)), shape) if not a.shape else a for a in args
                ]
        return super().apply(op, args, attrs)


class HalfPrecisionAccumulation(MinigradTensor):
    """Gradients accumulated over the outputs in float16, as an engine with a low-precision
    accumulator does: fine to ~1e-3, so only the float32 check (against torch's float32) sees it."""

    name = "broken-float16-accumulation"
    create_graph = False

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        total: list[Any] = [None] * len(inputs)
        for out, c in zip(outputs, cotangent):
            grads = minigrad.grad([out], list(inputs), [self.constant(c)], allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    acc = np.zeros(g.shape, np.float16) if total[i] is None else total[i]
                    total[i] = (acc + g.data.astype(np.float16)).astype(np.float16)
        return [None if t is None else t.astype(self.dtype) for t in total]


class _AssigningGetItem(TensorOp):
    """Indexing whose gradient is assigned at the index instead of added there: an element picked
    twice keeps one of its cotangents (the scatter of engines that write `grad[index] = g`)."""

    name = "getitem"
    arithmetic = False

    @staticmethod
    def forward(a: np.ndarray, *, index: Any) -> np.ndarray:
        return a[index]

    @staticmethod
    def backward(g: np.ndarray, out: np.ndarray, a: np.ndarray, *, needs: Any, index: Any) -> tuple[Any]:
        grad = np.zeros(a.shape, dtype=g.dtype)
        grad[index] = g
        return (grad,)


class OverwrittenRepeats(MinigradTensor):
    """minigrad Tensor whose indexing overwrites the gradient at a repeated index instead of
    accumulating it (first order only). Not among BROKEN_TENSOR_ENGINES: the seeded stream
    catches it within tens of graphs (parity/tests/test_planted.py), but the self-check's
    hypothesis budget reaches a repeated integer-array index too rarely to count on."""

    name = "broken-index-repeats"
    create_graph = False

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "index":
            return apply_op(_AssigningGetItem, (args[0],), index=index_key(attrs["index"]))
        return super().apply(op, args, attrs)


BROKEN_TENSOR_ENGINES: dict[str, type[EngineAdapter]] = {
    cls.name: cls for cls in (UnsummedBroadcast, ScalarBroadcast)
}
# broken only in float32: caught by the float32 check
BROKEN_FLOAT32_ENGINES: dict[str, type[EngineAdapter]] = {
    HalfPrecisionAccumulation.name: HalfPrecisionAccumulation
}
