"""The shape methods of `Tensor`: reshape, permute, expand, indexing and their kin, checked like torch.

`ShapeMethods` is a base of `Tensor`; each method checks its arguments and applies a rule of
`tensor_shape_ops` through `Tensor._apply`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from minigrad import tensor_reductions as reductions
from minigrad import tensor_shape_ops as shape_ops
from minigrad.tensor_args import DimArg, Shape, _dims, _index, _resolve_shape, _shape_arg
from minigrad.tensor_core import TensorCore

if TYPE_CHECKING:  # Self: the Tensor this is a base of (minigrad.tensor imports this module)
    from typing_extensions import Self


class ShapeMethods(TensorCore):
    """The shape part of `Tensor` (it relies on Tensor's `data`, `shape`, `ndim` and `_apply`)."""

    __slots__ = ()

    def reshape(self, *shape: Any) -> Self:
        new_shape = _resolve_shape(_shape_arg(shape), self.data.size, "reshape")
        return self._apply(shape_ops.Reshape, shape=new_shape)

    def view(self, *shape: Any) -> Self:
        """Same as reshape (numpy decides whether a copy is needed)."""
        return self.reshape(*shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Self:
        if self.ndim == 0:
            return self.reshape(1)
        start, end = (_dims(d, self.ndim, "flatten")[0] for d in (start_dim, end_dim))
        if start > end:
            raise RuntimeError(
                f"flatten() has invalid args: start_dim {start_dim} cannot come after end_dim {end_dim}"
            )
        shape = self.shape
        merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
        return self.reshape(*shape[:start], merged, *shape[end + 1 :])

    def unsqueeze(self, dim: int) -> Self:
        axis = _dims(dim, self.ndim + 1, "unsqueeze")[0]
        shape = self.shape
        return self.reshape(*shape[:axis], 1, *shape[axis:])

    def squeeze(self, dim: DimArg = None) -> Self:
        """Drop size-1 dims (all of them, or those of `dim` that have size 1, as torch)."""
        axes = _dims(dim, self.ndim, "squeeze")
        shape = tuple(n for i, n in enumerate(self.shape) if not (i in axes and n == 1))
        return self.reshape(shape)

    def permute(self, *dims: Any) -> Self:
        order = _shape_arg(dims)
        if len(order) != self.ndim:
            raise RuntimeError(
                f"permute(): number of dims don't match: the tensor has {self.ndim} dims "
                f"(shape {self.shape}) but {len(order)} were given ({order})"
            )
        axes = tuple(_dims(d, self.ndim, "permute")[0] if self.ndim else 0 for d in order)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"permute(): duplicate dims are not allowed, got {order}")
        return self._apply(shape_ops.Permute, axes=axes)

    def transpose(self, dim0: int, dim1: int) -> Self:
        if self.ndim == 0:
            _dims((dim0, dim1) if dim0 != dim1 else dim0, 0, "transpose")
            return self.reshape(())
        a, b = (_dims(d, self.ndim, "transpose")[0] for d in (dim0, dim1))
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self._apply(shape_ops.Permute, axes=tuple(axes))

    @property
    def T(self) -> Self:
        """All dims reversed (the matrix transpose for a 2-D tensor)."""
        return self._apply(shape_ops.Permute, axes=tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> Self:
        """The last two dims swapped: the transpose of each matrix in a batch."""
        if self.ndim < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    def expand(self, *sizes: Any) -> Self:
        """Broadcast to `sizes` without copying; -1 keeps a dim's size (torch.Tensor.expand)."""
        target = _shape_arg(sizes)
        if len(target) < self.ndim:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(target)}) must be greater or equal to "
                f"the number of dimensions in the tensor ({self.ndim}); shape {self.shape}, sizes {target}"
            )
        lead = len(target) - self.ndim
        shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(target))
        for i, n in enumerate(self.shape):
            if n != 1 and shape[lead + i] != n:
                raise RuntimeError(
                    f"expand: the expanded size of the tensor ({shape[lead + i]}) must match the existing "
                    f"size ({n}) at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                    f"Tensor sizes: {list(self.shape)}"
                )
        if any(n < 0 for n in shape):
            raise RuntimeError(
                f"expand: the expanded size -1 is not allowed in a leading, new dimension: {target}"
            )
        return self._apply(shape_ops.BroadcastTo, shape=shape)

    def broadcast_to(self, *shape: Any) -> Self:
        return self.expand(*shape)

    def expand_as(self, other: Self) -> Self:
        return self.expand(other.shape)

    def sum_to_size(self, *size: Any) -> Self:
        """Summed over dims so the result has `size` (the reverse of expand)."""
        shape = _shape_arg(size)
        try:
            if np.broadcast_shapes(shape, self.shape) != self.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"sum_to_size: size {shape} is not expandable to size {self.shape}") from None
        return self._apply(shape_ops.SumToSize, shape=shape)

    def __getitem__(self, key: Any) -> Self:
        index = _index(key)
        try:
            return self._apply(shape_ops.GetItem, index=index)
        except IndexError as error:
            raise IndexError(f"getitem: {error} (tensor of shape {self.shape}, index {key!r})") from None

    # --- hooks used by derivative rules on the create_graph path --------------------------------

    def _scatter_add(self, shape: Shape, index: Any) -> Self:
        return self._apply(shape_ops.ScatterAdd, shape=shape, index=index)

    def _put_along_axis(self, shape: Shape, indices: np.ndarray, axis: int) -> Self:
        return self._apply(reductions.PutAlongAxis, shape=shape, indices=indices, axis=axis)

    def _take_along_axis(self, indices: np.ndarray, axis: int) -> Self:
        return self._apply(reductions.TakeAlongAxis, indices=indices, axis=axis)
