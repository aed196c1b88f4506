"""Reductions against torch: sum, mean, amax/amin over int or tuple dims with keepdim, full
max/min (the gradient shared evenly among ties), and max/min(dim) returning (values, indices)
with the gradient sent to the returned index."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
import torch

import minigrad
from minigrad.tests.tensor_torch_check import check, check_second

DTYPES = [np.float64, np.float32]
DIMS = [None, 0, 1, -1, (0, 2), (-1, 0, 1)]


def sample(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_reduction_over_dims_matches_torch(op, dim, keepdim, dtype):
    def fn(t):
        return getattr(t, op)(dim=dim, keepdim=keepdim) if dim is not None else getattr(t, op)()

    check(fn, [sample((2, 3, 4), 1)], dtype)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize(
    "shape,dim", [((), None), ((), 0), ((0, 3), 0), ((0, 3), 1), ((2, 0), None)], ids=str
)
def test_sum_and_mean_of_0d_and_empty_tensors_match_torch(op, shape, dim):
    def fn(t):
        return getattr(t, op)() if dim is None else getattr(t, op)(dim)

    check(fn, [sample(shape, 2)])


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_reduction_second_derivatives_match_torch(op):
    check_second(lambda t: getattr(t, op)(dim=1, keepdim=True) ** 2, [sample((3, 4), 3)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_along_a_dim_return_values_and_indices_like_torch(op, dim, keepdim, dtype):
    x = sample((3, 4, 5), 4)
    mine, theirs = check(lambda t: getattr(t, op)(dim, keepdim)[0], [x], dtype)
    ours = getattr(mine[0], op)(dim, keepdim)
    ref = getattr(theirs[0], op)(dim, keepdim)
    assert ours.indices.dtype == np.int64
    np.testing.assert_array_equal(ours.indices.data, ref.indices.numpy())
    assert ours.values is ours[0] and ours.indices is ours[1]


def test_max_along_a_dim_sends_the_gradient_to_the_returned_index_even_on_ties():
    x = minigrad.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    values, indices = x.max(1)
    (values * minigrad.tensor([10.0, 20.0])).sum().backward()
    expected = np.zeros((2, 3))
    expected[[0, 1], indices.data] = [10.0, 20.0]
    np.testing.assert_array_equal(x.grad.data, expected)
    assert x.grad.data.sum() == 30.0


@pytest.mark.parametrize("op", ["max", "min", "amax", "amin"])
def test_full_reductions_share_the_gradient_evenly_among_ties_like_torch(op):
    data = np.array([[1.0, 5.0, -2.0], [5.0, -2.0, 5.0]])
    if op in ("min", "amin"):
        data = -data
    check(lambda t: getattr(t, op)(), [data])
    x = minigrad.tensor(data, requires_grad=True)
    getattr(x, op)().backward()
    np.testing.assert_allclose(x.grad.data[np.abs(data) == 5.0], [1 / 3] * 3)


def test_amax_over_a_dim_shares_ties_within_each_slice():
    check(lambda t: t.amax(dim=0), [np.array([[1.0, 2.0], [1.0, 3.0], [0.0, 3.0]])])


def test_max_of_a_0d_tensor_along_dim_0():
    x = minigrad.tensor(2.5, requires_grad=True)
    values, indices = x.max(0)
    values.backward()
    assert values.item() == 2.5 and indices.item() == 0 and x.grad.item() == 1.0


def test_argmax_and_argmin_match_torch():
    x = sample((3, 5), 5)
    t = torch.from_numpy(x)
    m = minigrad.tensor(x)
    assert m.argmax().item() == t.argmax().item()
    np.testing.assert_array_equal(m.argmin(1).data, t.argmin(1).numpy())
    np.testing.assert_array_equal(m.argmax(0, keepdim=True).data, t.argmax(0, keepdim=True).numpy())


def test_reduction_errors_name_the_op_and_the_bad_dim():
    x = minigrad.zeros(2, 3)
    with pytest.raises(
        IndexError,
        match=r"sum\(\): Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ):
        x.sum(2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        x.sum((1, -1))
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        minigrad.zeros(0, 3).max(0)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        minigrad.zeros(0, 3).max()
    with pytest.raises(RuntimeError, match=r"mean.*Long|mean.*int64"):
        minigrad.tensor([1, 2]).mean()
    with pytest.raises(TypeError, match="use amax"):
        x.max((0, 1))


def test_sum_of_integers_stays_integer_like_torch():
    out = minigrad.tensor([[1, 2], [3, 4]]).sum(0)
    assert out.dtype == np.int64 and out.tolist() == [4, 6]


def test_max_and_min_along_a_dim_second_derivatives_match_torch():
    check_second(lambda t: t.max(1)[0] ** 3, [sample((3, 4), 6)])
    check_second(lambda t: t.min(0, keepdim=True).values ** 3, [sample((3, 4), 7)])
