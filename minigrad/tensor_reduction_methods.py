"""The reductions of `Tensor`: sum, mean, max/min (with and without dim), amax/amin, argmax/argmin.

`ReductionMethods` is a base of `Tensor`; each method checks its dims like torch and applies a
rule of `tensor_reductions` through `Tensor._apply`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from minigrad import tensor_reductions as reductions
from minigrad.op import TensorOp
from minigrad.tensor_args import DimArg, _check_nonempty, _dims
from minigrad.tensor_core import TensorCore
from minigrad.tensor_dtypes import int64

if TYPE_CHECKING:  # Self: the Tensor this is a base of (minigrad.tensor imports this module)
    from typing_extensions import Self


class MinMax(NamedTuple):
    """What `max(dim)` and `min(dim)` return: the values and their indices along dim."""

    values: Any  # Tensors: a field cannot be Self, and naming Tensor would import minigrad.tensor back
    indices: Any


class ReductionMethods(TensorCore):
    """The reduction part of `Tensor` (it relies on Tensor's `data`, `_apply` and `_leaf`)."""

    __slots__ = ()

    def sum(self, dim: DimArg = None, keepdim: bool = False) -> Self:
        return self._apply(reductions.Sum, axes=_dims(dim, self.ndim, "sum"), keepdim=keepdim)

    def mean(self, dim: DimArg = None, keepdim: bool = False) -> Self:
        if self.dtype.kind != "f":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point "
                f"or complex dtype. Got: {self.dtype}"
            )
        return self._apply(reductions.Mean, axes=_dims(dim, self.ndim, "mean"), keepdim=keepdim)

    def amax(self, dim: DimArg = None, keepdim: bool = False) -> Self:
        """Largest element over `dim` (int or tuple); ties share the gradient evenly."""
        return self._extreme(reductions.Amax, dim, keepdim)

    def amin(self, dim: DimArg = None, keepdim: bool = False) -> Self:
        """Smallest element over `dim` (int or tuple); ties share the gradient evenly."""
        return self._extreme(reductions.Amin, dim, keepdim)

    def max(self, dim: int | None = None, keepdim: bool = False) -> Self | MinMax:
        """Without dim: the largest element (ties share the gradient evenly). With an int dim:
        `(values, indices)` like torch, the gradient going to the returned indices."""
        if dim is None:
            return self._extreme(reductions.Amax, None, keepdim, "max")
        return self._extreme_along(np.argmax, "max", dim, keepdim)

    def min(self, dim: int | None = None, keepdim: bool = False) -> Self | MinMax:
        """Without dim: the smallest element (ties share the gradient evenly). With an int dim:
        `(values, indices)` like torch, the gradient going to the returned indices."""
        if dim is None:
            return self._extreme(reductions.Amin, None, keepdim, "min")
        return self._extreme_along(np.argmin, "min", dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Self:
        return self._arg(np.argmax, "argmax", dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Self:
        return self._arg(np.argmin, "argmin", dim, keepdim)

    def _extreme(self, rule: type[TensorOp], dim: DimArg, keepdim: bool, name: str = "") -> Self:
        name = name or rule.name
        axes = _dims(dim, self.ndim, name)
        _check_nonempty(self, None if dim is None else axes, name)
        return self._apply(rule, axes=axes, keepdim=keepdim)

    def _extreme_along(self, arg: Any, name: str, dim: int, keepdim: bool) -> MinMax:
        if not isinstance(dim, (int, np.integer)):
            raise TypeError(
                f"{name}(): dim must be an int, got {dim!r}; use amax/amin to reduce several dims"
            )
        if self.ndim == 0:
            _dims(dim, 0, name)
            return MinMax(self.reshape(()), self._leaf(np.zeros((), dtype=int64)))
        axis = _dims(dim, self.ndim, name)[0]
        _check_nonempty(self, (axis,), name)
        indices = arg(self.data, axis=axis, keepdims=True)
        values = self._apply(reductions.TakeAlongAxis, indices=indices, axis=axis)
        if not keepdim:
            values = values.squeeze(axis)
            indices = indices.squeeze(axis)
        return MinMax(values, self._leaf(indices))

    def _arg(self, arg: Any, name: str, dim: int | None, keepdim: bool) -> Self:
        if dim is None:
            _check_nonempty(self, None, name)
            index = np.asarray(arg(self.data))
            return self._leaf(index.reshape((1,) * self.ndim) if keepdim else index)
        axis = _dims(dim, self.ndim, name)
        if not axis:
            return self._leaf(np.zeros((), dtype=int64))
        _check_nonempty(self, axis, name)
        return self._leaf(np.asarray(arg(self.data, axis=axis[0], keepdims=keepdim)))
