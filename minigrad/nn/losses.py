"""Loss functions on Values, each matching its torch.nn.functional namesake (tested against torch).

Every loss takes one prediction or a sequence of them, and the same number of targets (numbers or
Values), and reduces like torch: `reduction="mean"` (default), `"sum"`, or `"none"` (a list).
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigrad import floatmath as fm
from minigrad.scalar_ops import ScalarOp
from minigrad.value import Value, apply_op

Scalar = Value | int | float
Batch = Scalar | Sequence[Scalar]

_REDUCTIONS = ("mean", "sum", "none")
_BCE_EPSILON = float(np.float32(1e-12))  # torch clamps p(1 - p) at 1e-12 as a float32 constant


# --- ops with a numerically careful forward and torch's derivative --------------------------------


class BinaryCrossEntropyWithLogits(ScalarOp):
    """(1 - t) x + log(1 + e^-x), the cross-entropy of sigmoid(x) against t, in torch's form:
    finite for any logit, and with torch's derivatives sigmoid(x) - t and -x."""

    name = "bce_with_logits"

    @staticmethod
    def forward(x: float, t: float) -> float:
        return (1.0 - t) * x + _softplus(-x)

    @staticmethod
    def backward(g, out, x, t):
        sigmoid = fm.sigmoid(x) if isinstance(x, float) else x.sigmoid()
        return g * (sigmoid - t), -g * x


class BinaryCrossEntropy(ScalarOp):
    """-(t log p + (1 - t) log(1 - p)) for probability p and constant target t, torch's way:
    each log is clamped at -100 (so p = 0 or 1 gives a finite loss) and the derivative
    (p - t) / (p (1 - p)) has its denominator clamped at 1e-12 (float32)."""

    name = "bce"

    @staticmethod
    def forward(p: float, t: float) -> float:
        return (t - 1.0) * max(math.log1p(-p) if p < 1 else -math.inf, -100.0) - t * max(fm.log(p), -100.0)

    @staticmethod
    def backward(g, out, p, t):
        if isinstance(p, float):
            return (g * (p - t) / max((1.0 - p) * p, _BCE_EPSILON),)
        return (g * (p - t) / ((1.0 - p) * p),)  # differentiable path (create_graph): no clamp


def _softplus(x: float) -> float:
    """log(1 + e^x) as max(x, 0) + log1p(e^-|x|): no overflow, no cancellation."""
    return max(x, 0.0) + math.log1p(fm.exp(-abs(x)))


# --- losses --------------------------------------------------------------------------------------


def mse_loss(predictions: Batch, targets: Batch, reduction: str = "mean") -> Any:
    """Mean squared error: the mean (or sum) of (prediction - target)^2."""
    preds, tgts = _pair("mse_loss", predictions, targets, reduction)
    return _reduce([(p - t) ** 2 for p, t in zip(preds, tgts)], reduction)


def binary_cross_entropy_with_logits(logits: Batch, targets: Batch, reduction: str = "mean") -> Any:
    """Binary cross-entropy of sigmoid(logit) against targets in [0, 1], never forming sigmoid.

    One op per element, (1 - t) x + log(1 + e^-x) with gradient sigmoid(x) - t exactly as torch
    computes them: finite and accurate for any logit. Prefer it over `binary_cross_entropy` for
    raw scores. Targets may be Values (they then get the gradient -x).
    """
    xs, tgts = _pair("binary_cross_entropy_with_logits", logits, targets, reduction)
    return _reduce([apply_op(BinaryCrossEntropyWithLogits, x, t) for x, t in zip(xs, tgts)], reduction)


def binary_cross_entropy(probabilities: Batch, targets: Batch, reduction: str = "mean") -> Any:
    """Binary cross-entropy of probabilities in [0, 1] (e.g. after `.sigmoid()`) against number targets.

    Like torch, each log is clamped at -100, so a confident wrong answer costs 100, not inf. A
    sigmoid that saturated to exactly 0 or 1 has lost its gradient: use the logits version.
    """
    name = "binary_cross_entropy"
    probs, tgts = _pair(name, probabilities, targets, reduction)
    for index, (p, t) in enumerate(zip(probs, tgts)):
        if not 0.0 <= p.data <= 1.0:
            raise ValueError(
                f"{name}: probabilities must be in [0, 1], got {p.data!r} at index {index}; "
                "use binary_cross_entropy_with_logits for raw scores"
            )
        if isinstance(t, Value):
            raise TypeError(f"{name}: targets must be numbers, got a Value at index {index}")
    return _reduce([apply_op(BinaryCrossEntropy, p, const=t) for p, t in zip(probs, tgts)], reduction)


def hinge_loss(scores: Batch, labels: Batch, reduction: str = "mean") -> Any:
    """micrograd's max-margin (SVM) loss: relu(1 - y * score) with labels y in {-1, +1}."""
    name = "hinge_loss"
    ss, ys = _pair(name, scores, labels, reduction)
    for index, y in enumerate(ys):
        if not isinstance(y, Value) and y not in (-1.0, 1.0):
            raise ValueError(f"{name}: labels must be -1 or +1, got {y!r} at index {index}")
    return _reduce([(1 + -y * s).relu() for s, y in zip(ss, ys)], reduction)


# --- shared argument handling ------------------------------------------------------------------


def _pair(name: str, predictions: Batch, targets: Batch, reduction: str) -> tuple[list[Value], list[Any]]:
    """Predictions as Values and targets as floats or Values, checked to be non-empty and equal in length."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    preds = [p if isinstance(p, Value) else Value(p) for p in _as_list(predictions)]
    tgts = [t if isinstance(t, Value) else _number(name, t) for t in _as_list(targets)]
    if len(preds) != len(tgts):
        raise ValueError(f"{name}: got {len(preds)} predictions but {len(tgts)} targets; they must match")
    if not preds:
        raise ValueError(f"{name}: got no predictions; a loss needs at least one")
    return preds, tgts


def _as_list(batch: Batch) -> list[Any]:
    if isinstance(batch, (Value, int, float, numbers.Real)):
        return [batch]
    return list(batch)


def _number(name: str, t: Any) -> float:
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"{name}: targets must be numbers or Values, got {type(t).__name__} {t!r}")
    return float(t)


def _reduce(terms: list[Value], reduction: str) -> Any:
    if reduction == "none":
        return terms
    total = functools.reduce(operator.add, terms)
    return total / len(terms) if reduction == "mean" else total
