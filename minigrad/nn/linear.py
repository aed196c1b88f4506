"""Tensor layers: `Linear` (torch.nn.Linear's shapes and default initialisation) and `TensorMLP`."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigrad.functional import linear, linear_relu
from minigrad.nn.module import Module
from minigrad.tensor import Tensor
from minigrad.tensor_creation import uniform


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features), as torch.nn.Linear.

    Both are drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)), which is what torch's
    default (kaiming_uniform with a=sqrt(5), and its bias rule) comes to.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        dtype: Any = None,
        generator: np.random.Generator | int | None = None,
    ) -> None:
        if in_features < 0 or out_features < 0:
            raise ValueError(f"Linear: sizes must be non-negative, got ({in_features}, {out_features})")
        if isinstance(generator, int):
            generator = np.random.default_rng(generator)
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        shape = (out_features, in_features)
        self.weight = uniform(*shape, low=-bound, high=bound, generator=generator, dtype=dtype)
        self.weight.requires_grad_(True)
        self.bias: Tensor | None = None
        if bias:
            self.bias = uniform(out_features, low=-bound, high=bound, generator=generator, dtype=dtype)
            self.bias.requires_grad_(True)

    def __call__(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def __repr__(self) -> str:
        return (
            f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None})"
        )


class TensorMLP(Module):
    """Linear layers with ReLU between them (none after the last): sizes [in, hidden..., out]."""

    def __init__(
        self, sizes: Sequence[int], dtype: Any = None, generator: np.random.Generator | int | None = None
    ) -> None:
        if isinstance(sizes, int) or not all(isinstance(n, int) and n > 0 for n in sizes):
            raise TypeError(
                "TensorMLP: sizes must be a list of positive layer widths [in, hidden..., out], "
                f"got {sizes!r}"
            )
        if len(sizes) < 2:
            raise ValueError(f"TensorMLP: need at least input and output sizes, got {list(sizes)}")
        if isinstance(generator, int):
            generator = np.random.default_rng(generator)
        self.layers = [
            Linear(n_in, n_out, dtype=dtype, generator=generator) for n_in, n_out in itertools.pairwise(sizes)
        ]

    def __call__(self, x: Tensor) -> Tensor:
        *hidden, last = self.layers
        for layer in hidden:
            x = linear_relu(x, layer.weight, layer.bias)  # layer(x).relu() as one op
        return last(x)

    def __repr__(self) -> str:
        return f"TensorMLP({', '.join(repr(layer) for layer in self.layers)})"
