"""minigrad's nn layer as a network under test: `nn.MLP` of Values, `nn.TensorMLP`, `optim.SGD`/`Adam`.

Each training step is what a user writes: zero the gradients, run the model, take the loss,
`backward()`, `step()`. A Tensor network with `retain_hidden` runs its layers one by one as
`TensorMLP.__call__` does (the fused `linear_relu` for each hidden layer) so that each hidden
activation can `retain_grad()`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engines.network import Architecture, Data, Step
from minigrad import Tensor, Value, functional, nn, optim


class MinigradNetwork:
    """Trains minigrad's MLPs (Values) and TensorMLPs (float64) from given weights."""

    name = "minigrad"
    kinds = ("value", "tensor")

    def train(self, arch: Architecture, weights: list[np.ndarray], data: Data) -> list[Step]:
        if arch.kind == "value":
            return _train(arch, *_value_network(arch, weights), data)
        return _train(arch, *_tensor_network(arch, weights), data)


def _optimizer(arch: Architecture, params: list[Any]) -> optim.Optimizer:
    if arch.optimizer == "adam":
        return optim.Adam(params, lr=arch.lr, weight_decay=arch.weight_decay)
    return optim.SGD(params, lr=arch.lr, momentum=arch.momentum, weight_decay=arch.weight_decay)


def _train(arch: Architecture, params: list[Any], run: Any, read: Any, data: Data) -> list[Step]:
    """`arch.steps` steps of: zero_grad, forward and loss, backward, the optimizer's step."""
    optimizer = _optimizer(arch, params)
    steps = []
    for _ in range(arch.steps):
        optimizer.zero_grad()
        loss, hidden = run(data)
        loss.backward()
        grads = read([p.grad for p in params])
        hidden_grads = [np.array(h.grad, dtype=np.float64) for h in hidden]
        optimizer.step()
        steps.append(Step(float(loss.data), grads, read([p.data for p in params]), hidden_grads))
    return steps


def _value_network(arch: Architecture, weights: list[np.ndarray]) -> tuple[list[Any], Any, Any]:
    """An `nn.MLP` holding `weights`; its parameters listed as W0 row by row, b0, W1, ..."""
    model = nn.MLP(arch.sizes[0], list(arch.sizes[1:]), activation=arch.activation, rng=0)
    params: list[Value] = []
    shapes: list[tuple[int, ...]] = []
    for layer, weight, bias in zip(model.layers, weights[::2], weights[1::2]):
        for neuron, row, b in zip(layer.neurons, weight, bias):
            for w, value in zip(neuron.w, row):
                w.data = float(value)
            neuron.b.data = float(b)
        params += [w for neuron in layer.neurons for w in neuron.w] + [n.b for n in layer.neurons]
        shapes += [weight.shape, bias.shape]

    def run(data: Data) -> tuple[Value, list[Any]]:
        outputs = []
        for sample in data.inputs:
            out = model([float(v) for v in sample])
            outputs += [out] if isinstance(out, Value) else out
        return nn.mse_loss(outputs, [float(t) for t in data.targets.ravel()]), []

    def read(numbers: list[float]) -> list[np.ndarray]:
        flat = np.array(numbers, dtype=np.float64)
        arrays, start = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            arrays.append(flat[start : start + size].reshape(shape))
            start += size
        return arrays

    return params, run, read


def _tensor_network(arch: Architecture, weights: list[np.ndarray]) -> tuple[list[Any], Any, Any]:
    """An `nn.TensorMLP` (float64) holding `weights`; parameters W0, b0, W1, b1, ..."""
    model = nn.TensorMLP(list(arch.sizes), dtype=np.float64, generator=0)
    params: list[Tensor] = []
    for layer, weight, bias in zip(model.layers, weights[::2], weights[1::2]):
        layer.weight.data[...] = weight
        layer.bias.data[...] = bias
        params += [layer.weight, layer.bias]

    def run(data: Data) -> tuple[Tensor, list[Tensor]]:
        x = Tensor(data.inputs.copy())
        hidden: list[Tensor] = []
        if arch.retain_hidden:
            *inner, last = model.layers
            for layer in inner:
                x = functional.linear_relu(x, layer.weight, layer.bias)
                x.retain_grad()
                hidden.append(x)
            out = last(x)
        else:
            out = model(x)
        if arch.loss == "cross_entropy":
            return functional.cross_entropy(out, data.targets.astype(np.int64)), hidden
        return functional.mse_loss(out, Tensor(data.targets.copy())), hidden

    def read(arrays: list[Any]) -> list[np.ndarray]:
        return [np.array(a.data if isinstance(a, Tensor) else a, dtype=np.float64) for a in arrays]

    return params, run, read
