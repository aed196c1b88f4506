"""Correct engines that evaluate otherwise than torch: another valid order, another accurate formula.

Each computes the exact chain rule in float64 and rounds as a correct program does, but not as
torch does, so its answers differ from torch's by rounding alone: the harness must report no bug
on any of them. No bug is planted.

- `LocalValue`: a micrograd-style scalar whose local derivatives are computed when a node is built
  (the registry's reference formulas) and multiplied into the upstream gradient over a
  topological order: `g * ((1 - s) * s)` where torch rounds `(g * (1 - s)) * s`;
- `PathSumValue`: no topological sort: backward goes down every path from the output, multiplying
  the local derivatives along it, and adds each path's product into every node it passes; a leaf's
  gradient is the sum over its paths, added one path at a time. Its time grows with the number of
  paths, exponential in the depth of a ladder of shared nodes: `PathSum` caps graphs at 30 ops,
  `UncappedPathSum` does not;
- `ReversedSumValue`: each node's contributions summed in the reverse of the order they arrive in
  (a sum of three or more rounds otherwise);
- `ReciprocalValue`: division as `a * b ** -1` and `c / x` as `c * x ** -1`, two nodes each
  (micrograd's spelling);
- `ReciprocalPathSumValue`: `PathSumValue`'s backward and `ReciprocalValue`'s division (a micrograd
  clone without a topological sort);
- `OtherFormulaValue`: the derivatives that have another accurate spelling spelled so: tanh' as
  `1 / cosh(x) ** 2`, sigmoid' as `e^-|x| / (1 + e^-|x|) ** 2`, log' as `x ** -1`, sqrt' as
  `0.5 * x ** -0.5`, d(a / b)/db as `-a * b ** -2`, d(a ** b)/da as `b * (a ** b) / a`;
- `ReciprocalTensor`: minigrad's Tensor with division as `a * b ** -1`;
- `ExplicitJacobianTensor`: minigrad's Tensor whose softmax and log_softmax backward multiply by
  their explicit Jacobians (`diag(s) - s sᵀ`, `I - 1 sᵀ`) and whose matmul and linear backward add
  their products one by one from the last to the first (numpy's matmul sums in blocks).

The scalar engines are one class (`LocalValue`) with the op table of the registry's reference math
(`OpSpec.numpy`, `OpSpec.grads`, as `broken_engines.TinyValue`) and operators in micrograd's
spelling, so that the harness can also drive them with no adapter (`--engine
gradcheck.testing.reordered_engines:PathSumValue`); each variant overrides the table or the
backward. As in torch, a backward pass starts interior gradients afresh and adds into the leaves'.
`ExplicitJacobianTensor` subclasses minigrad's `Softmax`, `LogSoftmax`, `MatMul`, `Linear` and
`LinearReLU` rules and is applied with `minigrad.tensor.apply_op` (see `gradcheck.testing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS
from gradcheck.testing.structural_engines import topological_order
from minigrad import Tensor
from minigrad.functional import Linear, LinearReLU, LogSoftmax, Softmax
from minigrad.tensor import apply_op
from minigrad.tensor_dispatch import sum_to, swap_last
from minigrad.tensor_ops import MatMul

# (operands, attributes, result) -> one local derivative per operand, as numpy float64 numbers
Derivative = Callable[[Sequence[Any], dict[str, Any], Any], Sequence[Any]]


class LocalValue:
    """A scalar node: its value, its gradient, its operand nodes and d(self)/d(operand) for each."""

    __slots__ = ("data", "grad", "_prev", "_local")

    # derivatives other than the registry's reference formulas, by registry op
    formulas: ClassVar[dict[str, Derivative]] = {}

    def __init__(self, data: float, prev: tuple[LocalValue, ...] = (), local: tuple[float, ...] = ()) -> None:
        self.data = float(data)
        self.grad = 0.0
        self._prev = prev
        self._local = local

    def __repr__(self) -> str:
        return f"{type(self).__name__}(data={self.data!r}, grad={self.grad!r})"

    # --- building -------------------------------------------------------------------------------

    def _apply(self, op: str, *operands: Any, **attrs: Any) -> LocalValue:
        """The node for registry op `op` on `operands` (nodes of this class or plain numbers), its
        value and local derivatives computed now, in float64 with IEEE results (nan, inf) at the edges."""
        numbers = [np.float64(o.data if isinstance(o, LocalValue) else o) for o in operands]
        derivative = self.formulas.get(op) or REGISTRY[op].grads
        assert derivative is not None, f"registry op {op!r} has no reference derivative"
        with np.errstate(all="ignore"):
            out = REGISTRY[op].numpy(numbers, attrs)
            local = derivative(numbers, attrs, out)
        kept = [(o, float(d)) for o, d in zip(operands, local) if isinstance(o, LocalValue)]
        return type(self)(float(out), tuple(o for o, _ in kept), tuple(d for _, d in kept))

    def __add__(self, other: Any) -> LocalValue:
        return self._apply("add", self, other)

    def __radd__(self, other: Any) -> LocalValue:
        return self._apply("add", other, self)

    def __sub__(self, other: Any) -> LocalValue:
        return self._apply("sub", self, other)

    def __rsub__(self, other: Any) -> LocalValue:
        return self._apply("sub", other, self)

    def __mul__(self, other: Any) -> LocalValue:
        return self._apply("mul", self, other)

    def __rmul__(self, other: Any) -> LocalValue:
        return self._apply("mul", other, self)

    def __truediv__(self, other: Any) -> LocalValue:
        return self._apply("div", self, other)

    def __rtruediv__(self, other: Any) -> LocalValue:
        return self._apply("div", other, self)

    def __pow__(self, other: Any) -> LocalValue:
        if isinstance(other, LocalValue):
            return self._apply("pow", self, other)
        return self._apply("pow_const", self, exponent=float(other))

    def __rpow__(self, other: Any) -> LocalValue:
        return self._apply("pow", other, self)

    def __neg__(self) -> LocalValue:
        return self._apply("neg", self)

    def __abs__(self) -> LocalValue:
        return self._apply("abs", self)

    def abs(self) -> LocalValue:
        return self._apply("abs", self)

    def relu(self) -> LocalValue:
        return self._apply("relu", self)

    def tanh(self) -> LocalValue:
        return self._apply("tanh", self)

    def sigmoid(self) -> LocalValue:
        return self._apply("sigmoid", self)

    def exp(self) -> LocalValue:
        return self._apply("exp", self)

    def log(self) -> LocalValue:
        return self._apply("log", self)

    def sin(self) -> LocalValue:
        return self._apply("sin", self)

    def cos(self) -> LocalValue:
        return self._apply("cos", self)

    def atan(self) -> LocalValue:
        return self._apply("atan", self)

    def atan2(self, other: Any) -> LocalValue:
        return self._apply("atan2", self, other)

    def sqrt(self) -> LocalValue:
        return self._apply("sqrt", self)

    # --- backward -------------------------------------------------------------------------------

    def operands(self, node: LocalValue) -> Iterator[tuple[LocalValue, float]]:
        """`node`'s operands with their local derivatives, in the order the backward visits them."""
        return zip(node._prev, node._local)

    def order(self) -> list[LocalValue]:
        """Every node self depends on, each after its operands (iterative: no depth limit)."""
        return topological_order(self)

    def fresh_interior(self, nodes: Sequence[LocalValue]) -> None:
        """Interior gradients belong to one pass (leaves accumulate, as in torch)."""
        for node in nodes:
            if node._prev:
                node.grad = 0.0

    def backward(self) -> None:
        """micrograd's: over a topological order, each node adds local * its gradient into its operands'."""
        order = self.order()
        self.fresh_interior(order)
        self.grad += 1.0
        for node in reversed(order):
            for child, local in self.operands(node):
                child.grad += local * node.grad


class PathSumValue(LocalValue):
    """Backward down every path from the output, no topological sort: each path's product of local
    derivatives is added into every node it passes, so a node's gradient is the sum over the paths
    reaching it (the chain rule, summed path by path; exponential in the number of paths)."""

    __slots__ = ()

    def backward(self) -> None:
        self.fresh_interior(self.reachable())
        stack: list[tuple[LocalValue, float]] = [(self, 1.0)]  # an explicit stack: depth is free
        while stack:
            node, product = stack.pop()
            node.grad += product
            stack.extend((child, product * local) for child, local in self.operands(node))

    def reachable(self) -> list[LocalValue]:
        """Every node self depends on, once each, in no particular order."""
        seen = {id(self): self}
        stack = [self]
        while stack:
            for child in stack.pop()._prev:
                if id(child) not in seen:
                    seen[id(child)] = child
                    stack.append(child)
        return list(seen.values())


class ReversedSumValue(LocalValue):
    """`LocalValue`'s backward, but each node's gradient is the sum of its contributions in the
    reverse of the order `LocalValue` adds them in (the last to arrive first)."""

    __slots__ = ()

    def backward(self) -> None:
        order = self.order()
        self.fresh_interior(order)
        arrived: dict[int, list[float]] = {id(self): [1.0]}
        for node in reversed(order):
            contributions = arrived.pop(id(node), [])
            if not contributions:
                continue
            total = contributions[-1]
            for c in reversed(contributions[:-1]):
                total = total + c
            node.grad += total
            for child, local in self.operands(node):
                arrived.setdefault(id(child), []).append(local * total)


class ReciprocalValue(LocalValue):
    """Division as micrograd writes it: `a / b` is `a * b ** -1`, a power node and a product node."""

    __slots__ = ()

    def __truediv__(self, other: Any) -> LocalValue:
        reciprocal = other**-1.0 if isinstance(other, LocalValue) else np.float64(1.0) / np.float64(other)
        return self * reciprocal

    def __rtruediv__(self, other: Any) -> LocalValue:
        return other * self**-1.0


class ReciprocalPathSumValue(PathSumValue, ReciprocalValue):
    """Both: a backward down every path, and division through the reciprocal (a micrograd clone
    without a topological sort)."""

    __slots__ = ()


def _sigmoid_slope(x: Any) -> Any:
    """sigmoid'(x) = e^-|x| / (1 + e^-|x|)²: even in x, and no overflow on either side."""
    e = np.exp(-np.abs(x))
    return e / (1.0 + e) ** 2


def _power_base_slope(a: Any, b: Any, out: Any) -> Any:
    """d(a ** b)/da as b * (a ** b) / a, and torch's rules where that divides by 0: 0 for b = 0,
    b * a ** (b - 1) at a = 0."""
    if b == 0:
        return 0.0
    return b * out / a if a != 0 else b * a ** (b - 1.0)


class OtherFormulaValue(LocalValue):
    """Local derivatives by other accurate formulas than torch's (each within the registry's
    measured accuracy for its op, `OpSpec.accuracy`)."""

    __slots__ = ()

    formulas: ClassVar[dict[str, Derivative]] = {
        "tanh": lambda a, k, out: (1.0 / np.cosh(a[0]) ** 2,),
        "sigmoid": lambda a, k, out: (_sigmoid_slope(a[0]),),
        "log": lambda a, k, out: (a[0] ** -1.0,),
        "sqrt": lambda a, k, out: (0.5 * a[0] ** -0.5,),
        "div": lambda a, k, out: (a[1] ** -1.0, -a[0] * a[1] ** -2.0),
        "pow": lambda a, k, out: (
            _power_base_slope(a[0], a[1], out),
            out * np.log(a[0]) if not (a[0] == 0 and a[1] >= 0) else 0.0 * a[0],
        ),
    }


class LocalDerivatives(EngineAdapter):
    """`LocalValue`: every registry scalar op, spelled with its operators and methods."""

    name = "local-derivatives"
    ops = frozenset(op for op in SCALAR_OPS if REGISTRY[op].grads is not None)
    value_type: ClassVar[type[LocalValue]] = LocalValue

    def leaf(self, value: Any) -> LocalValue:
        return self.value_type(float(value))


class PathSum(LocalDerivatives):
    """`PathSumValue` on graphs of at most 30 ops (the paths of a 30-op graph are at most ~10^5)."""

    name = "path-sum"
    value_type = PathSumValue
    max_depth = 30


class UncappedPathSum(PathSum):
    """`PathSumValue` on every graph a campaign draws: its deep chains of 52-70 ops can have more
    paths than any time limit allows."""

    name = "path-sum-uncapped"
    max_depth = None


class ReversedSum(LocalDerivatives):
    """`ReversedSumValue`."""

    name = "reversed-sum"
    value_type = ReversedSumValue


class DivisionByReciprocal(LocalDerivatives):
    """`ReciprocalValue`."""

    name = "division-by-reciprocal"
    value_type = ReciprocalValue


class ReciprocalPathSum(PathSum):
    """`ReciprocalPathSumValue` on graphs of at most 30 ops."""

    name = "reciprocal-path-sum"
    value_type = ReciprocalPathSumValue


class OtherFormulas(LocalDerivatives):
    """`OtherFormulaValue`."""

    name = "other-formulas"
    value_type = OtherFormulaValue


class ReciprocalTensor(MinigradTensor):
    """minigrad's Tensor dividing through the reciprocal: `a / b` is `a * b ** -1`, minigrad's power
    and product rules (second derivatives included)."""

    name = "tensor-division-by-reciprocal"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op != "div":
            return super().apply(op, args, attrs)
        a, b = args
        if isinstance(b, Tensor):
            return a * b**-1.0
        return a * float(np.float64(b) ** -1.0)  # a number: 1 / 0 is inf, as for a tensor


# --- a tensor engine summing in other orders ---------------------------------------------------------


def reversed_matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ y for (..., m, k) and (..., k, n) (batch dims broadcast): the k products added one by one,
    from the last to the first."""
    k = x.shape[-1]
    if k == 0:
        return np.matmul(x, y)
    total = x[..., :, k - 1 : k] * y[..., k - 1 : k, :]
    for j in range(k - 2, -1, -1):
        total = total + x[..., :, j : j + 1] * y[..., j : j + 1, :]
    return total


def _jacobian_product(jacobian: np.ndarray, g: np.ndarray, axis: int) -> np.ndarray:
    """Jᵀ g along `axis`, J[..., i, j] = d out_i / d x_j built for each slice along `axis`."""
    moved = np.moveaxis(g, axis, -1)
    return np.moveaxis(np.einsum("...ij,...i->...j", jacobian, moved), -1, axis)


class _JacobianSoftmax(Softmax):
    @staticmethod
    def backward(g, out, x, *, needs, axis):
        s = np.moveaxis(out, axis, -1)
        jacobian = s[..., :, None] * np.eye(s.shape[-1]) - s[..., :, None] * s[..., None, :]
        return (_jacobian_product(jacobian, g, axis),)


class _JacobianLogSoftmax(LogSoftmax):
    @staticmethod
    def backward(g, out, x, *, needs, axis):
        s = np.exp(np.moveaxis(out, axis, -1))
        jacobian = np.eye(s.shape[-1]) - s[..., None, :]
        return (_jacobian_product(jacobian, g, axis),)


class _ReversedMatMul(MatMul):
    @staticmethod
    def backward(g, out, a, b, *, needs):
        a2 = a if a.ndim > 1 else a.reshape((1, a.shape[0]))
        b2 = b if b.ndim > 1 else b.reshape((b.shape[0], 1))
        if a.ndim == 1 and b.ndim == 1:
            g2 = g.reshape((1, 1))
        elif a.ndim == 1:
            g2 = g.reshape((*g.shape[:-1], 1, g.shape[-1]))
        elif b.ndim == 1:
            g2 = g.reshape((*g.shape, 1))
        else:
            g2 = g
        grad_a = sum_to(reversed_matmul(g2, swap_last(b2)), a2).reshape(a.shape) if needs[0] else None
        grad_b = sum_to(reversed_matmul(swap_last(a2), g2), b2).reshape(b.shape) if needs[1] else None
        return grad_a, grad_b


def _linear_backward(g, x, weight, bias, needs):
    grad_x = reversed_matmul(g, weight) if needs[0] else None
    grad_w = None
    if needs[1]:
        g2 = g if g.ndim == 2 else g.reshape((-1, g.shape[-1]))
        x2 = x if x.ndim == 2 else x.reshape((-1, x.shape[-1]))
        grad_w = reversed_matmul(g2.T, x2)
    grads = (grad_x, grad_w)
    if bias:
        grads += (sum_to(g, bias[0]) if needs[2] else None,)
    return grads


class _ReversedLinear(Linear):
    @staticmethod
    def backward(g, out, x, weight, *bias, needs):
        return _linear_backward(g, x, weight, bias, needs)


class _ReversedLinearReLU(LinearReLU):
    @staticmethod
    def backward(g, out, x, weight, *bias, needs, owned=False):
        grad_product = np.where(out != 0, g, 0.0)  # relu's rule: it reads only its output
        return _linear_backward(grad_product, x, weight, bias, needs)


_LINEAR_RULES = {
    "linear": _ReversedLinear,
    "linear_no_bias": _ReversedLinear,
    "linear_relu": _ReversedLinearReLU,
    "linear_relu_no_bias": _ReversedLinearReLU,
}


class ExplicitJacobianTensor(MinigradTensor):
    """minigrad's Tensor whose softmax and log_softmax backward multiply by the explicit Jacobian
    and whose matmul and linear backward add their products from the last to the first (first
    order only: the changed rules take arrays)."""

    name = "explicit-jacobian"
    create_graph = False
    dtypes = ("float64",)

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "softmax":
            return apply_op(_JacobianSoftmax, (args[0],), axis=attrs["dim"] % args[0].ndim)
        if op == "log_softmax":
            return apply_op(_JacobianLogSoftmax, (args[0],), axis=attrs["dim"] % args[0].ndim)
        if op == "matmul":
            return apply_op(_ReversedMatMul, tuple(args))
        if op in _LINEAR_RULES:
            return _linear(_LINEAR_RULES[op], args)
        return super().apply(op, args, attrs)


def _linear(rule: type[Linear], args: Sequence[Tensor]) -> Tensor:
    """`rule` on (x, weight[, bias]) as torch's linear takes them: a 1-D x is one row."""
    x, *rest = args
    if x.ndim == 1:
        return apply_op(rule, (x.unsqueeze(0), *rest)).squeeze(0)
    return apply_op(rule, (x, *rest))


# Every correct engine above that a campaign can run in reasonable time, by name: each must come out
# of a campaign with no bug-tier finding (`UncappedPathSum` is left out: its deep chains can take
# longer than any time limit, which is the graph code's problem, not an op's).
REORDERED_ENGINES: dict[str, type[EngineAdapter]] = {
    cls.name: cls
    for cls in (
        LocalDerivatives,
        PathSum,
        ReversedSum,
        DivisionByReciprocal,
        ReciprocalPathSum,
        OtherFormulas,
        ReciprocalTensor,
        ExplicitJacobianTensor,
    )
}

__all__ = [
    "REORDERED_ENGINES",
    "DivisionByReciprocal",
    "ExplicitJacobianTensor",
    "LocalDerivatives",
    "LocalValue",
    "OtherFormulaValue",
    "OtherFormulas",
    "PathSum",
    "PathSumValue",
    "ReciprocalPathSum",
    "ReciprocalPathSumValue",
    "ReciprocalTensor",
    "ReciprocalValue",
    "ReversedSum",
    "ReversedSumValue",
    "UncappedPathSum",
    "reversed_matmul",
]
