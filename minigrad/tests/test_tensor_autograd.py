"""Tensor on the shared autograd core: torch's backward semantics (leaves, accumulation,
retain_grad, implicit seeds), grad() with create_graph, no_grad, detect_anomaly, deep graphs,
and laws of gradients checked as hypothesis properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("torch")
import torch

import minigrad
from minigrad import Tensor


def leaf(values, dtype=np.float64):
    return minigrad.tensor(values, dtype=dtype, requires_grad=True)


def test_backward_fills_leaf_grads_only_and_accumulates_across_calls():
    x = leaf([1.0, 2.0])
    h = x * x
    y = (h * 3.0).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [6.0, 12.0])
    assert h.grad is None and y.grad is None and not h.is_leaf and x.is_leaf
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [12.0, 24.0])


def test_retain_grad_gives_a_non_leaf_its_gradient():
    x = leaf([1.0, 2.0])
    h = x * x
    h.retain_grad()
    (h * minigrad.tensor([5.0, 7.0], dtype=np.float64)).sum().backward()
    np.testing.assert_array_equal(h.grad.data, [5.0, 7.0])


def test_reused_non_leaf_nodes_sum_their_gradients():
    a = leaf(2.0)
    b = a + a
    c = b * b + b  # dc/da = (2b + 1) * 2
    c.backward()
    assert a.grad.item() == (2 * 4.0 + 1) * 2


def test_backward_on_a_non_scalar_needs_a_gradient_like_torch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(minigrad.tensor([1.0, -1.0], dtype=np.float64))
    np.testing.assert_array_equal(x.grad.data, [2.0, -2.0])


def test_a_one_element_non_scalar_output_gets_an_implicit_seed_like_torch():
    x = leaf([3.0])
    (x * x).backward()
    assert x.grad.tolist() == [6.0]


def test_backward_gradient_of_the_wrong_shape_is_rejected_naming_both_shapes():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \(3,\)"):
        (x * 2).backward(minigrad.zeros(3))


def test_backward_on_a_tensor_outside_the_graph_raises_like_torch():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        minigrad.tensor([1.0]).sum().backward()


@pytest.mark.parametrize("values", [[1, 2], [True, False]])
def test_integer_and_boolean_tensors_never_require_grad(values):
    with pytest.raises(
        RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"
    ):
        minigrad.tensor(values, requires_grad=True)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        minigrad.tensor(values).requires_grad_()
    x = leaf([1.0, 2.0])
    assert not (x > 1.0).requires_grad and not x.argmax().requires_grad


def test_requires_grad_can_only_be_changed_on_leaves():
    x = leaf([1.0])
    y = x * 2
    assert y.requires_grad_(True) is y and y.requires_grad  # already true: allowed, as torch
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)


def test_no_grad_records_nothing_and_detach_leaves_the_graph():
    x = leaf([1.0, 2.0])
    with minigrad.no_grad():
        y = x * 2
    assert not y.requires_grad and y.is_leaf
    z = (x * 2).detach()
    assert not z.requires_grad and z.grad_fn is None
    assert (x * 2).grad_fn == "mul"


def test_grad_returns_gradients_without_touching_dot_grad():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    gx, gw = minigrad.grad((x * w).sum(), [x, w])
    assert isinstance(gx, Tensor) and not gx.requires_grad
    np.testing.assert_array_equal(gx.data, [3.0, 4.0])
    np.testing.assert_array_equal(gw.data, [1.0, 2.0])
    assert x.grad is None and w.grad is None


def test_grad_of_an_unused_input_follows_allow_unused_and_materialize_grads():
    x, unused = leaf([1.0]), leaf([2.0, 3.0])
    with pytest.raises(RuntimeError, match="was not used"):
        minigrad.grad((x * 2).sum(), [x, unused])
    assert minigrad.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None
    zeros = minigrad.grad((x * 2).sum(), [x, unused], materialize_grads=True)[1]
    assert zeros.shape == (2,) and zeros.dtype == np.float64 and zeros.tolist() == [0.0, 0.0]


def test_second_derivative_of_a_small_network_matches_torch():
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    x, w = leaf(xs), leaf(ws)
    xt = torch.tensor(xs, requires_grad=True)
    wt = torch.tensor(ws, requires_grad=True)
    loss = ((x @ w).tanh() ** 2).mean()
    loss_t = ((xt @ wt).tanh() ** 2).mean()
    (gw,) = minigrad.grad(loss, w, create_graph=True)
    (gwt,) = torch.autograd.grad(loss_t, wt, create_graph=True)
    penalty = (gw * gw).sum()
    penalty_t = (gwt * gwt).sum()
    penalty.backward()
    penalty_t.backward()
    np.testing.assert_allclose(w.grad.data, wt.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(x.grad.data, xt.grad.numpy(), rtol=1e-9)


def test_detect_anomaly_names_the_op_whose_backward_made_nan():
    x = leaf([0.0, 1.0])
    y = x.sqrt() * 0.0  # forward is finite, but sqrt's gradient at 0 is inf, times 0 gives nan
    with minigrad.detect_anomaly(), pytest.raises(RuntimeError, match=r"backward of 'sqrt'.*input 0"):
        minigrad.grad(y.sum(), x)


def test_detect_anomaly_names_the_op_whose_forward_made_nan():
    x = leaf([-1.0, 1.0])
    with (
        minigrad.detect_anomaly(),
        pytest.raises(RuntimeError, match=r"forward of 'log' with input shapes \(\(2,\)\)"),
    ):
        x.log()
    assert np.isnan(x.log().data[0])  # outside the context: torch's nan, no error


def test_deep_graphs_do_not_hit_the_recursion_limit():
    x = leaf([0.5])
    y = x
    for _ in range(5000):
        y = y * 1.0 + 0.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_two_leaves_never_share_gradient_memory():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()
    a.grad.data += 100.0  # an in-place change to one gradient (an optimizer might do this)
    assert b.grad.tolist() == [1.0, 1.0]
    assert a.grad.data.flags.writeable and b.grad.data.flags.writeable


def test_a_gradient_given_to_backward_is_copied_not_aliased():
    x = leaf([1.0, 2.0])
    seed = minigrad.tensor([1.0, 1.0], dtype=np.float64)
    x.backward(seed)
    x.grad.data *= 5
    assert seed.tolist() == [1.0, 1.0]


def test_broadcast_gradient_is_a_fresh_writeable_array():
    b = leaf(1.0)
    (b + minigrad.zeros(3, dtype=np.float64)).sum().backward()
    assert b.grad.item() == 3.0 and b.grad.data.flags.writeable


# --- laws, as properties -----------------------------------------------------------------------

finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), elements=finite))
def test_gradient_of_a_broadcast_sum_counts_the_copies(values):
    """d/dx sum(x expanded over a new (2, ...) dim) is 2 everywhere."""
    x = leaf(values)
    x.expand(2, *values.shape).sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.full(values.shape, 2.0))


@given(
    hnp.arrays(np.float64, (3, 4), elements=finite),
    hnp.arrays(np.float64, (3, 4), elements=finite),
    st.floats(-2, 2),
)
def test_backward_is_linear_in_the_cotangent(values, u, scale):
    """vjp(u * s) == s * vjp(u) for the same graph."""
    x = leaf(values)
    y = (x.sin() * x).tanh()
    (g1,) = minigrad.grad(y, x, minigrad.tensor(u))
    (g2,) = minigrad.grad(y, x, minigrad.tensor(u * scale))
    np.testing.assert_allclose(g2.data, g1.data * scale, rtol=1e-12, atol=1e-12)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=finite))
def test_reshape_and_permute_round_trips_leave_values_and_gradients_unchanged(values):
    x = leaf(values)
    order = tuple(reversed(range(values.ndim)))
    y = x.permute(*order).reshape(-1).reshape(*reversed(values.shape)).permute(*order)
    np.testing.assert_array_equal(y.data, values)
    u = np.arange(values.size, dtype=np.float64).reshape(values.shape)
    y.backward(minigrad.tensor(u))
    np.testing.assert_array_equal(x.grad.data, u)


def test_casting_between_float_dtypes_is_differentiable():
    x = leaf([1.0, 2.0], dtype=np.float32)
    y = x.double() * minigrad.tensor([3.0, 4.0], dtype=np.float64)
    assert y.dtype == np.float64
    y.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [3.0, 4.0]


def test_grad_accepts_one_gradient_per_output():
    x = leaf([1.0, 2.0])
    a, b = x * 2.0, x * x
    (g,) = minigrad.grad(
        [a, b], x, [minigrad.ones(2, dtype=np.float64), minigrad.tensor([1.0, 10.0], dtype=np.float64)]
    )
    np.testing.assert_array_equal(g.data, [2.0 + 2.0, 2.0 + 40.0])


def test_inf_and_nan_arise_silently_like_torch(recwarn):
    x = leaf([0.0, -1.0, 1e308])
    y = x.log() + x / x + (x * 10.0).exp() + x.sqrt()
    y.sum().backward()
    (g,) = minigrad.grad(y.sum(), x)
    assert np.isnan(x.grad.data[1]) and np.isnan(g.data[1])
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_silencing_numpy_inside_nested_passes_leaves_its_settings_as_they_were(recwarn):
    before = np.geterr()
    x = leaf([0.0, 1e308])
    (g,) = minigrad.grad((x * 10.0).exp().sum(), x, create_graph=True)  # rules run ops inside ops
    g.sum().backward()
    assert np.geterr() == before
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
