"""`Value`: a scalar that remembers how it was computed, micrograd's API with torch's semantics."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigrad import autograd
from minigrad import scalar_ops as ops
from minigrad.grad_mode import switches

Number = int | float


def _check_number(data: Any, where: str) -> float:
    """`data` as a float: any real number (int, float, numpy scalars), never a boolean."""
    if type(data) is float:
        return data
    if isinstance(data, numbers.Real) and not isinstance(data, (bool, np.bool_)):
        return float(data)
    is_bool = isinstance(data, (bool, np.bool_))
    raise TypeError(
        f"{where} expects a real number (int or float), got {type(data).__name__} {data!r}"
        + ("; use 1.0 or 0.0 for a boolean" if is_bool else "")
    )


class Value:
    """A scalar node: `data` (float), `grad` (float) and the op and inputs that produced it.

    Every Value takes part in differentiation, as in micrograd. Numbers mixed into an expression
    (the 2 in `x * 2`) are constants stored with the op: they never receive or leak gradients.

    An op has one or two Value inputs, kept in the slots `_a` and `_b` rather than in a tuple: one
    object per node instead of two halves the work of Python's garbage collector while a graph grows.
    """

    __slots__ = ("data", "grad", "_a", "_b", "_rule", "_const", "_g")

    def __init__(self, data: Number) -> None:
        self.data = _check_number(data, "Value()")
        self.grad = 0.0
        self._a: Value | None = None
        self._b: Value | None = None
        self._rule: type[ops.ScalarOp] | None = None
        self._const: float | None = None
        self._g: Any = None

    @property
    def _prev(self) -> tuple[Value, ...]:
        """The Values this one was computed from (none for a leaf), as the autograd core reads them."""
        b = self._b
        if b is not None:
            return (self._a, b)
        a = self._a
        return () if a is None else (a,)

    @property
    def _op(self) -> str:
        """The name of the op that produced this Value ('' for a leaf), as in micrograd."""
        return self._rule.name if self._rule is not None else ""

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    def __float__(self) -> float:
        return self.data

    def item(self) -> float:
        """The data as a Python float (torch's spelling)."""
        return self.data

    # --- arithmetic: Value with Value, or Value with a number ------------------------------------

    def __add__(self, other: Value | Number) -> Value:
        if isinstance(other, Value):
            return _record(ops.Add, ops.Add.forward(self.data, other.data), self, other)
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.AddConst, ops.AddConst.forward(self.data, c), self, None, c)

    __radd__ = __add__

    def __sub__(self, other: Value | Number) -> Value:
        if isinstance(other, Value):
            return _record(ops.Sub, ops.Sub.forward(self.data, other.data), self, other)
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.SubConst, ops.SubConst.forward(self.data, c), self, None, c)

    def __rsub__(self, other: Number) -> Value:
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.RSubConst, ops.RSubConst.forward(self.data, c), self, None, c)

    def __mul__(self, other: Value | Number) -> Value:
        if isinstance(other, Value):
            return _record(ops.Mul, ops.Mul.forward(self.data, other.data), self, other)
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.MulConst, ops.MulConst.forward(self.data, c), self, None, c)

    __rmul__ = __mul__

    def __truediv__(self, other: Value | Number) -> Value:
        if isinstance(other, Value):
            return _record(ops.Div, ops.Div.forward(self.data, other.data), self, other)
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.DivConst, ops.DivConst.forward(self.data, c), self, None, c)

    def __rtruediv__(self, other: Number) -> Value:
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.RDivConst, ops.RDivConst.forward(self.data, c), self, None, c)

    def __pow__(self, other: Value | Number) -> Value:
        if isinstance(other, Value):
            return _record(ops.Pow, ops.Pow.forward(self.data, other.data), self, other)
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.PowConst, ops.PowConst.forward(self.data, c), self, None, c)

    def __rpow__(self, other: Number) -> Value:
        c = _const(other)
        if c is None:
            return NotImplemented
        return _record(ops.RPowConst, ops.RPowConst.forward(self.data, c), self, None, c)

    def __neg__(self) -> Value:
        return _record(ops.Neg, ops.Neg.forward(self.data), self)

    def __abs__(self) -> Value:
        return self.abs()

    # --- elementary functions ------------------------------------------------------------------

    def relu(self) -> Value:
        return _record(ops.ReLU, ops.ReLU.forward(self.data), self)

    def tanh(self) -> Value:
        return _record(ops.Tanh, ops.Tanh.forward(self.data), self)

    def sigmoid(self) -> Value:
        return _record(ops.Sigmoid, ops.Sigmoid.forward(self.data), self)

    def exp(self) -> Value:
        return _record(ops.Exp, ops.Exp.forward(self.data), self)

    def log(self) -> Value:
        return _record(ops.Log, ops.Log.forward(self.data), self)

    def sin(self) -> Value:
        return _record(ops.Sin, ops.Sin.forward(self.data), self)

    def cos(self) -> Value:
        return _record(ops.Cos, ops.Cos.forward(self.data), self)

    def sqrt(self) -> Value:
        return _record(ops.Sqrt, ops.Sqrt.forward(self.data), self)

    def abs(self) -> Value:
        return _record(ops.Abs, ops.Abs.forward(self.data), self)

    # --- autograd ------------------------------------------------------------------------------

    def backward(self, gradient: Value | Number | None = None) -> None:
        """Add d(self)/d(node) into `.grad` of every node self depends on (seed 1.0 by default).

        The graph is kept: calling backward again adds the same gradients once more, like torch
        with `retain_graph=True`. Use `Module.zero_grad()` or set `.grad = 0.0` to start over.
        """
        autograd.backward([self], [gradient])

    def _local_grads(self, g: Any, create_graph: bool) -> Sequence[Any]:
        # The core asks only nodes that have inputs, so `_rule` and `_a` are set.
        rule, a, b, const = self._rule, self._a, self._b, self._const
        if create_graph:
            # A nan made inside the rule is reported below as this node's backward, not as a forward op.
            anomaly, switches.anomaly_enabled = switches.anomaly_enabled, False
            try:
                args = self._prev if const is None else (*self._prev, const)
                grads = rule.backward(g, self, *args)
            finally:
                switches.anomaly_enabled = anomaly
        elif b is None:
            if const is None:
                grads = rule.backward(g, self.data, a.data)
            else:
                grads = rule.backward(g, self.data, a.data, const)
        elif const is None:
            grads = rule.backward(g, self.data, a.data, b.data)
        else:
            grads = rule.backward(g, self.data, a.data, b.data, const)
        if switches.anomaly_enabled:
            _check_backward_anomaly(self, g, grads)
        return grads

    @staticmethod
    def _accumulate_grads(order: list[Value]) -> None:
        for node in order:
            g = node._g
            if g is not None:
                node.grad += g
                node._g = None

    def _seed(self, gradient: Any, create_graph: bool) -> Any:
        if gradient is None:
            seed = 1.0
        elif isinstance(gradient, Value):
            return gradient if create_graph else gradient.data
        else:
            seed = _check_number(gradient, "backward(gradient)")
        return Value(seed) if create_graph else seed

    def _export_grad(self, g: Any, create_graph: bool) -> Any:
        if create_graph and not isinstance(g, Value):
            return Value(g)
        return g

    def _zero_grad_like(self, create_graph: bool) -> Any:
        return Value(0.0) if create_graph else 0.0


_new_value = Value.__new__


def _const(other: Any) -> float | None:
    """A number operand as a float constant, or None when the operand is not a number."""
    if type(other) is float:
        return other
    if type(other) is int:
        return float(other)
    if type(other) is bool or not isinstance(other, (int, float)):
        return None
    return float(other)


def _record(
    rule: type[ops.ScalarOp], data: float, a: Value, b: Value | None = None, const: float | None = None
) -> Value:
    """A new Value holding `data`, remembering `rule` and its inputs unless grad mode is off."""
    out = _new_value(Value)
    out.data = data
    out.grad = 0.0
    out._g = None
    if switches.grad_enabled:
        out._a = a
        out._b = b
        out._rule = rule
        out._const = const
    else:
        out._a = out._b = out._rule = out._const = None
    if switches.anomaly_enabled and data != data:
        _check_forward_anomaly(rule, data, (a,) if b is None else (a, b), const)
    return out


def apply_op(rule: type[ops.ScalarOp], *inputs: Value | Number, const: float | None = None) -> Value:
    """Apply a custom `ScalarOp` to one or two Values: the way to add an op of your own to minigrad.

    Number inputs are wrapped as fresh leaf Values; `const`, if given, is passed last to both rules.
    """
    if not 1 <= len(inputs) <= 2:
        raise TypeError(f"apply_op({rule.__name__}): a scalar op takes 1 or 2 inputs, got {len(inputs)}")
    values = tuple(x if isinstance(x, Value) else Value(x) for x in inputs)
    args = [v.data for v in values] + ([] if const is None else [const])
    return _record(rule, float(rule.forward(*args)), *values, const=const)


def _describe(rule: type[ops.ScalarOp], prev: Sequence[Any], const: float | None) -> str:
    inputs = ", ".join(repr(float(_value_of(p))) for p in prev)
    if const is not None:
        inputs += f", constant {const!r}"
    return f"'{rule.__name__}' ({rule.name}) with inputs ({inputs})"


def _value_of(x: Any) -> float:
    return x.data if isinstance(x, Value) else x


def _check_forward_anomaly(
    rule: type[ops.ScalarOp], data: float, prev: Sequence[Value], const: float | None
) -> None:
    if any(math.isnan(p.data) for p in prev) or (const is not None and math.isnan(const)):
        return
    raise RuntimeError(f"detect_anomaly: forward of {_describe(rule, prev, const)} returned nan")


def _check_backward_anomaly(node: Value, g: Any, grads: Sequence[Any]) -> None:
    if math.isnan(_value_of(g)):
        return
    for index, grad in enumerate(grads):
        if math.isnan(_value_of(grad)):
            assert node._rule is not None
            raise RuntimeError(
                f"detect_anomaly: backward of {_describe(node._rule, node._prev, node._const)} "
                f"returned nan in its gradient for input {index} (output gradient {_value_of(g)!r})"
            )
