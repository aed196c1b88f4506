"""minigrad.functional against torch.nn.functional: softmax, log_softmax, linear (and
linear_relu against relu of linear), cross_entropy, mse_loss and binary_cross_entropy_with_logits;
values, gradients, second derivatives, stability at extreme logits and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
import torch
import torch.nn.functional as TF

import minigrad
import minigrad.functional as F
from minigrad.tests.tensor_torch_check import check, check_second

DTYPES = [np.float64, np.float32]


def sample(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 0), 1)], ids=str
)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax_match_torch(name, shape, dim, dtype):
    ours, theirs = getattr(F, name), getattr(TF, name)
    check((lambda t: ours(t, dim), lambda t: theirs(t, dim)), [sample(shape, 1)], dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_second_derivatives_match_torch(name):
    ours, theirs = getattr(F, name), getattr(TF, name)
    check_second((lambda t: ours(t, 1), lambda t: theirs(t, 1)), [sample((3, 4), 2)])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_is_stable_for_huge_logits(name):
    logits = np.array([[1000.0, 0.0, -1000.0], [-800.0, -800.0, -801.0]])
    ours, theirs = getattr(F, name), getattr(TF, name)
    check((lambda t: ours(t, 1), lambda t: theirs(t, 1)), [logits])
    assert np.all(np.isfinite(ours(minigrad.tensor(logits), 1).data))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("x_shape", [(4, 3), (3,), (2, 5, 3)], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(x_shape, bias, dtype):
    arrays = [sample(x_shape, 3), sample((2, 3), 4)] + ([sample((2,), 5)] if bias else [])
    check((F.linear, TF.linear), arrays, dtype)


def test_linear_second_derivatives_match_torch():
    check_second(
        (lambda x, w, b: F.linear(x, w, b).tanh(), lambda x, w, b: TF.linear(x, w, b).tanh()),
        [sample((4, 3), 6), sample((2, 3), 7), sample((2,), 8)],
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("x_shape", [(4, 3), (3,), (2, 5, 3)], ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_relu_matches_torch_relu_of_linear(x_shape, bias, dtype):
    arrays = [sample(x_shape, 3), sample((2, 3), 4)] + ([sample((2,), 5)] if bias else [])
    check((F.linear_relu, lambda *ts: TF.linear(*ts).relu()), arrays, dtype)


def test_linear_relu_is_one_op_with_second_derivatives_and_relu_edges_of_torch():
    assert F.linear_relu(*(minigrad.tensor(a, requires_grad=True) for a in [[[1.0]], [[2.0]]])).grad_fn == (
        "linear_relu"
    )
    check_second(
        (lambda x, w, b: F.linear_relu(x, w, b).tanh(), lambda x, w, b: TF.linear(x, w, b).relu().tanh()),
        [sample((4, 3), 6), sample((2, 3), 7), sample((2,), 8)],
    )
    # an output of exactly 0 gets no gradient, nan passes it on, an infinite product is kept
    x = np.array([[1.0, -1.0], [np.nan, 0.0], [1e308, 1e308]])
    check((F.linear_relu, lambda *ts: TF.linear(*ts).relu()), [x, np.array([[1.0, 1.0], [2.0, 0.0]])])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 4), (4,)], ids=str)
def test_cross_entropy_matches_torch(shape, reduction, dtype):
    rng = np.random.default_rng(9)
    target = rng.integers(0, shape[-1], shape[:-1])
    check(
        (
            lambda t: F.cross_entropy(t, minigrad.tensor(target), reduction=reduction),
            lambda t: TF.cross_entropy(t, torch.from_numpy(target), reduction=reduction),
        ),
        [sample(shape, 10, scale=3.0)],
        dtype,
    )


def test_cross_entropy_second_derivatives_and_extreme_logits():
    target = np.array([0, 2, 1])
    fns = (
        lambda t: F.cross_entropy(t, target),
        lambda t: TF.cross_entropy(t, torch.from_numpy(target)),
    )
    check_second(fns, [sample((3, 4), 11)])
    check(fns, [np.array([[500.0, -500.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [-300.0, 300.0, 299.0, 0.0]])])


def test_cross_entropy_rejects_bad_targets_like_torch():
    logits = minigrad.zeros(2, 3)
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        F.cross_entropy(logits, minigrad.tensor([0, 3]))
    with pytest.raises(RuntimeError, match="expected integer class indices"):
        F.cross_entropy(logits, minigrad.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"input \(2, 3\) and target \(3,\)"):
        F.cross_entropy(logits, minigrad.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(logits, minigrad.tensor([0, 1]), reduction="avg")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(reduction, dtype):
    check(
        (
            lambda a, b: F.mse_loss(a, b, reduction=reduction),
            lambda a, b: TF.mse_loss(a, b, reduction=reduction),
        ),
        [sample((3, 4), 12), sample((3, 4), 13)],
        dtype,
    )


def test_mse_loss_second_derivatives_and_shape_check():
    check_second((F.mse_loss, TF.mse_loss), [sample((5,), 14), sample((5,), 15)])
    with pytest.raises(ValueError, match=r"target size \(3,\) must be the same as input size \(2,\)"):
        F.mse_loss(minigrad.zeros(2), minigrad.zeros(3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits_matches_torch(reduction, dtype):
    rng = np.random.default_rng(16)
    check(
        (
            lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction),
            lambda x, y: TF.binary_cross_entropy_with_logits(x, y, reduction=reduction),
        ),
        [sample((4, 3), 17, scale=3.0), rng.random((4, 3))],
        dtype,
    )


def test_binary_cross_entropy_with_logits_is_stable_and_exact_at_zero():
    logits = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    targets = np.array([1.0, 0.0, 0.3, 1.0, 0.0])
    check((F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits), [logits, targets])
    check_second(
        (F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits), [logits[1:4], targets[1:4]]
    )
    with pytest.raises(ValueError, match=r"Target size \(\(3,\)\) must be the same as input size \(\(2,\)\)"):
        F.binary_cross_entropy_with_logits(minigrad.zeros(2), minigrad.zeros(3))


@pytest.mark.parametrize("input_dtype", DTYPES)
@pytest.mark.parametrize("target_dtype", DTYPES)
def test_binary_cross_entropy_with_logits_is_computed_in_the_targets_dtype_as_torch_does(
    input_dtype, target_dtype
):
    logits, targets = sample((2, 3), 3).astype(input_dtype), np.full((2, 3), 0.3, dtype=target_dtype)
    x = minigrad.Tensor(logits, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, minigrad.Tensor(targets))
    loss.backward()
    t = torch.tensor(logits, requires_grad=True)
    expected = TF.binary_cross_entropy_with_logits(t, torch.tensor(targets))
    expected.backward()
    assert loss.data.dtype == target_dtype and str(expected.dtype) == f"torch.{np.dtype(target_dtype)}"
    assert x.grad.data.dtype == input_dtype and str(t.grad.dtype) == f"torch.{np.dtype(input_dtype)}"
    np.testing.assert_allclose(loss.data, expected.detach().numpy(), rtol=1e-6)


def test_binary_cross_entropy_with_logits_at_infinite_logits_is_torchs():
    """-inf logits with a target above 1 cost inf (torch), not inf - inf = nan."""
    logits = np.array([-np.inf, -np.inf, -np.inf, np.inf, np.inf])
    targets = np.array([2.0, 1e300, 0.5, -1.0, 0.5])
    ours = F.binary_cross_entropy_with_logits(
        minigrad.Tensor(logits), minigrad.Tensor(targets), reduction="none"
    )
    theirs = TF.binary_cross_entropy_with_logits(
        torch.tensor(logits), torch.tensor(targets), reduction="none"
    )
    np.testing.assert_array_equal(ours.data, theirs.numpy())
    assert np.isposinf(ours.data[:2]).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 4), (4,), (0, 4)], ids=str)
def test_nll_loss_matches_torch_with_repeated_classes(shape, reduction, dtype):
    target = np.array([1, 1, 3, 0, 1, 2][: shape[0]] if len(shape) == 2 else 2, dtype=np.int64)
    check(
        (
            lambda t: F.nll_loss(t, minigrad.tensor(target), reduction=reduction),
            lambda t: TF.nll_loss(t, torch.from_numpy(target), reduction=reduction),
        ),
        [sample(shape, 18)],
        dtype,
    )
    check_second(
        (
            lambda t: F.nll_loss(t * t, target, reduction=reduction),
            lambda t: TF.nll_loss(t * t, torch.from_numpy(target), reduction=reduction),
        ),
        [sample(shape, 19)],
    )
