"""Shape ops, indexing, cat, stack and where against torch: values, gradients (scattered back,
repeated indices accumulating) and second derivatives; torch's errors for bad shapes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
import torch

import minigrad
from minigrad.tests.tensor_torch_check import check, check_second

DTYPES = [np.float64, np.float32]


def sample(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


SHAPE_OPS = {
    "reshape": (lambda t: t.reshape(4, 6), (2, 3, 4)),
    "reshape -1": (lambda t: t.reshape((-1, 2)), (2, 3, 4)),
    "view": (lambda t: t.view(3, 8), (2, 3, 4)),
    "reshape 0-d": (lambda t: t.reshape(1, 1), ()),
    "reshape empty": (lambda t: t.reshape(3, 0), (0, 3)),
    "transpose": (lambda t: t.transpose(0, 2), (2, 3, 4)),
    "transpose neg": (lambda t: t.transpose(-1, 1), (2, 3, 4)),
    "permute": (lambda t: t.permute(2, 0, 1), (2, 3, 4)),
    "permute tuple": (lambda t: t.permute((1, 2, 0)), (2, 3, 4)),
    ".T": (lambda t: t.T, (3, 4)),
    ".mT": (lambda t: t.mT, (2, 3, 4)),
    "unsqueeze": (lambda t: t.unsqueeze(1), (3, 4)),
    "unsqueeze end": (lambda t: t.unsqueeze(-1), (3, 4)),
    "unsqueeze 0-d": (lambda t: t.unsqueeze(0), ()),
    "squeeze": (lambda t: t.squeeze(), (1, 3, 1, 4)),
    "squeeze dim": (lambda t: t.squeeze(2), (1, 3, 1, 4)),
    "squeeze non-1 dim": (lambda t: t.squeeze(1), (1, 3, 1, 4)),
    "flatten": (lambda t: t.flatten(), (2, 3, 4)),
    "flatten range": (lambda t: t.flatten(1, 2), (2, 3, 4, 5)),
    "expand": (lambda t: t.expand(2, 3, 4), (3, 1)),
    "expand -1": (lambda t: t.expand(5, -1, 4), (3, 1)),
    "broadcast_to": (lambda t: t.broadcast_to((2, 3)), ()),
    "sum_to_size": (lambda t: t.sum_to_size(3, 1), (2, 3, 4)),
    "expand empty": (lambda t: t.expand(0, 3), (1, 3)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SHAPE_OPS)
def test_shape_op_matches_torch(name, dtype):
    fn, shape = SHAPE_OPS[name]
    check(fn, [sample(shape, 1)], dtype)


@pytest.mark.parametrize("name", ["permute", "expand", "sum_to_size", "reshape", "flatten range"])
def test_shape_op_second_derivatives(name):
    fn, shape = SHAPE_OPS[name]
    check_second(lambda t: fn(t) ** 3, [sample(shape, 2)])


INDICES = {
    "int": lambda: 1,
    "negative int": lambda: -1,
    "slice": lambda: slice(1, None),
    "step slice": lambda: (slice(None, None, 2), slice(1, 3)),
    "ellipsis": lambda: (Ellipsis, 0),
    "None": lambda: (None, 1),
    "int array": lambda: np.array([2, 0, 2]),
    "mixed x[1:, idx]": lambda: (slice(1, None), np.array([0, 3, 3, 1])),
    "two arrays": lambda: (np.array([0, 2, 2]), np.array([1, 1, 3])),
    "list": lambda: [0, 0, 1],
    "bool mask": lambda: np.array([True, False, True]),
    "int tensor": lambda: minigrad.tensor([1, 1, 0]),
}


def torch_index(index):
    if isinstance(index, tuple):
        return tuple(torch_index(i) for i in index)
    if isinstance(index, np.ndarray):
        return torch.from_numpy(index)
    if isinstance(index, minigrad.Tensor):
        return torch.from_numpy(index.data)
    return index


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", INDICES)
def test_indexing_matches_torch_and_scatters_the_gradient_back(name, dtype):
    index = INDICES[name]()
    check((lambda t: t[index], lambda t: t[torch_index(index)]), [sample((3, 4), 3)], dtype)


def test_repeated_indices_accumulate_their_gradients():
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 2, 0, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


@pytest.mark.parametrize("name", ["int array", "mixed x[1:, idx]", "step slice"])
def test_indexing_second_derivatives(name):
    index = INDICES[name]()
    check_second((lambda t: t[index] ** 3, lambda t: t[torch_index(index)] ** 3), [sample((3, 4), 4)])


def test_iterating_over_a_tensor_yields_differentiable_rows():
    x = minigrad.tensor(sample((3, 2), 5), requires_grad=True)
    total = minigrad.tensor(0.0, dtype=np.float64)
    for i, row in enumerate(x):
        total = total + row.sum() * (i + 1)
    total.backward()
    np.testing.assert_array_equal(x.grad.data, [[1, 1], [2, 2], [3, 3]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_torch(dim, dtype):
    shapes = {0: [(2, 3), (1, 3), (0, 3)], 1: [(2, 1), (2, 3), (2, 2)], -1: [(2, 1), (2, 3), (2, 2)]}[dim]
    arrays = [sample(s, i) for i, s in enumerate(shapes)]
    check((lambda *ts: minigrad.cat(ts, dim), lambda *ts: torch.cat(ts, dim)), arrays, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_matches_torch(dim, dtype):
    arrays = [sample((2, 3), i) for i in range(3)]
    check((lambda *ts: minigrad.stack(ts, dim), lambda *ts: torch.stack(ts, dim)), arrays, dtype)


def test_cat_and_stack_second_derivatives():
    arrays = [sample((2, 3), 6), sample((2, 3), 7)]
    check_second(
        (lambda a, b: minigrad.cat([a, b * a], 1) ** 2, lambda a, b: torch.cat([a, b * a], 1) ** 2), arrays
    )
    check_second(
        (lambda a, b: minigrad.stack([a, b * a]) ** 2, lambda a, b: torch.stack([a, b * a]) ** 2), arrays
    )


def test_cat_gives_only_the_inputs_that_require_grad_a_gradient():
    a = minigrad.tensor(sample((2, 2), 8), requires_grad=True)
    b = minigrad.tensor(sample((2, 2), 9))
    minigrad.cat([a, b]).sum().backward()
    assert b.grad is None and a.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


WHERE_SHAPES = [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((3, 4), (), (3, 4)), ((), (2, 3), (3,))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where_matches_torch_with_broadcasting(shapes, dtype):
    cond = np.asarray(np.random.default_rng(10).random(shapes[0]) > 0.5)
    check(
        (
            lambda x, y: minigrad.where(minigrad.tensor(cond), x, y),
            lambda x, y: torch.where(torch.from_numpy(cond), x, y),
        ),
        [sample(shapes[1], 11), sample(shapes[2], 12)],
        dtype,
    )


def test_where_with_a_number_and_its_second_derivative():
    cond = np.array([[True, False, True], [False, False, True]])
    check(
        (
            lambda x: minigrad.where(minigrad.tensor(cond), x, 0.5),
            lambda x: torch.where(torch.from_numpy(cond), x, 0.5),
        ),
        [sample((2, 3), 13)],
    )
    check_second(
        (
            lambda x, y: minigrad.where(minigrad.tensor(cond), x * y, y**2),
            lambda x, y: torch.where(torch.from_numpy(cond), x * y, y**2),
        ),
        [sample((2, 3), 14), sample((2, 3), 15)],
    )
    x = minigrad.tensor(sample((2, 3), 16))
    np.testing.assert_array_equal((x > 0).data, x.data > 0)


def test_shape_errors_name_the_op_and_the_shapes_like_torch():
    x = minigrad.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"reshape: shape '\[4, 2\]' is invalid for input of size 6"):
        x.reshape(4, 2)
    with pytest.raises(
        RuntimeError, match="expanded size of the tensor \\(4\\) must match the existing size \\(3\\)"
    ):
        x.expand(2, 4)
    with pytest.raises(
        RuntimeError, match=r"Sizes of tensors must match except in dimension 0.*\(2, 3\) and \(1, 2\)"
    ):
        minigrad.cat([x, minigrad.zeros(1, 2)])
    with pytest.raises(
        RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0"
    ):
        minigrad.stack([x, minigrad.zeros(3, 2)])
    with pytest.raises(RuntimeError, match="permute"):
        x.permute(0, 1, 2)
    with pytest.raises(RuntimeError, match="duplicate"):
        x.permute(1, 1)
    with pytest.raises(IndexError, match=r"getitem: .*out of bounds.*shape \(2, 3\)"):
        x[5]
    with pytest.raises(IndexError, match="must be long, int or bool"):
        x[minigrad.tensor([0.0, 1.0])]
    with pytest.raises(RuntimeError, match="sum_to_size"):
        x.sum_to_size(4, 1)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean"):
        minigrad.where(minigrad.tensor([1, 0, 1]), x, 0.0)
