"""minigrad's `Tensor` (float64) as an engine under test: scalar and tensor graphs, second derivatives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import minigrad
from gradcheck.backends.base import EngineAdapter
from gradcheck.registry import TENSOR_OPS
from minigrad import Tensor


def _tensor(x: Any) -> Tensor:
    return Tensor(np.asarray(x, dtype=np.float64))


class MinigradTensor(EngineAdapter):
    """minigrad.Tensor; gradients through `minigrad.grad` with one cotangent tensor per output."""

    name = "minigrad-tensor"
    ops = frozenset(TENSOR_OPS)
    tensor = True
    create_graph = True

    def leaf(self, value: Any) -> Tensor:
        return Tensor(np.array(value, dtype=np.float64), requires_grad=True)

    def value(self, node: Tensor) -> np.ndarray:
        return node.data

    def gradients(
        self, outputs: Sequence[Tensor], inputs: Sequence[Tensor], cotangent: Sequence[Any]
    ) -> list[Any]:
        grads = minigrad.grad(list(outputs), list(inputs), [_tensor(c) for c in cotangent], allow_unused=True)
        return [None if g is None else g.data for g in grads]

    def hvp(
        self,
        outputs: Sequence[Tensor],
        inputs: Sequence[Tensor],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        grads = minigrad.grad(
            list(outputs),
            list(inputs),
            [_tensor(c) for c in cotangent],
            create_graph=True,
            materialize_grads=True,
        )
        total = None
        for g, u in zip(grads, direction):
            term = (g * _tensor(u)).sum()
            total = term if total is None else total + term
        second = minigrad.grad(total, list(inputs), allow_unused=True)
        return [None if g is None else g.data for g in second]
