"""Functions of Tensors used to build and train networks (torch.nn.functional's spelling).

softmax, log_softmax, linear, linear_relu, nll_loss, cross_entropy and
binary_cross_entropy_with_logits are ops of their own, with a numerically stable forward and a
derivative rule written once for ndarrays and Tensors (see `tensor_ops`); mse_loss is a composition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.elementary import relu_array
from minigrad.elementwise import ReLU
from minigrad.tensor import Tensor, _dims, _leaf, apply_op, result_type
from minigrad.tensor_dispatch import exp, scatter_add, sigmoid, subtract_at, sum_over, sum_to
from minigrad.tensor_ops import TensorOp

REDUCTIONS = ("mean", "sum", "none")


class Softmax(TensorOp):
    """exp(x) / sum(exp(x)) along `axis`, computed after subtracting the max (no overflow)."""

    name = "softmax"

    @staticmethod
    def forward(x, *, axis):
        if x.size == 0:
            return x.copy()
        e = np.exp(x - np.maximum.reduce(x, axis=axis, keepdims=True))  # x.max without its wrapper
        e /= np.add.reduce(e, axis=axis, keepdims=True)
        return e

    @staticmethod
    def backward(g, out, x, *, needs, axis):
        return (out * (g - sum_over(g * out, (axis,), True)),)


class LogSoftmax(TensorOp):
    """x - logsumexp(x) along `axis`, computed after subtracting the max (no overflow)."""

    name = "log_softmax"

    @staticmethod
    def forward(x, *, axis):
        if x.size == 0:
            return x.copy()
        shifted = x - np.maximum.reduce(x, axis=axis, keepdims=True)  # as in Softmax
        shifted -= np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))
        return shifted

    @staticmethod
    def backward(g, out, x, *, needs, axis):
        return (g - exp(out) * sum_over(g, (axis,), True),)


class Linear(TensorOp):
    """x @ weight.T + bias in one op (torch.nn.functional.linear): no transposed copies of the
    weight or of its gradient. x is (..., in), weight (out, in), bias (out,)."""

    name = "linear"
    fresh_grads = True  # products and a sum

    @staticmethod
    def forward(x, weight, *bias):
        y = x @ weight.T
        if bias:
            y += bias[0]
        return y

    @staticmethod
    def backward(g, out, x, weight, *bias, needs):
        grad_x = g @ weight if needs[0] else None
        grad_w = None
        if needs[1]:
            g2 = g if g.ndim == 2 else g.reshape((-1, g.shape[-1]))
            x2 = x if x.ndim == 2 else x.reshape((-1, x.shape[-1]))
            grad_w = g2.T @ x2
        grads = (grad_x, grad_w)
        if bias:
            grads += (sum_to(g, bias[0]) if needs[2] else None,)
        return grads


class LinearReLU(TensorOp):
    """relu(x @ weight.T + bias) in one op, a hidden layer: relu's rule, then linear's, in one
    backward node, and no array kept for the product in between (relu overwrites it)."""

    name = "linear_relu"
    fresh_grads = True  # linear's
    reuses_grad = True  # relu's rule masks an owned g in place

    @staticmethod
    def forward(x, weight, *bias):
        product = Linear.forward(x, weight, *bias)
        return relu_array(product, out=product)  # ReLU's forward on an array

    @staticmethod
    def backward(g, out, x, weight, *bias, needs, owned=False):
        (grad_product,) = ReLU.backward(g, out, None, owned=owned)  # relu's rule reads only its output
        return Linear.backward(grad_product, None, x, weight, *bias, needs=needs)


class BinaryCrossEntropyWithLogits(TensorOp):
    """-(y log σ(x) + (1 - y) log(1 - σ(x))) elementwise, as torch computes it: (1 - y) x - log σ(x),
    with -log σ(x) = max(-x, 0) + log1p(e^-|x|) (no overflow, and inf at x = -inf, not inf - inf)."""

    name = "binary_cross_entropy_with_logits"

    @staticmethod
    def forward(x, y):
        return (1 - y) * x + (np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x))))

    @staticmethod
    def backward(g, out, x, y, *, needs):
        grad_x = g * (sigmoid(x) - y) if needs[0] else None
        grad_y = -g * x if needs[1] else None
        return grad_x, grad_y


def _axis(x: Tensor, dim: int, op: str) -> int:
    ndim = x.data.ndim
    if ndim == 0:
        raise RuntimeError(f"{op}: expected a tensor with at least 1 dim, got a 0-d tensor")
    if type(dim) is int and -ndim <= dim < ndim:
        return dim % ndim  # the common case, without the general checks of `_dims`
    return _dims(dim, ndim, op)[0]


def softmax(x: Tensor, dim: int) -> Tensor:
    """Softmax along `dim`."""
    return apply_op(Softmax, (_floating(x),), axis=_axis(x, dim, "softmax"))


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """log(softmax(x)) along `dim`, without forming softmax (stable for large logits)."""
    return apply_op(LogSoftmax, (_floating(x),), axis=_axis(x, dim, "log_softmax"))


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias, as torch.nn.functional.linear."""
    return _linear(Linear, x, weight, bias)


def linear_relu(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """relu(linear(x, weight, bias)) as one op: the hidden layers of `nn.TensorMLP`."""
    return _linear(LinearReLU, x, weight, bias)


def _linear(rule: type[TensorOp], x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """`rule` (linear, or linear then relu) on inputs checked and promoted as torch's linear does."""
    x_shape, w_shape = x.data.shape, weight.data.shape
    if not x_shape or len(w_shape) != 2 or x_shape[-1] != w_shape[1]:
        raise RuntimeError(
            f"linear: mat1 and mat2 shapes cannot be multiplied: input shape {x_shape}, weight shape "
            f"{w_shape} (expected input (..., {w_shape[-1] if w_shape else '?'}))"
        )
    if bias is not None and bias.data.shape not in ((w_shape[0],), ()):
        raise RuntimeError(f"linear: bias shape {bias.shape} does not match weight shape {w_shape}")
    if len(x_shape) == 1:
        return _linear(rule, x.unsqueeze(0), weight, bias).squeeze(0)
    inputs: tuple[Tensor, ...] = (x, weight) if bias is None else (x, weight, bias)
    dtype = x.data.dtype
    if dtype.kind != "f" or weight.data.dtype != dtype or (bias is not None and bias.data.dtype != dtype):
        common = result_type(*inputs)
        inputs = tuple(t.to(common) for t in inputs)
    return apply_op(rule, inputs)


def nll_loss(log_probs: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of integer class indices `target` (N,) or () under `log_probs`
    (N, C) or (C,) (torch.nn.functional.nll_loss): -log_probs[i, target[i]], reduced."""
    return _nll(log_probs, _class_indices(log_probs, target, "nll_loss"), reduction, "nll_loss")


def cross_entropy(logits: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy of `logits` (N, C) or (C,) against integer class indices `target`
    (N,) or () (torch.nn.functional.cross_entropy with class-index targets): nll_loss of
    log_softmax, as one op."""
    classes = _class_indices(logits, target, "cross_entropy")
    return _nll(logits, classes, reduction, "cross_entropy", CrossEntropy)


class NLLLoss(TensorOp):
    """-log_probs at each row's class, then the mean, the sum or nothing (`reduction`)."""

    name = "nll_loss"

    @staticmethod
    def forward(log_probs, *, index, reduction):
        picked = -log_probs[index]
        if reduction == "none":
            return picked
        total = np.add.reduce(picked, axis=None)
        return total if reduction == "sum" else total / picked.size

    @staticmethod
    def backward(g, out, log_probs, *, needs, index, reduction):
        picked_g = -g / index[-1].size if reduction == "mean" else -g  # broadcast by the scatter
        return (scatter_add(picked_g, log_probs.shape, index, distinct=True),)  # one class per row


class CrossEntropy(TensorOp):
    """nll_loss of log_softmax(x) along the last axis in one op: its derivative is softmax(x)
    less the one-hot target, times the gradient of each picked term (one pass of backward, not two)."""

    name = "cross_entropy"
    fresh_grads = True  # a softmax just computed

    @staticmethod
    def forward(x, *, index, reduction):
        return NLLLoss.forward(LogSoftmax.forward(x, axis=-1), index=index, reduction=reduction)

    @staticmethod
    def backward(g, out, x, *, needs, index, reduction):
        picked_g = g / index[-1].size if reduction == "mean" else g  # d loss / d (-log_softmax(x)[index])
        row_g = picked_g.reshape((-1, 1)) if picked_g.ndim else picked_g  # one per row under "none"
        grad = _softmax_last(x)
        grad *= row_g  # into the array just made (a Tensor is rebound to a new one)
        return (subtract_at(grad, index, picked_g),)  # one class per row


def _softmax_last(x: Any) -> Any:
    """softmax along the last axis: Softmax's own forward on an array, the differentiable op on a
    Tensor (a backward pass building a graph)."""
    if isinstance(x, Tensor):
        return softmax(x, dim=-1)
    return Softmax.forward(x, axis=-1)


def _class_indices(log_probs: Tensor, target: Any, op: str) -> np.ndarray:
    """The target as an array of class indices, checked against the (N, C) or (C,) input like torch."""
    classes = target.data if isinstance(target, Tensor) else np.asarray(target)
    if classes.dtype.kind not in "iu":
        raise RuntimeError(
            f"{op}: expected integer class indices as target, got dtype {classes.dtype} "
            "(probability targets are not supported)"
        )
    shape = log_probs.data.shape
    if len(shape) not in (1, 2) or classes.shape != shape[:-1]:
        raise ValueError(
            f"{op}: expected input (N, C) with target (N,) or input (C,) with a 0-d target, "
            f"got input {log_probs.shape} and target {classes.shape}"
        )
    n_classes = shape[-1]
    if classes.size and (
        np.minimum.reduce(classes, axis=None) < 0 or np.maximum.reduce(classes, axis=None) >= n_classes
    ):
        bad = classes[(classes < 0) | (classes >= n_classes)].flat[0]
        raise IndexError(f"{op}: Target {bad} is out of bounds for {n_classes} classes")
    return classes


def _nll(
    log_probs: Tensor, classes: np.ndarray, reduction: str, op: str, rule: type[TensorOp] = NLLLoss
) -> Tensor:
    """`rule` (nll_loss, or cross_entropy on logits) picking each row's class, reduced."""
    _check_reduction(reduction, op)
    index = (classes,) if log_probs.data.ndim == 1 else (np.arange(len(classes)), classes)
    return apply_op(rule, (_floating(log_probs),), index=index, reduction=reduction)


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Mean (or sum, or elementwise) squared error."""
    _check_reduction(reduction, "mse_loss")
    target_shape = np.shape(target.data if isinstance(target, Tensor) else target)
    if target_shape != input.shape:
        raise ValueError(f"mse_loss: target size {target_shape} must be the same as input size {input.shape}")
    diff = input - target
    return _reduce(diff * diff, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy on logits (sigmoid folded in, stable for large |input|)."""
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    if not isinstance(target, Tensor):
        target = _leaf(np.asarray(target, dtype=input.dtype))
    if target.shape != input.shape:
        raise ValueError(
            f"binary_cross_entropy_with_logits: Target size ({target.shape}) must be the same as "
            f"input size ({input.shape})"
        )
    # torch computes this loss in the target's dtype (float64 logits, float32 target: float32)
    dtype = target.dtype if target.data.dtype.kind == "f" else result_type(input, target)
    loss = apply_op(BinaryCrossEntropyWithLogits, (input.to(dtype), target.to(dtype)))
    return _reduce(loss, reduction)


def _floating(x: Tensor) -> Tensor:
    return x if x.data.dtype.kind == "f" else x.float()


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(
            f"{op}: {reduction!r} is not a valid value for reduction (expected one of {REDUCTIONS})"
        )


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss
