"""Float64 math with IEEE results instead of exceptions, matching torch's float64 CPU kernels.

Python's `math` raises where torch returns inf or nan (`log(0)`, `exp(1000)`, `sqrt(-1)`,
`(-8) ** (1/3)`, `1 / 0`). These wrappers keep `math`'s speed on the common path and fall back
to numpy's IEEE semantics only when `math` refuses.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

INF = math.inf
NAN = math.nan


def _numpy(func: np.ufunc, *args: float) -> float:
    with np.errstate(all="ignore"):
        return float(func(*args))


def exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def log(x: float) -> float:
    try:
        return math.log(x)
    except ValueError:
        return -INF if x == 0 else NAN


def sqrt(x: float) -> float:
    try:
        return math.sqrt(x)
    except ValueError:
        return NAN


def sin(x: float) -> float:
    try:
        return math.sin(x)
    except ValueError:
        return NAN


def cos(x: float) -> float:
    try:
        return math.cos(x)
    except ValueError:
        return NAN


def tanh(x: float) -> float:
    return math.tanh(x)


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), as torch computes it; never raises: e^-x overflowing to inf gives exactly 0."""
    return 1.0 / (1.0 + exp(-x))


def pow(base: float, exponent: float) -> float:
    try:
        return math.pow(base, exponent)
    except (ValueError, OverflowError, ZeroDivisionError):
        return _numpy(np.power, float(base), float(exponent))


def pow_scalar(x: float, c: float) -> float:
    """x ** c for a constant exponent as torch computes it: c = 0.5 and -0.5 as sqrt and 1/sqrt,
    2, 3, -1 and -2 as x*x, x*x*x, 1/x and 1/(x*x).

    The roots differ from `pow` at -inf and -0.0 (sqrt(-inf) is nan, 1/sqrt(-0.0) is -inf), the
    products by an ulp at some points.
    """
    if c == 0.5:
        return sqrt(x)
    if c == -0.5:
        return div(1.0, sqrt(x))
    if c == 2.0:
        return x * x
    if c == 3.0:
        return x * x * x
    if c == -1.0:
        return div(1.0, x)
    if c == -2.0:
        return div(1.0, x * x)
    return pow(x, c)


def div(x: float, y: float) -> float:
    try:
        return x / y
    except ZeroDivisionError:
        return _numpy(np.divide, float(x), float(y))


def relu(x: float) -> float:
    return 0.0 if x <= 0 else x


def sign(x: float) -> float:
    """-1, 0 or 1; 0 for zero and for nan, as torch's `sgn`."""
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return 0.0


class NumberTooLargeError(OverflowError):
    """A Python int beyond what the op's dtype holds (float64's ~1.8e308, or int64) was given to an op."""


def as_float(number: Any, op: str) -> float:
    """`number` as a float, or NumberTooLargeError naming `op` and the number when it does not fit."""
    try:
        return float(number)
    except OverflowError:
        raise too_large(number, op, f"a float (max {sys.float_info.max:.4g})") from None


def too_large(number: Any, op: str, target: str) -> NumberTooLargeError:
    text = str(number)
    shown = text if len(text) <= 30 else f"{text[:10]}...{text[-5:]} ({len(text)} digits)"
    return NumberTooLargeError(f"{op}: the number {shown} is too large for {target}")
