"""minigrad's `Tensor` (float64) as an engine under test: scalar and tensor graphs, second derivatives."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.backends.minigrad_grad import MinigradGradAdapter
from gradcheck.registry import TENSOR_OPS
from minigrad import Tensor


def _tensor(x: Any) -> Tensor:
    return Tensor(np.asarray(x, dtype=np.float64))


class MinigradTensor(MinigradGradAdapter):
    """minigrad.Tensor; gradients through `minigrad.grad` with one cotangent tensor per output."""

    name = "minigrad-tensor"
    ops = frozenset(TENSOR_OPS)
    tensor = True

    def leaf(self, value: Any) -> Tensor:
        return Tensor(np.array(value, dtype=np.float64), requires_grad=True)

    def value(self, node: Tensor) -> np.ndarray:
        return node.data

    def constant(self, x: Any) -> Tensor:
        return _tensor(x)

    def plain(self, g: Tensor) -> np.ndarray:
        return g.data

    def inner(self, g: Tensor, u: Any) -> Tensor:
        return (g * _tensor(u)).sum()
