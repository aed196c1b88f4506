"""minigrad's scalar `Value` as an engine under test (all scalar ops, second derivatives)."""

from __future__ import annotations

from typing import Any

from gradcheck.engines.minigrad_grad import MinigradGradAdapter
from gradcheck.graphs.registry import SCALAR_OPS
from gradcheck.graphs.spellings import Spelling
from minigrad import Value

# The other spellings minigrad documents, on Value and Tensor: the built-in abs(), and `**` with a
# Python int exponent.
BUILTIN_ABS = Spelling("abs", "abs(x)", lambda a, k: abs(a[0]), code=lambda a, k: f"abs({a[0]})")
INT_EXPONENT = Spelling(
    "pow_const",
    "x ** int",
    lambda a, k: a[0] ** int(k["exponent"]),
    integer_exponent=True,
    code=lambda a, k: f"{a[0]} ** {int(k['exponent'])}",
)
VALUE_SPELLINGS = (
    BUILTIN_ABS,
    Spelling(
        "pow",
        "x ** int",
        lambda a, k: a[0] ** int(a[1]),
        integer_exponent=True,
        code=lambda a, k: f"{a[0]} ** int({a[1]})",
    ),
    INT_EXPONENT,
)


class MinigradValue(MinigradGradAdapter):
    """minigrad.Value; gradients through `minigrad.grad` seeded with the cotangent per output."""

    name = "minigrad"
    ops = frozenset(SCALAR_OPS)
    spellings = VALUE_SPELLINGS

    def leaf(self, value: Any) -> Value:
        return Value(value)

    def constant(self, x: Any) -> float:
        return float(x)

    def plain(self, g: Any) -> float:
        return float(g)

    def inner(self, g: Value, u: Any) -> Value:
        return g * float(u)
