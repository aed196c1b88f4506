"""The rounding scales of the tensor ops whose error is neither relative to their result nor to the
terms they sum (`Accuracy.scale`, `Accuracy.grad_scale`, `Accuracy.terms`).

Each rule takes the op's batched torch operands (padded layout: batch first, negative dims),
attributes, result and, for the backward, the result's adjoint, and returns the sizes its
rounding errors are measured against, elementwise; only tensor methods are used (no torch
import: the registry stays importable without it). The figures in ulps that multiply them are
measured (`gradcheck.testing.accuracy`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Shapes = Sequence[tuple[int, ...]]


def _shifted(x: Any, dim: int) -> Any:
    return x - x.amax(dim=dim, keepdim=True)


def softmax_scale(args: Sequence[Any], attrs: dict[str, Any], out: Any) -> Any:
    """exp(x - max x) errs by |x - max x| ulps (the rounding of the shift, amplified)."""
    return out * (1.0 + _shifted(args[0], attrs["dim"]).abs())


def softmax_grad_scale(args: Sequence[Any], attrs: dict[str, Any], out: Any, adjoint: Any) -> tuple[Any, ...]:
    """s * (g - sum(g * s)): the terms |s g| and s * sum |g s|."""
    g = adjoint.abs()
    return (out * (g + (g * out).sum(dim=attrs["dim"], keepdim=True)),)


def log_softmax_scale(args: Sequence[Any], attrs: dict[str, Any], out: Any) -> Any:
    """(x - max x) - log(sum exp(x - max x)): the shift's terms, the largest shift (it moves
    every exp), the log of a sum near 1 (an absolute error), and the result."""
    shifted = _shifted(args[0], attrs["dim"]).abs()
    return out.abs() + shifted + shifted.amax(dim=attrs["dim"], keepdim=True) + 1.0


def log_softmax_grad_scale(
    args: Sequence[Any], attrs: dict[str, Any], out: Any, adjoint: Any
) -> tuple[Any, ...]:
    """g - exp(log_softmax) * sum(g): the terms |g| and softmax * sum |g|, softmax recomputed from
    the result erring as the result does (by the shifts' sizes)."""
    g = adjoint.abs()
    dim = attrs["dim"]
    return (g + out.exp() * _shift_sizes(args[0], dim) * g.sum(dim=dim, keepdim=True),)


def _shift_sizes(x: Any, dim: int) -> Any:
    """1 + |x - max x| + max |x - max x|: how many ulps a softmax recomputed from the rounded
    log_softmax errs by, relative to itself."""
    shifted = _shifted(x, dim).abs()
    return 1.0 + shifted + shifted.amax(dim=dim, keepdim=True)


def along_last(shapes: Shapes, attrs: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    """softmax and log_softmax sum the terms along `dim`, forward and backward."""
    n = shapes[0][attrs["dim"]]
    return n, (n,)


def _per_element(adjoint: Any, reduction: str, like: Any) -> Any:
    """A reduced loss's adjoint as each element's (mean divides it among them), like `like`'s
    elements (batch first)."""
    if reduction == "none":
        return adjoint.reshape(like.shape)
    per_point = adjoint.reshape(adjoint.shape[0], *([1] * (like.ndim - 1)))
    count = math.prod(like.shape[1:])
    return per_point / count if reduction == "mean" else per_point


def _reduced(per_element: Any, reduction: str) -> Any:
    """Elementwise sizes reduced as the loss is, per point (batch first)."""
    if reduction == "none":
        return per_element
    flat = per_element.reshape(per_element.shape[0], -1)
    return flat.mean(dim=1) if reduction == "mean" else flat.sum(dim=1)


def _rows(x: Any) -> Any:
    """Logits (batch, 1.., [N,] C) as rows (batch, N, C)."""
    return x.reshape(x.shape[0], -1, x.shape[-1])


def _picked(rows: Any, target: Any) -> Any:
    """Each row's entry at its class, (batch, N)."""
    index = rows.new_tensor(target).long().reshape(1, -1, 1).expand(rows.shape[0], -1, 1)
    return rows.gather(-1, index).squeeze(-1)


def cross_entropy_scale(args: Sequence[Any], attrs: dict[str, Any], out: Any) -> Any:
    """Per row, log_softmax's terms at the target: the loss, the target's shift, the largest
    shift and the log of a sum near 1; reduced as the loss is."""
    rows = _rows(args[0])
    shifted = _shifted(rows, -1).abs()
    per_row = -_picked(rows, attrs["target"]) + rows.logsumexp(dim=-1)
    per_row = per_row.abs() + _picked(shifted, attrs["target"]) + shifted.amax(dim=-1) + 1.0
    return _reduced(per_row, attrs["reduction"]).reshape(out.shape)


def cross_entropy_grad_scale(
    args: Sequence[Any], attrs: dict[str, Any], out: Any, adjoint: Any
) -> tuple[Any, ...]:
    """(softmax - one_hot(target)) * the row's adjoint: the terms (softmax + one_hot) |g|, softmax
    erring as log_softmax's backward recomputes it."""
    rows = _rows(args[0])
    g = _per_element(adjoint.abs(), attrs["reduction"], rows[..., 0])  # (batch, N)
    index = rows.new_tensor(attrs["target"]).long().reshape(1, -1, 1).expand(rows.shape[0], -1, 1)
    one_hot = rows.new_zeros(rows.shape).scatter(-1, index, 1.0)
    softmax = rows.softmax(dim=-1) * _shift_sizes(rows, -1)
    return (((softmax + one_hot) * g.unsqueeze(-1)).reshape(args[0].shape),)


def class_terms(shapes: Shapes, attrs: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    """cross_entropy: each row's log-sum-exp over its C classes, and the sum over the N rows."""
    shape = shapes[0]
    rows = shape[0] if len(shape) == 2 else 1
    return shape[-1] + rows, (shape[-1],)


def bce_scale(args: Sequence[Any], attrs: dict[str, Any], out: Any) -> Any:
    """(1 - y) x + softplus(-x), as torch computes it with max(-x, 0) and a log of a sum: the
    terms |(1 - y) x|, |x| and log(1 + e^-|x|) <= 1, and the loss itself; reduced as the loss is."""
    x, y = args
    softplus = (-x).clamp(min=0.0) + (-x.abs()).exp().log1p()  # log(1 + e^-x), without overflow
    per_element = ((1.0 - y) * x).abs() + x.abs() + 1.0 + ((1.0 - y) * x + softplus).abs()
    return _reduced(per_element, attrs["reduction"]).reshape(out.shape)


def bce_grad_scale(args: Sequence[Any], attrs: dict[str, Any], out: Any, adjoint: Any) -> tuple[Any, ...]:
    """d/dx = (sigmoid(x) - y) g, which numpy-style engines compute as (1 - y) - sigmoid(-x) with
    sigmoid(-x) = exp(-x - logaddexp(0, -x)), whose argument errs by |x| ulps: the terms
    (1 + |y| + |x|) |g|; d/dy = -x g."""
    x, y = args
    g = _per_element(adjoint.abs(), attrs["reduction"], x)
    return (1.0 + y.abs() + x.abs()) * g, x.abs() * g


def exact_selection(shapes: Shapes, attrs: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    """amax, amin, max_dim, min_dim: the result is one of the entries (no sum), and the backward
    divides the adjoint among tied entries (no sum either)."""
    return 1, (1,)


def matmul_terms(shapes: Shapes, attrs: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    """Each result entry sums k products (k the shared dim); each operand's gradient entry sums
    what the result's size and k leave (the other dim, and any broadcast batch)."""
    a, b = shapes
    inner = a[-1]
    return inner, _backward_terms(shapes, inner, _matmul_size(a, b))


def linear_terms(shapes: Shapes, attrs: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    """x @ weight.T (+ bias): in_features products (and the bias) per result entry."""
    x, weight = shapes[0], shapes[1]
    inner = x[-1] + (1 if len(shapes) == 3 else 0)
    size = math.prod(x[:-1]) * (weight[0] if len(weight) == 2 else 1)
    return inner, _backward_terms(shapes, inner, size)


def _matmul_size(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    rows = a[-2] if len(a) >= 2 else 1
    cols = b[-1] if len(b) >= 2 else 1
    batch = max(math.prod(a[:-2]), math.prod(b[:-2]))
    return rows * cols * batch


def _backward_terms(shapes: Shapes, inner: int, size: int) -> tuple[int, ...]:
    return tuple(max(1, -(-size * inner // max(1, math.prod(s)))) for s in shapes)
