"""nn.Linear and nn.TensorMLP: torch's shapes and default initialisation, parity with torch.nn
for forward and backward, parameters(), and training with minigrad.optim's SGD and Adam step by
step against torch.optim."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
import torch

import minigrad
import minigrad.functional as F
from minigrad import nn
from minigrad.optim import SGD, Adam


def test_linear_shapes_parameters_and_dtype():
    layer = nn.Linear(5, 3)
    assert layer.weight.shape == (3, 5) and layer.bias.shape == (3,)
    assert layer.weight.dtype == np.float32 and layer.weight.requires_grad and layer.weight.is_leaf
    assert layer.parameters() == [layer.weight, layer.bias]
    assert nn.Linear(5, 3, bias=False).parameters()[0].shape == (3, 5)
    assert len(nn.Linear(5, 3, bias=False).parameters()) == 1
    assert nn.Linear(2, 2, dtype=np.float64).weight.dtype == np.float64
    assert repr(layer) == "Linear(in_features=5, out_features=3, bias=True)"


def test_linear_default_init_is_torchs_uniform_bound():
    fan_in = 400
    ours = nn.Linear(fan_in, 300, generator=0)
    theirs = torch.nn.Linear(fan_in, 300)
    bound = 1 / np.sqrt(fan_in)
    for mine, ref in ((ours.weight, theirs.weight), (ours.bias, theirs.bias)):
        values, ref_values = mine.data, ref.detach().numpy()
        assert np.abs(values).max() <= bound and np.abs(ref_values).max() <= bound
        # both U(-b, b): the same spread, checked loosely enough never to fail by chance
        assert abs(values.std() - bound / np.sqrt(3)) < 0.1 * bound
        assert abs(values.std() - ref_values.std()) < 0.1 * bound


def test_linear_is_reproducible_with_a_seed():
    a, b = nn.Linear(4, 3, generator=7), nn.Linear(4, 3, generator=7)
    np.testing.assert_array_equal(a.weight.data, b.weight.data)
    minigrad.manual_seed(3)
    c = nn.Linear(4, 3)
    minigrad.manual_seed(3)
    d = nn.Linear(4, 3)
    np.testing.assert_array_equal(c.bias.data, d.bias.data)


def torch_copy(model: nn.TensorMLP) -> torch.nn.Sequential:
    layers = []
    for layer in model.layers:
        linear = torch.nn.Linear(layer.in_features, layer.out_features, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(layer.weight.data))
            linear.bias.copy_(torch.from_numpy(layer.bias.data))
        layers += [linear, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def test_tensor_mlp_forward_and_backward_match_torch():
    model = nn.TensorMLP([6, 8, 8, 3], dtype=np.float64, generator=1)
    reference = torch_copy(model)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 6))
    y = rng.integers(0, 3, 5)
    loss = F.cross_entropy(model(minigrad.tensor(x)), minigrad.tensor(y))
    ref_loss = torch.nn.functional.cross_entropy(reference(torch.from_numpy(x)), torch.from_numpy(y))
    np.testing.assert_allclose(loss.item(), ref_loss.item(), rtol=1e-12)
    loss.backward()
    ref_loss.backward()
    for mine, ref in zip(model.parameters(), reference.parameters()):
        assert mine.grad.dtype == np.float64
        np.testing.assert_allclose(mine.grad.data, ref.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert len(model.parameters()) == 6


@pytest.mark.parametrize(
    "make",
    [
        (lambda p: SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
        (lambda p: SGD(p, lr=0.1, momentum=0.9), lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
        (lambda p: Adam(p, lr=0.01), lambda p: torch.optim.Adam(p, lr=0.01)),
    ],
    ids=["sgd", "sgd-momentum", "adam"],
)
def test_optimizers_train_tensor_models_exactly_like_torch_optim(make):
    model = nn.TensorMLP([4, 8, 3], dtype=np.float64, generator=3)
    reference = torch_copy(model)
    optimizer, ref_optimizer = make[0](model.parameters()), make[1](reference.parameters())
    rng = np.random.default_rng(4)
    for _ in range(5):
        x, y = rng.standard_normal((6, 4)), rng.integers(0, 3, 6)
        optimizer.zero_grad()
        ref_optimizer.zero_grad()
        F.cross_entropy(model(minigrad.tensor(x)), minigrad.tensor(y)).backward()
        torch.nn.functional.cross_entropy(reference(torch.from_numpy(x)), torch.from_numpy(y)).backward()
        optimizer.step()
        ref_optimizer.step()
    for mine, ref in zip(model.parameters(), reference.parameters()):
        assert mine.grad is not None
        np.testing.assert_allclose(mine.data, ref.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_zero_grad_resets_tensor_grads_to_none_like_torch():
    model = nn.TensorMLP([2, 3, 1], generator=5)
    model(minigrad.ones(4, 2)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_float32_training_keeps_float32_parameters_and_grads():
    model = nn.TensorMLP([3, 4, 2], generator=6)
    optimizer = SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(minigrad.randn(5, 3, generator=7)), minigrad.tensor([0, 1, 1, 0, 1]))
    loss.backward()
    optimizer.step()
    assert loss.dtype == np.float32
    assert all(p.dtype == np.float32 and p.grad.dtype == np.float32 for p in model.parameters())


def test_linear_rejects_inputs_of_the_wrong_width():
    with pytest.raises(RuntimeError, match=r"input shape \(2, 4\), weight shape \(3, 5\)"):
        nn.Linear(5, 3)(minigrad.zeros(2, 4))


def test_tensor_mlp_refuses_micrograd_style_arguments_with_a_clear_message():
    with pytest.raises(TypeError, match=r"TensorMLP: sizes must be a list of positive layer widths"):
        nn.TensorMLP(64, [128, 10])
