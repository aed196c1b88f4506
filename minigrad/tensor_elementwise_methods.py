"""The elementwise math of `Tensor`: operators, comparisons and functions, each applying one rule.

`ElementwiseMethods` is a base of `Tensor`. The shared rules of `elementwise` (and the tensor-only
ones of `tensor_ops`) do the math; `Tensor`'s hooks `_binary`, `_unary_float` and `_compare`
convert numbers and promote dtypes as torch does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from minigrad import elementwise as rules
from minigrad import tensor_ops as ops
from minigrad.floatmath import as_float
from minigrad.tensor_core import TensorCore

if TYPE_CHECKING:  # Self: the Tensor this is a base of (minigrad.tensor imports this module)
    from typing_extensions import Self


class ElementwiseMethods(TensorCore):
    """The elementwise part of `Tensor` (it relies on Tensor's `_apply`, `_leaf` and the hooks above)."""

    __slots__ = ()

    # --- arithmetic: tensor with tensor or number, broadcasting like numpy -----------------------

    def __add__(self, other: Any) -> Self:
        return self._binary(rules.Add, self, other)

    def __radd__(self, other: Any) -> Self:
        return self._binary(rules.Add, other, self)

    def __sub__(self, other: Any) -> Self:
        return self._binary(rules.Sub, self, other)

    def __rsub__(self, other: Any) -> Self:
        return self._binary(rules.Sub, other, self)

    def __mul__(self, other: Any) -> Self:
        return self._binary(rules.Mul, self, other)

    def __rmul__(self, other: Any) -> Self:
        return self._binary(rules.Mul, other, self)

    def __truediv__(self, other: Any) -> Self:
        return self._binary(rules.Div, self, other, floating=True)

    def __rtruediv__(self, other: Any) -> Self:
        return self._binary(rules.Div, other, self, floating=True)

    def __pow__(self, other: Any) -> Self:
        if type(other) in (int, float) and self.dtype.kind == "f":  # torch's scalar-exponent kernel
            return self._apply(rules.PowConst, c=as_float(other, "pow"))
        return self._binary(rules.Pow, self, other)

    def __rpow__(self, other: Any) -> Self:
        return self._binary(rules.Pow, other, self)

    def __neg__(self) -> Self:
        return self._apply(rules.Neg)

    def __abs__(self) -> Self:
        return self.abs()

    # --- comparisons: boolean tensors outside the graph ----------------------------------------

    def __eq__(self, other: Any) -> Self:  # type: ignore[override]
        return self._compare(np.equal, self, other)

    def __ne__(self, other: Any) -> Self:  # type: ignore[override]
        return self._compare(np.not_equal, self, other)

    def __lt__(self, other: Any) -> Self:
        return self._compare(np.less, self, other)

    def __le__(self, other: Any) -> Self:
        return self._compare(np.less_equal, self, other)

    def __gt__(self, other: Any) -> Self:
        return self._compare(np.greater, self, other)

    def __ge__(self, other: Any) -> Self:
        return self._compare(np.greater_equal, self, other)

    def __invert__(self) -> Self:
        if self.dtype.kind not in "biu":
            raise TypeError(f"~ (bitwise_not) is only defined for integer and bool tensors, got {self.dtype}")
        return self._leaf(~self.data)

    # --- elementwise functions -----------------------------------------------------------------

    def relu(self) -> Self:
        return self._apply(rules.ReLU)

    def tanh(self) -> Self:
        return self._unary_float(rules.Tanh, self)

    def sigmoid(self) -> Self:
        return self._unary_float(rules.Sigmoid, self)

    def exp(self) -> Self:
        return self._unary_float(rules.Exp, self)

    def log(self) -> Self:
        return self._unary_float(rules.Log, self)

    def sin(self) -> Self:
        return self._unary_float(rules.Sin, self)

    def cos(self) -> Self:
        return self._unary_float(rules.Cos, self)

    def sqrt(self) -> Self:
        return self._unary_float(rules.Sqrt, self)

    def abs(self) -> Self:
        return self._apply(rules.Abs)

    def atan(self) -> Self:
        return self._unary_float(rules.Atan, self)

    def atan2(self, other: Any) -> Self:
        """The angle of the point (other, self), elementwise: torch.atan2(self, other)."""
        return self._binary(rules.Atan2, self, other, floating=True)

    def clamp(self, min: float | None = None, max: float | None = None) -> Self:
        """Values limited to [min, max]; the gradient flows where min <= x <= max (torch)."""
        if min is None and max is None:
            raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and not isinstance(bound, (int, float, np.number)):
                raise TypeError(f"clamp: {name} must be a number or None, got {type(bound).__name__}")
        return self._apply(ops.Clamp, low=min, high=max)

    clip = clamp
