"""The network protocol: how the harness drives an engine's nn layer through training steps.

An engine with layers and optimizers (minigrad's `nn.MLP`, `nn.TensorMLP`, `optim.SGD`/`Adam`)
trains a small multilayer perceptron described by an `Architecture`, from given weights, on given
data, and reports each step's loss, parameter gradients, hidden-activation gradients and updated
parameters; `gradcheck.parity.nn_step` compares them with torch's.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

KINDS = ("value", "tensor")  # a network of scalar Values, or of Tensor layers
ACTIVATIONS = ("relu", "tanh", "sigmoid")
LOSSES = ("mse_loss", "cross_entropy")
OPTIMIZERS = ("sgd", "adam")


@dataclass(frozen=True)
class Architecture:
    """A multilayer perceptron and how it is trained.

    sizes: [inputs, hidden..., outputs]. activation: "relu" applies it to the hidden layers only
    (the last layer is linear); "tanh" and "sigmoid" to every layer (micrograd's lessons). loss:
    "mse_loss" against real targets, or "cross_entropy" against class indices (tensor networks).
    optimizer: "sgd" (with `momentum`) or "adam", with `lr` and `weight_decay`. retain_hidden: the
    hidden activations keep their gradients (`retain_grad`), which are compared too.
    """

    kind: str
    sizes: tuple[int, ...]
    activation: str = "relu"
    batch: int = 4
    loss: str = "mse_loss"
    optimizer: str = "sgd"
    lr: float = 0.1
    momentum: float = 0.0
    weight_decay: float = 0.0
    steps: int = 2
    retain_hidden: bool = False

    def describe(self) -> str:
        extra = f", momentum={self.momentum}" if self.optimizer == "sgd" and self.momentum else ""
        return (
            f"{self.kind} MLP {list(self.sizes)} ({self.activation}), batch {self.batch}, {self.loss}, "
            f"{self.optimizer}(lr={self.lr}{extra}, weight_decay={self.weight_decay}), {self.steps} steps"
            + (", hidden gradients retained" if self.retain_hidden else "")
        )


@dataclass(frozen=True)
class Data:
    """The training data: inputs (batch, sizes[0]) and targets, real (batch, sizes[-1]) for
    mse_loss or class indices (batch,) for cross_entropy."""

    inputs: np.ndarray
    targets: np.ndarray


@dataclass
class Step:
    """What one training step gave: the loss, each parameter's gradient (weights and biases, layer
    by layer, as arrays (out, in) and (out,)), each hidden activation's gradient when retained, and
    the parameters after the optimizer's update."""

    loss: float
    grads: list[np.ndarray]
    params: list[np.ndarray]
    hidden_grads: list[np.ndarray] = field(default_factory=list)


class NetworkAdapter(Protocol):
    """An engine's nn layer as the harness drives it."""

    name: str
    kinds: tuple[str, ...]  # which of KINDS it trains

    def train(self, arch: Architecture, weights: list[np.ndarray], data: Data) -> list[Step]:
        """`arch.steps` training steps from `weights` ([W0, b0, W1, b1, ...], float64) on `data`."""
        ...


def layer_shapes(sizes: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The parameter shapes of an MLP, in order: (out, in) and (out,) per layer."""
    shapes: list[tuple[int, ...]] = []
    for n_in, n_out in itertools.pairwise(sizes):
        shapes += [(n_out, n_in), (n_out,)]
    return shapes
