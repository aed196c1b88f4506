"""Spec for minigrad.nn's losses: each equals its torch.nn.functional counterpart in value and gradient."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minigrad import Value, grad
from minigrad.nn import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    hinge_loss,
    mse_loss,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional

REDUCTIONS = ["mean", "sum", "none"]
moderate = st.floats(-30.0, 30.0, allow_nan=False)
unit = st.floats(0.0, 1.0)


def batches(elements, targets, max_size=8):
    """Equal-length lists of predictions and targets."""
    return st.integers(1, max_size).flatmap(
        lambda n: st.tuples(
            st.lists(elements, min_size=n, max_size=n), st.lists(targets, min_size=n, max_size=n)
        )
    )


def ours(loss_fn, preds, targets, reduction):
    """Loss value(s) and the gradient of their sum w.r.t. each prediction."""
    xs = [Value(p) for p in preds]
    out = loss_fn(xs, targets, reduction=reduction)
    total = sum(out) if reduction == "none" else out
    total.backward()
    values = [o.data for o in out] if reduction == "none" else out.data
    return values, [x.grad for x in xs]


def theirs(torch_fn, preds, targets, reduction):
    x = torch.tensor(preds, dtype=torch.float64, requires_grad=True)
    out = torch_fn(x, torch.tensor(targets, dtype=torch.float64), reduction=reduction)
    out.sum().backward()
    return out.tolist(), x.grad.tolist()


def assert_same(a, b):
    assert a[0] == pytest.approx(b[0], rel=1e-12, abs=1e-300)
    assert a[1] == pytest.approx(b[1], rel=1e-12, abs=1e-300)


@given(batch=batches(moderate, moderate))
def test_mse_loss_matches_torch(batch):
    preds, targets = batch
    assert_same(ours(mse_loss, preds, targets, "none"), theirs(F.mse_loss, preds, targets, "none"))


@given(batch=batches(st.floats(-800.0, 800.0), unit))
def test_bce_with_logits_matches_torch_for_any_logit(batch):
    logits, targets = batch
    a = ours(binary_cross_entropy_with_logits, logits, targets, "none")
    b = theirs(F.binary_cross_entropy_with_logits, logits, targets, "none")
    assert_same(a, b)


@pytest.mark.parametrize("logit", [-1000.0, -40.0, -1e-9, 0.0, 1e-9, 40.0, 1000.0])
@pytest.mark.parametrize("target", [0.0, 0.3, 1.0])
def test_bce_with_logits_is_finite_at_extremes_and_exact_at_zero(logit, target):
    a = ours(binary_cross_entropy_with_logits, [logit], [target], "sum")
    b = theirs(F.binary_cross_entropy_with_logits, [logit], [target], "sum")
    assert math.isfinite(a[0])
    assert_same(a, b)


def test_bce_with_logits_gradient_at_zero_logit_is_one_half_minus_target():
    assert ours(binary_cross_entropy_with_logits, [0.0], [0.25], "sum")[1] == [0.25]


def test_bce_with_logits_differentiates_value_targets_like_torch():
    x, t = Value(0.7), Value(0.2)
    binary_cross_entropy_with_logits(x, t).backward()
    tx = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    tt = torch.tensor(0.2, dtype=torch.float64, requires_grad=True)
    F.binary_cross_entropy_with_logits(tx, tt).backward()
    assert (x.grad, t.grad) == pytest.approx((tx.grad.item(), tt.grad.item()), rel=1e-12)


@given(batch=batches(unit, unit))
def test_bce_on_probabilities_matches_torch_including_zero_and_one(batch):
    probs, targets = batch
    assert_same(
        ours(binary_cross_entropy, probs, targets, "none"),
        theirs(F.binary_cross_entropy, probs, targets, "none"),
    )


@pytest.mark.parametrize(("p", "t"), [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (1e-300, 0.5)])
def test_bce_on_probabilities_clamps_logs_at_minus_100_like_torch(p, t):
    a = ours(binary_cross_entropy, [p], [t], "sum")
    assert_same(a, theirs(F.binary_cross_entropy, [p], [t], "sum"))
    assert a[0] <= 100.0


def second_derivatives(loss_fn, torch_fn, x0, t):
    x = Value(x0)
    (dx,) = grad(loss_fn(x, t), x, create_graph=True)
    (d2x,) = grad(dx, x)
    tx = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (tdx,) = torch.autograd.grad(torch_fn(tx, torch.tensor(t, dtype=torch.float64)), tx, create_graph=True)
    (td2x,) = torch.autograd.grad(tdx, tx)
    return (dx.data, d2x), (tdx.item(), td2x.item())


def test_bce_with_logits_second_derivative_matches_torch():
    a, b = second_derivatives(binary_cross_entropy_with_logits, F.binary_cross_entropy_with_logits, 0.8, 0.25)
    assert a == pytest.approx(b, rel=1e-12)


def test_bce_on_probabilities_second_derivative_is_exact_and_near_torch():
    p, t = 0.3, 0.25
    a, b = second_derivatives(binary_cross_entropy, F.binary_cross_entropy, p, t)
    assert a[1] == pytest.approx(t / p**2 + (1 - t) / (1 - p) ** 2, rel=1e-14)
    # torch's double backward adds 1e-12 to p and 1 - p, a relative change of about 1e-11 here.
    assert a == pytest.approx(b, rel=1e-10)


def hinge_via_torch(scores, labels, reduction):
    """relu(1 - y s) is twice torch's two-class multi_margin_loss on the class scores (-s/2, s/2)."""
    s = scores.unsqueeze(1) * torch.tensor([-0.5, 0.5], dtype=torch.float64)
    classes = ((labels + 1) / 2).long()
    return 2 * F.multi_margin_loss(s, classes, reduction=reduction)


@given(batch=batches(moderate, st.sampled_from([-1.0, 1.0])))
def test_hinge_loss_matches_torch_multi_margin_loss(batch):
    scores, labels = batch
    a = ours(hinge_loss, scores, labels, "none")
    b = theirs(hinge_via_torch, scores, labels, "none")
    # 1 - y s near the margin cancels; the reference's halving and re-adding rounds differently there.
    assert a[0] == pytest.approx(b[0], rel=1e-12, abs=1e-15)
    assert a[1] == pytest.approx(b[1], rel=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    ("loss_fn", "torch_fn", "targets"),
    [
        (mse_loss, F.mse_loss, [0.5, -1.0, 2.0, 0.0]),
        (binary_cross_entropy_with_logits, F.binary_cross_entropy_with_logits, [0.0, 1.0, 0.25, 1.0]),
        (binary_cross_entropy, F.binary_cross_entropy, [0.0, 1.0, 0.25, 1.0]),
        (hinge_loss, hinge_via_torch, [1.0, -1.0, -1.0, 1.0]),
    ],
)
def test_reductions_match_torch(reduction, loss_fn, torch_fn, targets):
    preds = [0.9, 0.2, 0.6, 0.05]
    assert_same(ours(loss_fn, preds, targets, reduction), theirs(torch_fn, preds, targets, reduction))


def test_hinge_loss_is_micrographs_svm_loss():
    scores, labels = [0.5, -2.0, 3.0, 0.9], [1.0, 1.0, -1.0, 1.0]
    expected = sum(max(0.0, 1 - y * s) for s, y in zip(scores, labels)) / 4
    assert hinge_loss([Value(s) for s in scores], labels).data == pytest.approx(expected, rel=1e-15)


def test_a_single_value_is_a_batch_of_one():
    assert mse_loss(Value(3.0), 1.0).data == 4.0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: mse_loss([Value(1.0)], [1.0, 2.0]), ValueError, "mse_loss: got 1 predictions but 2 targets"),
        (lambda: mse_loss([], []), ValueError, "mse_loss: got no predictions"),
        (lambda: mse_loss([Value(1.0)], [1.0], reduction="avg"), ValueError, "reduction must be one of"),
        (lambda: mse_loss([Value(1.0)], ["1"]), TypeError, "targets must be numbers or Values, got str"),
        (
            lambda: binary_cross_entropy([Value(1.5)], [1.0]),
            ValueError,
            "probabilities must be in [0, 1], got 1.5 at index 0",
        ),
        (
            lambda: binary_cross_entropy([Value(0.5)], [Value(1.0)]),
            TypeError,
            "targets must be numbers, got a Value at index 0",
        ),
        (
            lambda: hinge_loss([Value(0.5), Value(1.0)], [1, 0]),
            ValueError,
            "labels must be -1 or +1, got 0.0 at index 1",
        ),
    ],
)
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()
