"""Checking and normalising the arguments of Tensor methods: sizes, dims and indices, with torch's errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

Shape = tuple[int, ...]
DimArg = int | Sequence[int] | None


def _shape_arg(args: tuple[Any, ...]) -> Shape:
    """Sizes given as f(2, 3) or f((2, 3)) or f([2, 3])."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(n) for n in args)


def _resolve_shape(shape: Shape, size: int, op: str) -> Shape:
    """`shape` with a -1 inferred; raises torch's error when the sizes don't fit."""
    known = 1
    unknown = [i for i, n in enumerate(shape) if n == -1]
    for n in shape:
        if n != -1:
            known *= n
    bad = len(unknown) > 1 or any(n < -1 for n in shape)
    if not bad and unknown:
        if known == 0 or size % known:
            bad = True
        else:
            shape = tuple(size // known if n == -1 else n for n in shape)
    if bad or int(np.prod(shape, dtype=np.int64)) != size:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {size}")
    return shape


def _dims(dim: DimArg, ndim: int, op: str) -> tuple[int, ...]:
    """`dim` (None, int or sequence) as sorted non-negative axes, checked like torch."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    rank = max(ndim, 1)
    axes: list[int] = []
    for d in dims:
        if not isinstance(d, (int, np.integer)):
            raise TypeError(f"{op}(): dim must be an int or a sequence of ints, got {d!r}")
        if not -rank <= d < rank:
            raise IndexError(
                f"{op}(): Dimension out of range (expected to be in range of "
                f"[{-rank}, {rank - 1}], but got {d})"
            )
        axis = int(d) % rank
        if axis in axes:
            raise RuntimeError(f"{op}(): dim {axis} appears multiple times in the list of dims")
        axes.append(axis)
    return tuple(sorted(axes)) if ndim else ()


def _check_nonempty(t: Any, axes: tuple[int, ...] | None, op: str) -> None:
    """Reductions without an identity (max, argmax) need a non-empty input; axes None: all of it."""
    if t.data.size != 0:
        return
    if axes is None:
        raise RuntimeError(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0 (input shape "
            f"{t.shape}). Specify the reduction dim with the 'dim' argument."
        )
    for axis in axes:
        if t.shape[axis] == 0:
            raise RuntimeError(
                f"{op}(): Expected reduction dim {axis} to have non-zero size (input shape {t.shape})"
            )


def _check_seed_shape(got: Shape, want: Shape) -> None:
    if got != want:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[0] has a shape of {got} and output[0] has a shape of {want}"
        )


def _index(key: Any) -> Any:
    """An index with Tensors and lists turned into arrays, checked to be integer or boolean."""
    if type(key) is tuple:
        return tuple(_index_item(k) for k in key)
    return _index_item(key)


def _index_item(item: Any) -> Any:
    if isinstance(getattr(item, "data", None), np.ndarray):  # a Tensor
        item = item.data
    elif isinstance(item, list):
        item = np.asarray(item)
    if isinstance(item, np.ndarray) and item.dtype.kind not in "biu":
        raise IndexError(f"tensors used as indices must be long, int or bool tensors, got dtype {item.dtype}")
    if isinstance(item, float):
        raise IndexError(
            "only integers, slices, None, Ellipsis and integer or bool tensors are valid indices, "
            f"got {item!r}"
        )
    return item


def _explain_failure(rule: Any, inputs: Sequence[Any], error: Exception) -> str:
    shapes = [t.shape for t in inputs]
    if len(shapes) == 2:
        mismatch = _broadcast_mismatch(shapes[0], shapes[1])
        if mismatch:
            return f"{rule.name}: {mismatch} (shapes {shapes[0]} and {shapes[1]})"
    listed = ", ".join(str(s) for s in shapes)
    return f"{rule.name}: {error} (input shapes {listed})"


def _broadcast_mismatch(a: Shape, b: Shape) -> str | None:
    """torch's message for shapes that cannot broadcast, or None if they can."""
    ndim = max(len(a), len(b))
    for i in range(ndim):
        size_a = a[i - ndim + len(a)] if i >= ndim - len(a) else 1
        size_b = b[i - ndim + len(b)] if i >= ndim - len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            return (
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                f"at non-singleton dimension {i}"
            )
    return None
