"""micrograd's scalar layers on `Value`: `Neuron`, `Layer` and `MLP`, same signatures and behaviour.

Weights start uniform in [-1, 1] and biases at 0. By default they are drawn from Python's global
`random` (so `random.seed(1337)` reproduces micrograd's weights exactly); pass `rng=` (a seed or a
`random.Random`) for a model whose weights do not depend on global state.

`activation` picks the nonlinearity: "relu" is micrograd's MLP (relu on the hidden layers, a linear
last layer); "tanh" (or "sigmoid") is the network of micrograd's lessons, that nonlinearity on
every layer, the last one included.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from minigrad.nn.module import Module
from minigrad.value import Value

Rng = random.Random | int | None
Scalar = Value | int | float
ACTIVATIONS = ("relu", "tanh", "sigmoid")


def make_rng(rng: Rng) -> Any:
    """A source of random numbers: the global `random` module, a given Random, or one seeded by an int."""
    if rng is None or rng is random:
        return random
    if isinstance(rng, random.Random):
        return rng
    if isinstance(rng, int) and not isinstance(rng, bool):
        return random.Random(rng)
    raise TypeError(f"rng must be None, an int seed or a random.Random, got {type(rng).__name__} {rng!r}")


def _check_size(name: str, what: str, n: Any, minimum: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < minimum:
        raise ValueError(f"{name}: {what} must be an integer >= {minimum}, got {n!r}")
    return n


def _check_activation(name: str, activation: Any) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"{name}: activation must be one of {', '.join(map(repr, ACTIVATIONS))}, got {activation!r}"
        )
    return activation


class Neuron(Module):
    """One unit: activation(w·x + b) (relu by default), or w·x + b when `nonlin=False`."""

    def __init__(self, nin: int, nonlin: bool = True, rng: Rng = None, activation: str = "relu") -> None:
        _check_size("Neuron", "nin (number of inputs)", nin, 0)
        self.activation = _check_activation("Neuron", activation)
        source = make_rng(rng)
        self.w = [Value(source.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x: Sequence[Scalar]) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"{self!r}: expected {len(self.w)} inputs, got {len(x)}")
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return getattr(act, self.activation)() if self.nonlin else act

    def __repr__(self) -> str:
        kind = (
            {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid"}[self.activation]
            if self.nonlin
            else "Linear"
        )
        return f"{kind}Neuron({len(self.w)})"


class Layer(Module):
    """`nout` neurons reading the same inputs; returns a list, or one Value when `nout == 1`."""

    def __init__(self, nin: int, nout: int, **kwargs: Any) -> None:
        _check_size("Layer", "nout (number of neurons)", nout, 1)
        kwargs["rng"] = make_rng(kwargs.get("rng"))  # one stream shared by all neurons
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x: Sequence[Scalar]) -> Value | list[Value]:
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Layers of sizes `nouts` on `nin` inputs. activation="relu" (the default, micrograd's): relu in
    every layer except the last, which is linear; "tanh" or "sigmoid": that in every layer."""

    def __init__(self, nin: int, nouts: Sequence[int], rng: Rng = None, activation: str = "relu") -> None:
        if isinstance(nouts, int) or not nouts:
            raise ValueError(f"MLP: nouts must be a non-empty list of layer sizes, got {nouts!r}")
        _check_activation("MLP", activation)
        source = make_rng(rng)
        sz = [nin, *nouts]
        last = len(nouts) - 1
        self.layers = [
            Layer(
                sz[i], sz[i + 1], nonlin=i != last or activation != "relu", rng=source, activation=activation
            )
            for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence[Scalar]) -> Value | list[Value]:
        out: Any = x
        for layer in self.layers:
            out = layer([out] if isinstance(out, Value) else out)  # a 1-neuron layer gives one Value
        return out

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
