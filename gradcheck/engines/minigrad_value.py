"""minigrad's scalar `Value` as an engine under test (all scalar ops, second derivatives)."""

from __future__ import annotations

from typing import Any

from gradcheck.engines.minigrad_grad import MinigradGradAdapter
from gradcheck.graphs.registry import SCALAR_OPS
from minigrad import Value


class MinigradValue(MinigradGradAdapter):
    """minigrad.Value; gradients through `minigrad.grad` seeded with the cotangent per output."""

    name = "minigrad"
    ops = frozenset(SCALAR_OPS)

    def leaf(self, value: Any) -> Value:
        return Value(value)

    def constant(self, x: Any) -> float:
        return float(x)

    def plain(self, g: Any) -> float:
        return float(g)

    def inner(self, g: Value, u: Any) -> Value:
        return g * float(u)
