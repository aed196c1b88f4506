"""The scalar benchmark's engines and graphs: how to make a leaf in minigrad, PyPI micrograd and
torch 0-d tensors, and micrograd's demo network and a tanh chain written once for all of them.

Kept apart from `bench_scalar.py` (the measuring) so that an engine's own process imports only this.
"""

from __future__ import annotations

import itertools
import math
import random
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import micrograd.engine

import minigrad

# --- micrograd gets tanh ---------------------------------------------------------------------------
# PyPI micrograd has no tanh. A tiny subclass adds one in micrograd's own closure style, and
# `give_micrograd_tanh` points micrograd's ops at the subclass so that every result has it.
_MicrogradValue = micrograd.engine.Value


class MicrogradTanhValue(_MicrogradValue):
    def tanh(self) -> MicrogradTanhValue:
        t = math.tanh(self.data)
        out = MicrogradTanhValue(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out


def give_micrograd_tanh() -> None:
    """Make every micrograd result a MicrogradTanhValue, in this whole process: bench_scalar's
    engine processes call it; a test patches `micrograd.engine.Value` for its own duration."""
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


def run_in_big_stack(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a thread with a 512 MiB stack and a raised recursion limit (micrograd's topo sort)."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # re-raised in the caller
            errors.append(exc)

    old_limit, old_size = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(2_000_000)
    threading.stack_size(512 * 1024 * 1024)
    try:
        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if errors:
        raise errors[0]
    return box[0]
