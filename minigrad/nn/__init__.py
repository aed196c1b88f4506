"""Neural-network building blocks: the `Module` base, micrograd's scalar layers, and losses."""

from minigrad.nn.linear import Linear, TensorMLP
from minigrad.nn.losses import binary_cross_entropy, binary_cross_entropy_with_logits, hinge_loss, mse_loss
from minigrad.nn.module import Module
from minigrad.nn.scalar_layers import MLP, Layer, Neuron

__all__ = [
    "MLP",
    "Layer",
    "Linear",
    "Module",
    "Neuron",
    "TensorMLP",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "hinge_loss",
    "mse_loss",
]
