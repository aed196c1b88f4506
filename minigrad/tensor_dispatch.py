"""The few helpers that tensor derivative rules are written with.

Each helper takes an ndarray (the fast path of `backward()`) or a `Tensor` (under
`grad(..., create_graph=True)`, where the rule must build a differentiable graph) and stays in
that world: numpy for arrays, Tensor methods for Tensors. This module imports no Tensor code, so
the op modules can use it without import cycles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

# The elementary functions live in `elementary` (shared with Value); re-exported for the tensor rules.
from minigrad.elementary import ARRAYS, cos, data, exp, log, sigmoid, sigmoid_array, sin, where  # noqa: F401

Shape = tuple[int, ...]


def broadcast_axes(from_shape: Shape, to_shape: Shape) -> tuple[int, ...]:
    """The axes of `from_shape` to sum over so the result has `to_shape` (the reverse of broadcasting)."""
    lead = len(from_shape) - len(to_shape)
    stretched = (lead + i for i, n in enumerate(to_shape) if n == 1 and from_shape[lead + i] != 1)
    return (*range(lead), *stretched)


def sum_array_to(x: np.ndarray, shape: Shape) -> np.ndarray:
    """Sum an array over the axes that broadcasting added or stretched, giving `shape`."""
    if x.ndim == len(shape) + 1 and x.shape[1:] == shape:
        # one leading axis added, the common case (a bias); np.add.reduce is x.sum without its wrapper
        return np.asarray(np.add.reduce(x, axis=0))
    return np.asarray(x.sum(axis=broadcast_axes(x.shape, shape), keepdims=True)).reshape(shape)


def sum_to(x: Any, like: Any) -> Any:
    """x reduced to the shape and dtype of `like` (an input of the op): the gradient of broadcasting."""
    shape, dtype = like.shape, like.dtype
    if isinstance(x, ARRAYS):
        if x.shape != shape:
            x = sum_array_to(x, shape)
        return x if x.dtype == dtype else x.astype(dtype)
    if x.shape != shape:
        x = x.sum_to_size(shape)
    return x if x.dtype == dtype else x.to(dtype)


def broadcast_to(x: Any, shape: Shape) -> Any:
    return np.broadcast_to(x, shape) if isinstance(x, ARRAYS) else x.broadcast_to(shape)


def permute(x: Any, axes: Sequence[int]) -> Any:
    return np.transpose(x, axes) if isinstance(x, ARRAYS) else x.permute(*axes)


def swap_last(x: Any) -> Any:
    """x with its last two axes swapped (the matrix transpose of each batch entry)."""
    return x.swapaxes(-1, -2) if isinstance(x, ARRAYS) else x.transpose(-1, -2)


def sum_over(x: Any, axes: tuple[int, ...] | None, keepdims: bool) -> Any:
    if isinstance(x, ARRAYS):
        return np.asarray(x.sum(axis=axes, keepdims=keepdims))
    return x.sum(dim=axes, keepdim=keepdims)


def reduced_shape(shape: Shape, axes: tuple[int, ...]) -> Shape:
    """`shape` with the reduced `axes` kept as size 1 (what keepdim=True gives)."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_reduced(g: Any, shape: Shape, axes: tuple[int, ...], keepdim: bool) -> Any:
    """The gradient of a reduction over `axes`, spread back over the input's `shape`."""
    if not keepdim:
        g = g.reshape(reduced_shape(shape, axes))
    return broadcast_to(g, shape)


def scatter_add(g: Any, shape: Shape, index: Any, distinct: bool = False) -> Any:
    """A zero array of `shape` with g added at `index` (repeats accumulate): getitem's gradient.
    `distinct` says the index selects each element at most once, so g is simply put there."""
    if isinstance(g, ARRAYS):
        return scatter_add_array(g, shape, index, distinct)
    return g._scatter_add(shape, index)


def subtract_at(x: Any, index: Any, values: Any) -> Any:
    """x less `values` at `index`, which selects each element at most once. An array x is changed
    in place (the caller made it and hands it over); a Tensor gets a new, differentiable one."""
    if isinstance(x, ARRAYS):
        x[index] -= values
        return x
    return x - scatter_add(values, x.shape, index, distinct=True)


def scatter_add_array(g: np.ndarray, shape: Shape, index: Any, distinct: bool = False) -> np.ndarray:
    out = np.zeros(shape, dtype=g.dtype)
    if distinct or is_basic_index(index):
        out[index] = g  # a basic index selects each element at most once
    else:
        np.add.at(out, index, g)
    return out


def is_basic_index(index: Any) -> bool:
    """True when `index` uses only ints, slices, None and Ellipsis (numpy's basic indexing)."""
    items = index if type(index) is tuple else (index,)
    return all(
        item is None
        or item is Ellipsis
        or type(item) is slice
        or (isinstance(item, (int, np.integer)) and type(item) is not bool)
        for item in items
    )


def put_along_axis(g: Any, shape: Shape, indices: np.ndarray, axis: int) -> Any:
    """Zeros of `shape` with g placed at `indices` along `axis`: the gradient of take_along_axis."""
    if isinstance(g, ARRAYS):
        return put_along_axis_array(g, shape, indices, axis)
    return g._put_along_axis(shape, indices, axis)


def put_along_axis_array(g: np.ndarray, shape: Shape, indices: np.ndarray, axis: int) -> np.ndarray:
    out = np.zeros(shape, dtype=g.dtype)
    np.put_along_axis(out, indices, g, axis)
    return out


def take_along_axis(x: Any, indices: np.ndarray, axis: int) -> Any:
    """The elements of x at `indices` along `axis`: the gradient of put_along_axis."""
    if isinstance(x, ARRAYS):
        return np.take_along_axis(x, indices, axis)
    return x._take_along_axis(indices, axis)
