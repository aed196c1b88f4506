"""The nn ops of the registry: linear layers (plain and with a fused relu) and the losses.

They are spelled as torch.nn.functional spells them, with the functional module of the argument's
own library (`torch.nn.functional` for torch tensors, `minigrad.functional` for minigrad's), so
the registry imports no engine. Class-index targets are node attributes (a tuple of ints drawn
from the logits' shape, saved in the graph JSON), never inputs with a gradient. Tensor-graph
values arrive batched and padded (`graphs.shapes`): the class axis is the last one and the row
axis the one before it, so a reduction over the rows is one numpy call on every point at once.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.graphs import edge_values, rounding_scales
from gradcheck.graphs.opspec import CANCELLATION, KINK_MARGIN, Accuracy, Chooser, OpSpec
from gradcheck.graphs.tensor_ops import EDGE_ROWS, log_softmax_xp

REDUCTIONS = ("mean", "sum", "none")
# softmax's cross-entropy is checked where its logits spread at most this much along a row
# (beyond it the smallest probabilities underflow float32 and the check says little more)
LOGIT_SPREAD = 30.0


def library(x: Any) -> ModuleType:
    """The top-level module of the library `x` belongs to (torch, minigrad, ...), already loaded."""
    return sys.modules[type(x).__module__.partition(".")[0]]


def functional(x: Any) -> ModuleType:
    """The torch.nn.functional-like module of `x`'s library: `<lib>.nn.functional` or `<lib>.functional`."""
    root = library(x).__name__
    return sys.modules.get(f"{root}.nn.functional") or sys.modules[f"{root}.functional"]


# --- linear layers ------------------------------------------------------------------------------


def _linear_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    """x (..., in), weight (out, in) and a bias (out,) or () give (..., out), as torch's linear."""
    x, weight = shapes[0], shapes[1]
    if not x or len(weight) != 2 or x[-1] != weight[1]:
        return None
    if len(shapes) == 3 and shapes[2] not in ((weight[0],), ()):
        return None
    return (*x[:-1], weight[0])


def _np_linear(args: Sequence[np.ndarray]) -> np.ndarray:
    """x @ weight.T (+ bias) on batched, padded arrays: weight (K, 1, out, in), bias (K, ..., out)."""
    y = args[0] @ np.swapaxes(args[1], -1, -2)
    return y + args[2] if len(args) == 3 else y


def _np_linear_scale(args: Sequence[np.ndarray]) -> np.ndarray:
    """|x| @ |weight|.T (+ |bias|): the size of the terms the linear map adds up."""
    return _np_linear([np.abs(a) for a in args])


def _linear_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """No sum of products that cancels to a small fraction of its terms (as matmul's)."""
    return np.abs(_np_linear(args)) >= CANCELLATION * _np_linear_scale(args)


def _linear_relu_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """linear's domain, and each pre-activation a margin away from relu's kink at 0."""
    product = _np_linear(args)
    return _linear_domain(args, attrs) & (np.abs(product) >= KINK_MARGIN)


def _xp_linear(xp: Any, args: Sequence[Any]) -> Any:
    y = xp.matmul(args[0], xp.swapaxes(args[1], -1, -2))
    return y + args[2] if len(args) == 3 else y


def _promoted(args: Sequence[Any]) -> list[Any]:
    """torch's linear refuses operands of two dtypes (a float64 0-d value made 2-D, in a float32
    graph) where minigrad promotes them as its elementwise ops do: the torch spelling promotes
    first, by torch's rule (tensors with dims decide; 0-d ones only when all are 0-d)."""
    lib = library(args[0])
    deciding = [t for t in args if t.dim() > 0] or list(args)
    dtype = functools.reduce(lib.promote_types, [t.dtype for t in deciding])
    return [t.to(dtype) for t in args]


# One sample whose first pre-activation is exactly 0 (1 - 1 + 0) and whose second is positive.
_AT_THE_KINK = (((np.array([1.0, 1.0]), np.array([[1.0, -1.0], [2.0, 0.5]]), np.array([0.0, 0.0])), {}),)
_AT_THE_KINK_NO_BIAS = tuple((args[:2], attrs) for args, attrs in _AT_THE_KINK)


def _linear_spec(name: str, bias: bool, relu: bool) -> OpSpec:
    """linear (x @ weight.T + bias) or the fused hidden layer relu(linear), with or without a bias."""
    operands = "{0}, {1}, {2}" if bias else "{0}, {1}"
    fused = "linear_relu" if relu else "linear"
    activation = (lambda y: y.relu()) if relu else (lambda y: y)
    np_activation = (lambda y: np.maximum(y, 0.0)) if relu else (lambda y: y)
    return OpSpec(
        name,
        3 if bias else 2,
        lambda a, k: activation(functional(a[0]).linear(*a)),
        lambda a, k: np_activation(_np_linear(a)),
        f"minigrad.functional.{fused}({operands})",
        domain=_linear_relu_domain if relu else _linear_domain,
        branch=(lambda a, k: _np_linear(a) > 0) if relu else None,
        kinks="kink where a pre-activation is 0 (torch: relu's derivative 0 there)" if relu else "",
        kink_cases=(_AT_THE_KINK if bias else _AT_THE_KINK_NO_BIAS) if relu else (),
        tensor_only=True,
        shape=_linear_shape,
        tensor_attrs=lambda c, s: {} if s else None,
        torch_template=f"torch.nn.functional.linear({operands})" + (".relu()" if relu else ""),
        torch_apply=lambda a, k: activation(functional(a[0]).linear(*_promoted(a))),
        # torch's linear takes a 2-D weight only: on a batch of weights it is a batched matmul
        torch_batched=lambda a, k: activation(_xp_linear(library(a[0]), a)),
        family="piecewise" if relu else "arithmetic",
        accuracy=Accuracy(0.5, (0.5, 0.5, 0.5), linear=True, terms=rounding_scales.linear_terms),
        array=lambda xp, a, k: xp.maximum(_xp_linear(xp, a), 0.0) if relu else _xp_linear(xp, a),
        # maximum(y, 0) shares the gradient at y = 0; torch's relu gives 0 there
        exact=(lambda xp, a, k: xp.relu(_xp_linear(xp, a))) if relu else None,
    )


# --- reductions of a loss -------------------------------------------------------------------------


def _reduce(loss: np.ndarray, reduction: str, axes: tuple[int, ...]) -> np.ndarray:
    """A batched loss reduced over `axes` (kept, so the batch layout stays) as `reduction` says."""
    if reduction == "none":
        return loss
    total = loss.sum(axis=axes, keepdims=True)
    return total / int(np.prod([loss.shape[a] for a in axes])) if reduction == "mean" else total


def _reduce_points(loss: Any, reduction: str) -> Any:
    """A batched torch loss (batch axis first) reduced within each point."""
    if reduction == "none":
        return loss
    flat = loss.reshape(loss.shape[0], -1)
    return flat.mean(dim=1) if reduction == "mean" else flat.sum(dim=1)


def _reduced_shape(shape: tuple[int, ...], attrs: dict[str, Any]) -> tuple[int, ...]:
    return shape if attrs["reduction"] == "none" else ()


def _no_cancellation(terms: np.ndarray, reduction: str, axes: tuple[int, ...]) -> np.ndarray:
    """For a sum or mean, a total that is not a small fraction of its terms' sizes."""
    if reduction == "none":
        return np.ones(terms.shape, dtype=bool)
    return np.abs(terms.sum(axis=axes, keepdims=True)) >= CANCELLATION * np.abs(terms).sum(
        axis=axes, keepdims=True
    )


_ELEMENTWISE_AXES = (1, 2, 3)  # every axis of a padded value but the batch axis (RANK = 3)


# --- class-index losses: cross_entropy and nll_loss -----------------------------------------------


def _class_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    """A reduction and one class index per row for logits (N, C) or (C,) with C >= 2."""
    if len(shape) not in (1, 2) or shape[-1] < 2:
        return None
    reduction = chooser.choice(REDUCTIONS)
    if len(shape) == 1:
        return {"reduction": reduction, "target": chooser.integer(0, shape[0] - 1)}
    return {
        "reduction": reduction,
        "target": tuple(chooser.integer(0, shape[1] - 1) for _ in range(shape[0])),
    }


def _class_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    shape = shapes[0]
    target = np.shape(attrs["target"])
    if len(shape) not in (1, 2) or target != shape[:-1]:
        return None
    if np.size(attrs["target"]) and int(np.max(attrs["target"])) >= shape[-1]:
        return None  # a class the logits do not have (the shrinker may hand the op fewer classes)
    return _reduced_shape(target, attrs)


def _picked(scores: np.ndarray, target: Any) -> np.ndarray:
    """Each row's score at its target class, batched: (..., N, C) -> (..., N, 1)."""
    index = np.asarray(target).reshape(-1, 1)  # one per row; a (C,) input has one row
    return np.take_along_axis(scores, np.broadcast_to(index, (*scores.shape[:-1], 1)), axis=-1)


def _nll(log_probs: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """-log_probs at each row's class, reduced over the rows (axis -2 of the padded layout)."""
    return _reduce(-_picked(log_probs, attrs["target"]), attrs["reduction"], (-2,))


def _nll_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return _no_cancellation(-_picked(args[0], attrs["target"]), attrs["reduction"], (-2,))


def _cross_entropy_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    x = args[0]
    return x.max(axis=-1, keepdims=True) - x.min(axis=-1, keepdims=True) <= LOGIT_SPREAD


def _class_loss_batched(name: str) -> Any:
    """The loss on padded batched logits (K, ..., C): one row per (point, row), torch's own loss
    unreduced, then reduced within each point."""

    def loss(a: Sequence[Any], k: dict[str, Any]) -> Any:
        x = a[0]
        rows = x.reshape(-1, x.shape[-1])
        target = library(x).tensor(k["target"]).reshape(-1).repeat(x.shape[0])
        per_row = getattr(functional(x), name)(rows, target, reduction="none")
        return _reduce_points(per_row.reshape(x.shape[0], -1), k["reduction"])

    return loss


def _class_edges() -> tuple[edge_values.Edge, ...]:
    """Rows of logits at float64's limits (huge spreads, infinities, nan), the target on either
    side, each reduction."""
    return tuple(
        ((np.array(row),), {"reduction": reduction, "target": target})
        for row in EDGE_ROWS
        for target in (0, 2)
        for reduction in ("mean", "none")
    )


def _pair_edges() -> tuple[edge_values.Edge, ...]:
    """Every pair of edge operands, and logits where exp overflows against a target of 1/2."""
    pairs = edge_values.binary(*[(x, 0.5) for x in edge_values.EXP_POINTS])
    return tuple((args, {"reduction": reduction}) for args, _ in pairs for reduction in ("mean", "none"))


def _class_loss_spec(name: str, forward: Any, domain: Any, family: str, accuracy: Accuracy) -> OpSpec:
    template = "{0}, {tensor}({target}), reduction={reduction}"
    return OpSpec(
        name,
        1,
        lambda a, k: getattr(functional(a[0]), name)(
            a[0], library(a[0]).tensor(k["target"]), reduction=k["reduction"]
        ),
        forward,
        f"minigrad.functional.{name}(" + template.replace("{tensor}", "minigrad.tensor") + ")",
        domain=domain,
        tensor_only=True,
        shape=_class_shape,
        tensor_attrs=_class_attrs,
        torch_template=f"torch.nn.functional.{name}(" + template.replace("{tensor}", "torch.tensor") + ")",
        torch_batched=_class_loss_batched(name),
        family=family,
        accuracy=accuracy,
        edges=_class_edges(),
        array=lambda xp, a, k: _xp_nll(
            xp, log_softmax_xp(xp, a[0], -1) if name == "cross_entropy" else a[0], k
        ),
    )


def _xp_nll(xp: Any, log_probs: Any, attrs: dict[str, Any]) -> Any:
    """nll_loss with a numpy-like module, one point: (N, C) or (C,) log-probabilities."""
    target = np.asarray(attrs["target"])
    rows = (np.arange(target.size), target) if target.ndim else (target,)
    picked = -log_probs[rows]
    if attrs["reduction"] == "none":
        return picked
    return xp.mean(picked) if attrs["reduction"] == "mean" else xp.sum(picked)


# --- elementwise losses: mse_loss and binary_cross_entropy_with_logits ----------------------------


def _pair_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    """input and target of one shape (minigrad and torch's default: no broadcasting)."""
    return _reduced_shape(shapes[0], attrs) if shapes[0] == shapes[1] else None


def _reduction_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any]:
    return {"reduction": chooser.choice(REDUCTIONS)}


def _np_squared_error(args: Sequence[np.ndarray]) -> np.ndarray:
    diff = args[0] - args[1]
    return diff * diff


def _mse_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """input - target does not cancel to a small fraction of its operands (as sub's)."""
    return np.abs(args[0] - args[1]) >= CANCELLATION * (np.abs(args[0]) + np.abs(args[1]))


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x), without overflow."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def _np_bce_with_logits(args: Sequence[np.ndarray]) -> np.ndarray:
    """-(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))) = (1 - y) x + softplus(-x)."""
    x, y = args
    return (1.0 - y) * x + _softplus(-x)


def _bce_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """Each term and the total do not cancel to a small fraction of their parts (a target outside
    [0, 1] makes the terms signed)."""
    x, y = args
    loss = _np_bce_with_logits(args)
    parts = np.abs((1.0 - y) * x) + _softplus(-x)
    return (np.abs(loss) >= CANCELLATION * parts) & _no_cancellation(
        loss, attrs["reduction"], _ELEMENTWISE_AXES
    )


def _elementwise_loss_spec(
    name: str, forward: Any, domain: Any, family: str, xp_loss: Any, accuracy: Accuracy
) -> OpSpec:
    def array(xp: Any, a: Sequence[Any], k: dict[str, Any]) -> Any:
        loss = xp_loss(xp, a)
        if k["reduction"] == "none":
            return loss
        return xp.mean(loss) if k["reduction"] == "mean" else xp.sum(loss)

    return OpSpec(
        name,
        2,
        lambda a, k: getattr(functional(a[0]), name)(a[0], a[1], reduction=k["reduction"]),
        lambda a, k: _reduce(forward(a), k["reduction"], _ELEMENTWISE_AXES),
        f"minigrad.functional.{name}({{0}}, {{1}}, reduction={{reduction}})",
        domain=domain,
        tensor_only=True,
        shape=_pair_shape,
        tensor_attrs=_reduction_attrs,
        torch_template=f"torch.nn.functional.{name}({{0}}, {{1}}, reduction={{reduction}})",
        torch_batched=lambda a, k: _reduce_points(
            getattr(functional(a[0]), name)(a[0], a[1], reduction="none"), k["reduction"]
        ),
        family=family,
        accuracy=accuracy,
        edges=_pair_edges(),
        array=array,
    )


NN_SPECS: list[OpSpec] = [
    _linear_spec("linear", bias=True, relu=False),
    _linear_spec("linear_no_bias", bias=False, relu=False),
    _linear_spec("linear_relu", bias=True, relu=True),
    _linear_spec("linear_relu_no_bias", bias=False, relu=True),
    _class_loss_spec(
        "cross_entropy",
        lambda a, k: _nll(np.asarray(log_softmax_xp(np, a[0], -1)), k),
        _cross_entropy_domain,
        "exp_log",
        Accuracy(
            2.0,
            (2.0,),
            scale=rounding_scales.cross_entropy_scale,
            grad_scale=rounding_scales.cross_entropy_grad_scale,
            terms=rounding_scales.class_terms,
            backward_stable=True,  # x - logsumexp(x), as MyGrad and scipy spell it
        ),
    ),
    _class_loss_spec(
        "nll_loss", lambda a, k: _nll(a[0], k), _nll_domain, "arithmetic", Accuracy(0.5, (0.5,), linear=True)
    ),
    _elementwise_loss_spec(
        "mse_loss",
        _np_squared_error,
        _mse_domain,
        "arithmetic",
        lambda xp, a: (a[0] - a[1]) ** 2,
        Accuracy(2.0, (2.0, 2.0)),
    ),
    _elementwise_loss_spec(
        "binary_cross_entropy_with_logits",
        _np_bce_with_logits,
        _bce_domain,
        "exp_log",
        lambda xp, a: (1.0 - a[1]) * a[0] + xp.logaddexp(0.0, -a[0]),
        Accuracy(2.0, (2.0, 2.0), scale=rounding_scales.bce_scale, grad_scale=rounding_scales.bce_grad_scale),
    ),
]
