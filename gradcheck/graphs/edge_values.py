"""Edge-value tables for the registry's entries: the inputs where float64 arithmetic is at its limits.

Every op is checked at signed zeros, the smallest subnormal, +-1e-300, +-1e300, +-inf and nan;
each entry adds its own overflow points, kinks and poles. `gradcheck.parity.edge_check` runs the tables
(the engine's value and gradient must match torch's there, non-finite pattern included).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

INF = float("inf")
NAN = float("nan")
SUBNORMAL = 5e-324  # the smallest positive float64

# Where every op is checked: the limits of float64 and the simplest numbers.
COMMON: tuple[float, ...] = (
    0.0,
    -0.0,
    SUBNORMAL,
    -SUBNORMAL,
    1e-300,
    -1e-300,
    1.0,
    -1.0,
    1e300,
    -1e300,
    INF,
    -INF,
    NAN,
)
# Where exp-based formulas overflow or underflow when written naively: exp(2x) overflows past
# x = 355, exp(x) past 709.78, exp(-x) below -745 underflows to 0; 20 and 40 saturate tanh and sigmoid.
EXP_POINTS: tuple[float, ...] = (
    20.0,
    -20.0,
    40.0,
    -40.0,
    355.0,
    -355.0,
    710.0,
    -710.0,
    745.0,
    -745.0,
    709.78,
)
# The operands each binary op is checked at (every ordered pair of them).
PAIR_VALUES: tuple[float, ...] = (0.0, -0.0, 1.0, -1.0, 2.0, 0.5, SUBNORMAL, 1e300, -1e300, INF, -INF, NAN)
# Exponents of `x ** c` checked at every COMMON base.
EXPONENTS: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5, 1.5)

Edge = tuple[tuple[Any, ...], dict[str, Any]]


def unary(*extra: float) -> tuple[Edge, ...]:
    """A unary op's table: COMMON plus the op's own points (overflow points, kinks, poles)."""
    return tuple(((x,), {}) for x in _distinct(COMMON + extra))


def binary(*extra: tuple[float, float]) -> tuple[Edge, ...]:
    """A binary op's table: every ordered pair of PAIR_VALUES, plus the op's own pairs."""
    pairs = list(itertools.product(PAIR_VALUES, repeat=2)) + list(extra)
    return tuple((pair, {}) for pair in {repr(p): p for p in pairs}.values())


def with_exponents(exponents: Iterable[float] = EXPONENTS) -> tuple[Edge, ...]:
    """`x ** c`'s table: every COMMON base with every exponent."""
    return tuple(((x,), {"exponent": c}) for c in exponents for x in COMMON)


def _distinct(values: tuple[float, ...]) -> tuple[float, ...]:
    """Values without repeats, telling -0.0 from 0.0 and keeping nan once."""
    return tuple({repr(v): v for v in values}.values())


def describe(args: tuple[Any, ...], attrs: dict[str, Any]) -> str:
    """How a finding names an edge case: "at x = -0.0", "at (1.0, 0.0)", "at x = 0.0, exponent 0.0"."""
    place = f"x = {args[0]!r}" if len(args) == 1 else "(" + ", ".join(repr(a) for a in args) + ")"
    extras = "".join(f", {k} {v!r}" for k, v in attrs.items())
    return f"at {place}{extras}"
