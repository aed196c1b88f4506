"""The elementwise ops only `Tensor` has (maximum, minimum, where, clamp, casts) and matmul.

A derivative rule `backward(g, out, *inputs, needs, **params)` returns one gradient per input,
None where `needs` says the input does not require grad (so no time is spent on the data batch).
It is written once and serves two paths: ndarrays (the fast path of `backward()`), and Tensors
(under `grad(..., create_graph=True)`, where the rule builds a differentiable graph). Rules use
only operators, indexing and the helpers of `tensor_dispatch`; gradients are summed back to each
input's shape and dtype with `sum_to`. Masks are computed on raw data and never differentiated.
The elementwise ops Value and Tensor share are rules of `elementwise`, re-exported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import elementwise
from minigrad.elementary import data, where
from minigrad.elementwise import *  # noqa: F403 (the shared rules, still importable from here)
from minigrad.op import TensorOp
from minigrad.tensor_dispatch import sum_to, swap_last

# --- elementwise ops only Tensor has (the shared ones are in `elementwise`) ----------------------


def _share(g: Any, loses: np.ndarray, tie: np.ndarray) -> Any:
    """0 where an operand loses, g / 2 where it ties (torch splits the gradient), else g: so where
    either operand is nan (no winner), both get the whole gradient, as torch.

    Chosen, not multiplied by 0/1 weights, so an inf gradient gives 0 where the operand loses (torch).
    """
    return where(loses, 0.0, where(tie, 0.5 * g, g))


def _compared(a: Any, b: Any, out: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both operands at the result's precision, where torch compares them: a float32 tensor and a
    0-d float64 one tie when they are equal in float32."""
    dtype = data(out).dtype
    return data(a).astype(dtype, copy=False), data(b).astype(dtype, copy=False)


class Maximum(TensorOp):
    name = "maximum"
    forward = staticmethod(np.maximum)

    @staticmethod
    def backward(g, out, a, b, *, needs):
        a_data, b_data = _compared(a, b, out)
        tie = a_data == b_data
        grad_a = sum_to(_share(g, a_data < b_data, tie), a) if needs[0] else None
        grad_b = sum_to(_share(g, b_data < a_data, tie), b) if needs[1] else None
        return grad_a, grad_b


class Minimum(TensorOp):
    name = "minimum"
    forward = staticmethod(np.minimum)

    @staticmethod
    def backward(g, out, a, b, *, needs):
        a_data, b_data = _compared(a, b, out)
        tie = a_data == b_data
        grad_a = sum_to(_share(g, a_data > b_data, tie), a) if needs[0] else None
        grad_b = sum_to(_share(g, b_data > a_data, tie), b) if needs[1] else None
        return grad_a, grad_b


class Where(TensorOp):
    """`a` where `cond` else `b`; cond is a boolean array (a constant of the op)."""

    name = "where"
    arithmetic = False

    @staticmethod
    def forward(a, b, *, cond):
        return np.where(cond, a, b)

    @staticmethod
    def backward(g, out, a, b, *, needs, cond):
        grad_a = sum_to(where(cond, g, 0.0), a) if needs[0] else None
        grad_b = sum_to(where(cond, 0.0, g), b) if needs[1] else None
        return grad_a, grad_b


class Clamp(TensorOp):
    """a limited to [low, high] (either may be None); gradient passes where low <= a <= high, as torch."""

    name = "clamp"

    @staticmethod
    def forward(a, *, low, high):
        return np.clip(a, low, high)

    @staticmethod
    def backward(g, out, a, *, needs, low, high):
        a_data = data(a)
        inside = np.ones(a_data.shape, dtype=bool)
        if low is not None:
            inside &= a_data >= low
        if high is not None:
            inside &= a_data <= high
        return (where(inside, g, 0.0),)


class Cast(TensorOp):
    """The same values in another dtype; the gradient is cast back to the input's dtype."""

    name = "to"

    @staticmethod
    def forward(a, *, dtype):
        return a.astype(dtype)

    @staticmethod
    def backward(g, out, a, *, needs, dtype):
        return (sum_to(g, a),)


# --- matrix product ----------------------------------------------------------------------------


class MatMul(TensorOp):
    """torch.matmul: 1-D operands are promoted to matrices and the added dim removed again;
    batch dims broadcast, and their gradients are summed back."""

    name = "matmul"
    fresh_grads = True  # products (summed, reshaped)
    forward = staticmethod(np.matmul)

    @staticmethod
    def backward(g, out, a, b, *, needs):
        if a.ndim == 2 and b.ndim == 2:  # the common case, spelled out
            grad_a = g @ swap_last(b) if needs[0] else None
            grad_b = swap_last(a) @ g if needs[1] else None
            return grad_a, grad_b
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
        grad_a = sum_to(g2 @ swap_last(b2), a2).reshape(a.shape) if needs[0] else None
        grad_b = sum_to(swap_last(a2) @ g2, b2).reshape(b.shape) if needs[1] else None
        return grad_a, grad_b


def check_matmul(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    """Raise torch-like errors for operands matmul cannot multiply."""
    if not a_shape or not b_shape:
        raise RuntimeError(
            "matmul: both arguments to matmul need to be at least 1D, "
            f"but they are {len(a_shape)}D and {len(b_shape)}D (shapes {a_shape} and {b_shape})"
        )
    k_a = a_shape[-1]
    k_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if k_a != k_b:
        a2 = a_shape if len(a_shape) > 1 else (1, *a_shape)
        b2 = b_shape if len(b_shape) > 1 else (*b_shape, 1)
        raise RuntimeError(
            f"matmul: mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a2[-2:]))} and "
            f"{'x'.join(map(str, b2[-2:]))}): input shapes {a_shape} and {b_shape}, inner sizes "
            f"{k_a} and {k_b} differ"
        )
    try:
        np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise RuntimeError(
            f"matmul: batch dimensions {a_shape[:-2]} and {b_shape[:-2]} cannot be broadcast "
            f"(input shapes {a_shape} and {b_shape})"
        ) from None


__all__ = [
    *elementwise.__all__,
    "Cast",
    "Clamp",
    "MatMul",
    "Maximum",
    "Minimum",
    "TensorOp",
    "Where",
    "check_matmul",
]
