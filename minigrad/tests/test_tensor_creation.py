"""Making Tensors: torch.tensor's dtype rules, creation helpers, seeded generators, conversions."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
import torch

import minigrad


@pytest.mark.parametrize(
    "data",
    [
        [1.0, 2.0],
        [1, 2],
        [True, False],
        3.5,
        7,
        [[1, 2], [3, 4]],
        np.array([1.0, 2.0]),
        np.array([1, 2], np.int32),
    ],
    ids=repr,
)
def test_dtype_inference_follows_torch_tensor(data):
    ours = minigrad.tensor(data)
    theirs = torch.tensor(data)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    assert ours.shape == tuple(theirs.shape)


def test_explicit_dtype_and_copy_semantics():
    source = np.array([1.0, 2.0])
    t = minigrad.tensor(source, dtype=minigrad.float32)
    assert t.dtype == np.float32
    copied = minigrad.tensor(source)
    source[0] = 99.0
    assert copied.tolist() == [1.0, 2.0]  # torch.tensor copies
    shared = minigrad.from_numpy(source)
    assert shared.data is source  # torch.from_numpy shares


def test_attributes_and_conversions():
    t = minigrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert t.shape == (2, 3) and t.ndim == 2 and t.dim() == 2 and t.numel() == 6 and len(t) == 2
    assert t.size() == (2, 3) and t.size(-1) == 3 and t.dtype == np.float32
    assert t.T.shape == (3, 2) and t.requires_grad and t.grad is None
    assert t.sum().item() == 21.0 and isinstance(t.sum().item(), float)
    assert float(t[0, 1]) == 2.0 and int(t[1, 2]) == 6
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements"):
        t.item()
    with pytest.raises(RuntimeError, match=r"Use tensor.detach\(\).numpy\(\)"):
        t.numpy()
    assert t.detach().numpy() is t.data
    assert t.double().dtype == np.float64 and t.long().dtype == np.int64 and t.float() is t
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(t)
    assert np.asarray(t).shape == (2, 3)


def test_repr_reads_like_torch():
    assert repr(minigrad.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(minigrad.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert "dtype=float64" in repr(minigrad.tensor([1.0], dtype=np.float64))
    assert "grad_fn=<mul>" in repr(minigrad.tensor([1.0], requires_grad=True) * 2)


def test_creation_helpers_shapes_and_dtypes():
    assert minigrad.zeros(2, 3).tolist() == [[0.0] * 3] * 2 and minigrad.zeros((2, 3)).dtype == np.float32
    assert minigrad.ones(3, dtype=np.float64).dtype == np.float64
    assert minigrad.full((2,), 7.0).tolist() == [7.0, 7.0]
    like = minigrad.tensor([[1, 2]])
    assert minigrad.zeros_like(like).dtype == np.int64 and minigrad.ones_like(like).tolist() == [[1, 1]]
    assert minigrad.ones(2, requires_grad=True).requires_grad


@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 1, 0.25), (2.0,), (5, 0, -2)], ids=str)
def test_arange_matches_torch(args):
    ours, theirs = minigrad.arange(*args), torch.arange(*args)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.data, theirs.numpy())


def test_randn_is_reproducible_with_a_seed_or_generator_and_keeps_its_dtype():
    a = minigrad.randn(3, 4, generator=0)
    b = minigrad.randn(3, 4, generator=np.random.default_rng(0))
    assert a.dtype == np.float32 and a.shape == (3, 4)
    np.testing.assert_array_equal(a.data, b.data)
    minigrad.manual_seed(5)
    c = minigrad.randn(100, dtype=np.float64)
    minigrad.manual_seed(5)
    d = minigrad.randn(100, dtype=np.float64)
    np.testing.assert_array_equal(c.data, d.data)
    assert abs(float(c.data.mean())) < 0.5 and 0.5 < float(c.data.std()) < 1.5
    u = minigrad.rand(1000, generator=1)
    assert u.data.min() >= 0.0 and u.data.max() < 1.0
    with pytest.raises(TypeError, match="generator"):
        minigrad.randn(2, generator="seed")
