"""Elementary functions for derivative rules that run on floats, arrays, Values and Tensors alike.

A rule is written once as math (`g * cos(a)`); these helpers pick the implementation from the
argument's type: a float goes to `floatmath` (IEEE results instead of exceptions), an ndarray to
numpy, a `Value` or `Tensor` to its own method, so that under `create_graph=True` the rule builds
a differentiable graph. Masks are computed on `data(x)`, never differentiated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import floatmath as fm

# numpy scalars go where arrays go (0-d arrays to every rule), so the checker sees arrays alone
ARRAYS: tuple[type[np.ndarray], ...] = (np.ndarray, np.generic)  # type: ignore[assignment]


def data(x: Any) -> Any:
    """The raw number or array behind x: for masks and other non-differentiable quantities."""
    return x if type(x) is float or isinstance(x, ARRAYS) else x.data


def _elementary(on_float: Callable[[float], float], on_array: Callable[[Any], Any], method: str) -> Any:
    """A function of one argument: `on_float` for floats, `on_array` for arrays, else `x.method()`."""

    def apply(x: Any) -> Any:
        if type(x) is float:
            return on_float(x)
        if isinstance(x, ARRAYS):
            return on_array(x)
        return getattr(x, method)()

    apply.__name__ = apply.__qualname__ = method
    apply.__doc__ = f"{method}(x) for a float, an array, a Value or a Tensor."
    apply.on_float = on_float  # type: ignore[attr-defined]  # for callers that only ever hold floats
    return apply


def sigmoid_array(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), torch's formula (overflow of e^-x gives the right limit 0)."""
    return 1.0 / (1.0 + np.exp(-x))


def relu_array(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """max(x, 0), taken against a row of zeros for floats: numpy's vectorised loop for maximum needs
    both operands running along the row, and against the number 0 it takes one about 3x slower
    (same results, bit for bit). `out=x` overwrites x, for a caller that owns it."""
    if x.dtype.kind != "f":
        return np.maximum(x, 0, out=out)
    return np.maximum(x, np.zeros(x.shape[-1:], dtype=x.dtype), out=out)


exp = _elementary(fm.exp, np.exp, "exp")
log = _elementary(fm.log, np.log, "log")
sin = _elementary(fm.sin, np.sin, "sin")
cos = _elementary(fm.cos, np.cos, "cos")
tanh = _elementary(fm.tanh, np.tanh, "tanh")
sigmoid = _elementary(fm.sigmoid, sigmoid_array, "sigmoid")
sqrt = _elementary(fm.sqrt, np.sqrt, "sqrt")
relu = _elementary(fm.relu, relu_array, "relu")


def sign(x: Any) -> Any:
    """-1, 0 or 1 of the raw data (0 for zero and nan, as torch's `sgn`); never differentiated."""
    x = data(x)
    if type(x) is float:
        return fm.sign(x)
    return np.sign(x, where=~np.isnan(x), out=np.zeros_like(x))


def nonfinite(x: Any) -> Any:
    """Whether the raw data is inf or nan (a bool for a float, a bool array for an array); a mask."""
    x = data(x)
    return not math.isfinite(x) if type(x) is float else ~np.isfinite(x)


def finite(x: Any) -> Any:
    """Whether the raw data is a finite number (a bool for a float, a bool array for an array); a mask."""
    x = data(x)
    return math.isfinite(x) if type(x) is float else np.isfinite(x)


def inverse_binade(*xs: Any) -> Any:
    """2**-e with max(|x|) / 2**e in [0.5, 1), e kept a few binades inside the dtype's range; 1
    where that maximum is 0, inf or nan. Multiplying by it is exact, so a rule can square the
    scaled x where x * x would overflow or underflow and scale back after, with the same digits
    wherever x * x would not have."""
    xs = tuple(data(x) for x in xs)
    if all(type(x) is float for x in xs):
        exponent = math.frexp(max(abs(x) for x in xs))[1]
        return math.ldexp(1.0, -max(-1016, min(1016, exponent)))
    largest = np.maximum.reduce([np.abs(x) for x in np.broadcast_arrays(*xs)])
    limit = np.finfo(largest.dtype).maxexp - 8
    return np.ldexp(np.ones_like(largest), -np.clip(np.frexp(largest)[1], -limit, limit))


def zeros_like(x: Any) -> Any:
    """A constant 0 of x's shape and dtype (0.0 for a scalar): a gradient that stays 0 even
    where the incoming one is inf or nan, and has no derivative of its own."""
    x = data(x)
    return 0.0 if type(x) is float else np.zeros_like(x)


def div(x: Any, y: Any) -> Any:
    """x / y; for two floats IEEE's result (inf or nan) instead of ZeroDivisionError."""
    if type(x) is float and type(y) is float:
        return fm.div(x, y)
    return x / y


def power(x: Any, y: Any) -> Any:
    """x ** y; for two floats IEEE's result instead of an exception, for arrays C's pow."""
    if type(x) is float and type(y) is float:
        return fm.pow(x, y)
    if isinstance(x, ARRAYS) and isinstance(y, ARRAYS):
        return power_array(x, y)
    return x**y


def power_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y with C's pow at every element, as torch's kernel for a tensor exponent. numpy computes
    a lone exponent 0.5 as sqrt instead, which gives -0.0 at -0.0 and nan at -inf (pow: +0.0, inf)."""
    out = np.power(x, y)
    if np.size(y) == 1 and y == 0.5:
        out = np.where(np.isneginf(x), np.inf, np.abs(out))
    return out


def power_scalar(x: Any, c: float) -> Any:
    """x ** c for a number c, as torch's pow with a scalar exponent: c = 0.5 and -0.5 are sqrt and
    1 / sqrt, so (-0.0) ** 0.5 is -0.0, (-0.0) ** -0.5 is -inf and (-inf) ** ±0.5 is nan; c = 3 and
    -2 are x*x*x and 1/(x*x), torch's digits (pow can differ by an ulp)."""
    if type(x) is float:
        return fm.pow_scalar(x, c)
    if isinstance(x, ARRAYS):
        if c == 0.5:
            return np.sqrt(x)
        if c == -0.5:
            return 1.0 / np.sqrt(x)
        if c == 3.0:
            return x * x * x
        if c == -2.0:
            return 1.0 / (x * x)
        return np.power(x, x.dtype.type(c))
    return x**c


def _kept_or_zero(keep: np.ndarray, values: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """`values` where `keep`, else 0 (written into `values` when `overwrite`). np.where picks element
    by element with a branch each, many times slower than a multiply on a random mask; multiplying
    by the mask is the same choice when every value is finite, and only then is it used (inf * 0
    would be nan)."""
    if np.logical_and.reduce(np.isfinite(values), axis=None):  # .all() without its two Python calls
        return np.multiply(values, keep, out=values) if overwrite else values * keep
    return np.where(keep, values, 0.0)


def where(cond: Any, x: Any, y: Any, overwrite: bool = False) -> Any:
    """Elementwise `x if cond else y`; x or y may be a number. `cond` is raw data (a bool or a bool array).

    Choosing, rather than multiplying by a 0/1 mask, keeps an inf or nan in the unchosen branch
    out of the result, as torch's rules do. `overwrite` says x is an array the caller owns: a
    choice between x and zero may then be written into it instead of a new array.
    """
    if type(cond) is bool:  # floats and Values: one choice
        return x if cond else y
    if isinstance(x, ARRAYS) and type(y) is float and y == 0.0:
        return _kept_or_zero(cond, x, overwrite)
    if isinstance(y, ARRAYS) and type(x) is float and x == 0.0:
        return _kept_or_zero(~cond, y)
    if isinstance(x, ARRAYS) or isinstance(y, ARRAYS) or (type(x) is float and type(y) is float):
        return np.where(cond, x, y)
    if hasattr(x, "_local_grads"):
        return x.where(cond, y)
    return y.where(~cond, x)
