"""The tensor benchmark's workload: one SGD training step of an MLP 784-512-512-10 in float32,
written for minigrad, for torch, and out by hand with numpy (its forward and backward derived by
hand, no graph: the floor minigrad is measured against), all from the same weights and batch.

A step is zero_grad, forward, cross-entropy, backward and an SGD update. `test_tensor_step.py`
times the three side by side; `bench_tensor_calls.py` counts minigrad's Python calls per part.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

import minigrad
import minigrad.functional as F
from minigrad import nn
from minigrad.optim import SGD

SIZES = (784, 512, 512, 10)
LR = 0.01


def make_weights(seed: int = 0) -> list[np.ndarray]:
    """Weights and biases in torch.nn.Linear's layout and default init: W (out, in), b (out,)."""
    rng = np.random.default_rng(seed)
    weights = []
    for n_in, n_out in itertools.pairwise(SIZES):
        bound = 1 / np.sqrt(n_in)
        weights.append(rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, n_out).astype(np.float32))
    return weights


def numpy_step_factory(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    """The floor: forward and backward of the network written out by hand with numpy."""
    params = [w.copy() for w in weights]
    rows = np.arange(len(y))

    def step() -> float:
        w1, b1, w2, b2, w3, b3 = params
        h1 = x @ w1.T
        h1 += b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T
        h2 += b2
        a2 = np.maximum(h2, 0)
        z = a2 @ w3.T
        z += b3
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        total = e.sum(axis=1, keepdims=True)
        loss = float(np.log(total[:, 0]).mean() - z[rows, y].mean())
        dz = e / total
        dz[rows, y] -= 1
        dz /= len(y)
        da2 = dz @ w3
        da2 *= h2 > 0
        da1 = da2 @ w2
        da1 *= h1 > 0
        grads = (da1.T @ x, da1.sum(0), da2.T @ a1, da2.sum(0), dz.T @ a2, dz.sum(0))
        for p, g in zip(params, grads):
            p -= LR * g
        return loss

    return step


def minigrad_step_factory(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    model = nn.TensorMLP(SIZES)
    for layer, (w, b) in zip(model.layers, zip(weights[::2], weights[1::2])):
        layer.weight.data = w.copy()
        layer.bias.data = b.copy()
    optimizer = SGD(model.parameters(), lr=LR)
    xs = minigrad.from_numpy(x)
    ys = minigrad.from_numpy(y)

    def step() -> float:
        optimizer.zero_grad()  # first, as in torch's examples: last step's grads are not kept alive
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def torch_step_factory(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    import torch

    layers = []
    for n_in, n_out in itertools.pairwise(SIZES):
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for layer, (w, b) in zip(linears, zip(weights[::2], weights[1::2])):
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    xs = torch.from_numpy(x)
    ys = torch.from_numpy(y)

    def step() -> float:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def batch(size: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A batch of `size` float32 inputs and their int64 classes."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((size, SIZES[0])).astype(np.float32), rng.integers(0, SIZES[-1], size).astype(
        np.int64
    )


FLOOR = "numpy (floor)"
STEPS = {
    FLOOR: numpy_step_factory,
    "minigrad": minigrad_step_factory,
    "torch": torch_step_factory,
}
