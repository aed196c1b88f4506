"""Elementary functions for derivative rules that run on floats, arrays, Values and Tensors alike.

A rule is written once as math (`g * cos(a)`); these helpers pick the implementation from the
argument's type: a float goes to `floatmath` (IEEE results instead of exceptions), an ndarray to
numpy, a `Value` or `Tensor` to its own method, so that under `create_graph=True` the rule builds
a differentiable graph. Masks are computed on `data(x)`, never differentiated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import floatmath as fm

ARRAYS = (np.ndarray, np.generic)


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
    return apply


def sigmoid_array(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), torch's formula (overflow of e^-x gives the right limit 0)."""
    return 1.0 / (1.0 + np.exp(-x))


def relu_array(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


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
    return fm.sign(x) if type(x) is float else np.sign(x)


def div(x: Any, y: Any) -> Any:
    """x / y; for two floats IEEE's result (inf or nan) instead of ZeroDivisionError."""
    if type(x) is float and type(y) is float:
        return fm.div(x, y)
    return x / y


def power(x: Any, y: Any) -> Any:
    """x ** y; for two floats IEEE's result instead of an exception."""
    if type(x) is float and type(y) is float:
        return fm.pow(x, y)
    if isinstance(x, ARRAYS) and isinstance(y, ARRAYS):
        return np.power(x, y)
    return x**y


def _kept_or_zero(keep: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` where `keep`, else 0. np.where picks element by element with a branch each, many
    times slower than a multiply on a random mask; multiplying by the mask is the same choice
    when every value is finite, and only then is it used (inf * 0 would be nan)."""
    if np.isfinite(values).all():
        return values * keep
    return np.where(keep, values, 0.0)


def where(cond: Any, x: Any, y: Any) -> Any:
    """Elementwise `x if cond else y`; x or y may be a number. `cond` is raw data (a bool or a bool array).

    Choosing, rather than multiplying by a 0/1 mask, keeps an inf or nan in the unchosen branch
    out of the result, as torch's rules do.
    """
    if type(cond) is bool:  # floats and Values: one choice
        return x if cond else y
    if isinstance(x, ARRAYS) and type(y) is float and y == 0.0:
        return _kept_or_zero(cond, x)
    if isinstance(y, ARRAYS) and type(x) is float and x == 0.0:
        return _kept_or_zero(~cond, y)
    if isinstance(x, ARRAYS) or isinstance(y, ARRAYS) or (type(x) is float and type(y) is float):
        return np.where(cond, x, y)
    if hasattr(x, "_local_grads"):
        return x.where(cond, y)
    return y.where(~cond, x)
