"""Reductions of `Tensor` (sum, mean, amax/amin, max/min along a dim), forward beside derivative.

`axes` is always a tuple of non-negative axes (the Tensor methods normalise `dim`), `keepdim`
says whether the reduced axes stay as size 1. Rules follow the conventions of `tensor_ops`.
"""

from __future__ import annotations

import numpy as np

from minigrad.tensor_dispatch import data, expand_reduced, put_along_axis, reduced_shape, take_along_axis
from minigrad.tensor_ops import TensorOp


class Sum(TensorOp):
    name = "sum"

    @staticmethod
    def forward(a, *, axes, keepdim):
        return np.sum(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(g, out, a, *, needs, axes, keepdim):
        return (expand_reduced(g, a.shape, axes, keepdim),)


class Mean(TensorOp):
    name = "mean"

    @staticmethod
    def forward(a, *, axes, keepdim):
        return np.sum(a, axis=axes, keepdims=keepdim) / _count(a.shape, axes)  # nan when empty, as torch

    @staticmethod
    def backward(g, out, a, *, needs, axes, keepdim):
        return (expand_reduced(g / float(_count(a.shape, axes)), a.shape, axes, keepdim),)


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """How many elements a reduction over `axes` combines."""
    count = 1
    for axis in axes:
        count *= shape[axis]
    return count


def _even_split(a, out, axes: tuple[int, ...], g) -> np.ndarray:
    """Weights that share a reduction's gradient evenly among the elements equal to the result."""
    hit = data(a) == data(out).reshape(reduced_shape(a.shape, axes))
    return (hit / hit.sum(axis=axes, keepdims=True)).astype(g.dtype, copy=False)


class Amax(TensorOp):
    """Largest element over `axes`; the gradient is shared evenly among ties, as torch."""

    name = "amax"

    @staticmethod
    def forward(a, *, axes, keepdim):
        return np.max(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(g, out, a, *, needs, axes, keepdim):
        return (expand_reduced(g, a.shape, axes, keepdim) * _even_split(a, out, axes, g),)


class Amin(TensorOp):
    """Smallest element over `axes`; the gradient is shared evenly among ties, as torch."""

    name = "amin"

    @staticmethod
    def forward(a, *, axes, keepdim):
        return np.min(a, axis=axes, keepdims=keepdim)

    @staticmethod
    def backward(g, out, a, *, needs, axes, keepdim):
        return (expand_reduced(g, a.shape, axes, keepdim) * _even_split(a, out, axes, g),)


class TakeAlongAxis(TensorOp):
    """The elements at `indices` along `axis` (max(dim)'s values); the gradient goes to those indices."""

    name = "take_along_axis"
    arithmetic = False

    @staticmethod
    def forward(a, *, indices, axis):
        return np.take_along_axis(a, indices, axis)

    @staticmethod
    def backward(g, out, a, *, needs, indices, axis):
        return (put_along_axis(g, a.shape, indices, axis),)


class PutAlongAxis(TensorOp):
    """Zeros of `shape` with the input placed at `indices` along `axis` (TakeAlongAxis's gradient)."""

    name = "put_along_axis"
    arithmetic = False

    @staticmethod
    def forward(a, *, shape, indices, axis):
        out = np.zeros(shape, dtype=a.dtype)
        np.put_along_axis(out, indices, a, axis)
        return out

    @staticmethod
    def backward(g, out, a, *, needs, shape, indices, axis):
        return (take_along_axis(g, indices, axis),)
