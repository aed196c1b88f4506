"""minigrad's scalar `Value` as an engine under test (all scalar ops, second derivatives)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import minigrad
from gradcheck.backends.base import EngineAdapter
from gradcheck.registry import SCALAR_OPS
from minigrad import Value


class MinigradValue(EngineAdapter):
    """minigrad.Value; gradients through `minigrad.grad` seeded with the cotangent per output."""

    name = "minigrad"
    ops = frozenset(SCALAR_OPS)
    create_graph = True

    def leaf(self, value: Any) -> Value:
        return Value(value)

    def gradients(
        self, outputs: Sequence[Value], inputs: Sequence[Value], cotangent: Sequence[Any]
    ) -> list[Any]:
        return list(
            minigrad.grad(list(outputs), list(inputs), [float(c) for c in cotangent], allow_unused=True)
        )

    def hvp(
        self,
        outputs: Sequence[Value],
        inputs: Sequence[Value],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        grads = minigrad.grad(
            list(outputs),
            list(inputs),
            [float(c) for c in cotangent],
            create_graph=True,
            materialize_grads=True,
        )
        s = grads[0] * float(direction[0])
        for g, u in zip(grads[1:], direction[1:]):
            s = s + g * float(u)
        second = minigrad.grad(s, list(inputs), allow_unused=True)
        return [None if g is None else float(g) for g in second]
