"""The scalar benchmark's engines and graphs: how to make a leaf in minigrad, PyPI micrograd and
torch 0-d tensors, and micrograd's demo network and a tanh chain written once for all of them.

Kept apart from `bench_scalar.py` (the measuring) so that an engine's own process imports only this.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import micrograd.engine

import minigrad

# --- micrograd gets tanh ---------------------------------------------------------------------------
# PyPI micrograd has no tanh. A tiny subclass adds one in micrograd's own closure style, and
# micrograd's ops are pointed at the subclass so that every result has it.
_MicrogradValue = micrograd.engine.Value


class MicrogradTanhValue(_MicrogradValue):
    def tanh(self) -> MicrogradTanhValue:
        t = math.tanh(self.data)
        out = MicrogradTanhValue(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out


micrograd.engine.Value = MicrogradTanhValue


# --- the engines: how to make a leaf and read it back --------------------------------------------


@dataclass(frozen=True)
class Engine:
    name: str
    leaf: Callable[[float], Any]
    constant: Callable[[float], Any]
    data: Callable[[Any], float]
    grad: Callable[[Any], float]
    backward: Callable[[Any], None]


def torch_engine() -> Engine:
    """torch 0-d float64 tensors; imported only when measured, so `--without-torch` runs without it."""
    import torch

    torch.set_num_threads(1)
    return Engine(
        "torch",
        lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True),
        lambda x: torch.tensor(x, dtype=torch.float64),
        lambda v: v.item(),
        lambda v: v.grad.item(),
        lambda v: v.backward(),
    )


ENGINES = [
    Engine(
        "minigrad",
        minigrad.Value,
        minigrad.Value,
        lambda v: v.data,
        lambda v: v.grad,
        lambda v: v.backward(),
    ),
    Engine(
        "micrograd",
        MicrogradTanhValue,
        MicrogradTanhValue,
        lambda v: v.data,
        lambda v: v.grad,
        lambda v: v.backward(),
    ),
]


# --- the two graphs, written once for every engine -------------------------------------------------


def mlp_numbers(seed: int = 0) -> tuple[list[list[list[float]]], list[list[float]], list[int]]:
    """Weights (per layer: rows of [w..., b]), 32 two-moons-like points and their ±1 labels."""
    rng = random.Random(seed)
    sizes = [2, 16, 16, 1]
    layers = [
        [[rng.uniform(-1, 1) for _ in range(n_in + 1)] for _ in range(n_out)]
        for n_in, n_out in itertools.pairwise(sizes)
    ]
    points, labels = [], []
    for i in range(32):
        angle = math.pi * rng.random()
        upper = i % 2 == 0
        x = math.cos(angle) if upper else 1 - math.cos(angle)
        y = math.sin(angle) if upper else 0.5 - math.sin(angle)
        points.append([x + rng.gauss(0, 0.1), y + rng.gauss(0, 0.1)])
        labels.append(1 if upper else -1)
    return layers, points, labels


def mlp_graph(engine: Engine, numbers: Any) -> tuple[Any, list[Any]]:
    """micrograd's demo loss: mean SVM hinge over the points + 1e-4 · sum of squared parameters."""
    layers, points, labels = numbers
    params = [[[engine.leaf(v) for v in row] for row in layer] for layer in layers]

    def build() -> Any:
        scores = []
        for point in points:
            act = [engine.constant(v) for v in point]
            for depth, layer in enumerate(params):
                last = depth == len(params) - 1
                outs = []
                for row in layer:
                    z = sum((w * a for w, a in zip(row[:-1], act)), row[-1])
                    outs.append(z if last else z.relu())
                act = outs
            scores.append(act[0])
        losses = [(1 + -y * s).relu() for y, s in zip(labels, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = 1e-4 * sum(p * p for layer in params for row in layer for p in row)
        return data_loss + reg_loss

    return build, [p for layer in params for row in layer for p in row]


def chain_graph(engine: Engine, steps: int) -> tuple[Any, list[Any]]:
    w, b, y0 = engine.leaf(0.9), engine.leaf(0.1), engine.leaf(0.5)

    def build() -> Any:
        y = y0
        for _ in range(steps):
            y = (y * w + b).tanh()
        return y

    return build, [w, b, y0]
