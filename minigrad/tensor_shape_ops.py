"""Ops that move, select or join elements of `Tensor`s: reshape, permute, broadcast, indexing,
cat and stack. Forward beside derivative, following the conventions of `tensor_ops`."""

from __future__ import annotations

import numpy as np

from minigrad.tensor_dispatch import (
    broadcast_to,
    permute,
    scatter_add,
    scatter_add_array,
    sum_array_to,
    sum_to,
)
from minigrad.tensor_ops import TensorOp


class Reshape(TensorOp):
    """Same elements, new shape (also view, flatten, squeeze and unsqueeze)."""

    name = "reshape"
    arithmetic = False

    @staticmethod
    def forward(a, *, shape):
        return np.reshape(a, shape)

    @staticmethod
    def backward(g, out, a, *, needs, shape):
        return (g.reshape(a.shape),)


class Permute(TensorOp):
    """Axes reordered (also transpose and .T); the gradient is permuted back."""

    name = "permute"
    arithmetic = False

    @staticmethod
    def forward(a, *, axes):
        return np.transpose(a, axes)

    @staticmethod
    def backward(g, out, a, *, needs, axes):
        return (permute(g, tuple(np.argsort(axes).tolist())),)


class BroadcastTo(TensorOp):
    """Broadcast to `shape` without copying (expand); the gradient is summed back."""

    name = "expand"
    arithmetic = False

    @staticmethod
    def forward(a, *, shape):
        return np.broadcast_to(a, shape)

    @staticmethod
    def backward(g, out, a, *, needs, shape):
        return (sum_to(g, a),)


class SumToSize(TensorOp):
    """Summed over the dims broadcasting to the input's shape would add or stretch (sum_to_size)."""

    name = "sum_to_size"

    @staticmethod
    def forward(a, *, shape):
        return sum_array_to(a, shape)

    @staticmethod
    def backward(g, out, a, *, needs, shape):
        return (broadcast_to(g, a.shape),)


class GetItem(TensorOp):
    """Basic and integer-array indexing; the gradient is scattered back, repeats accumulating."""

    name = "getitem"
    arithmetic = False

    @staticmethod
    def forward(a, *, index):
        return a[index]

    @staticmethod
    def backward(g, out, a, *, needs, index):
        return (scatter_add(g, a.shape, index),)


class ScatterAdd(TensorOp):
    """Zeros of `shape` with the input added at `index` (GetItem's gradient); its gradient is
    g[index], summed back if the input was broadcast over the indexed places."""

    name = "scatter_add"

    @staticmethod
    def forward(a, *, shape, index):
        return scatter_add_array(a, shape, index)

    @staticmethod
    def backward(g, out, a, *, needs, shape, index):
        return (sum_to(g[index], a),)


class Cat(TensorOp):
    """Inputs joined along `axis`; each gets back its slice of the gradient."""

    name = "cat"
    arithmetic = False

    @staticmethod
    def forward(*arrays, axis):
        return np.concatenate(arrays, axis=axis)

    @staticmethod
    def backward(g, out, *inputs, needs, axis):
        grads = []
        start = 0
        for x, need in zip(inputs, needs):
            stop = start + x.shape[axis]
            grads.append(g[(slice(None),) * axis + (slice(start, stop),)] if need else None)
            start = stop
        return tuple(grads)


class Stack(TensorOp):
    """Equal-shaped inputs joined along a new `axis`; each gets back its entry of the gradient."""

    name = "stack"
    arithmetic = False

    @staticmethod
    def forward(*arrays, axis):
        return np.stack(arrays, axis=axis)

    @staticmethod
    def backward(g, out, *inputs, needs, axis):
        lead = (slice(None),) * axis
        return tuple(g[(*lead, i)] if need else None for i, need in enumerate(needs))
