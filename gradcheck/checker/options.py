"""Validation of what users pass to `gradcheck`/`gradgradcheck`: eps, tolerances, seed and flags.

A wrong option must never turn into a silent pass: `eps=2*math.pi` makes every central difference
of `sin` zero, so a backward that returns 0 would agree with it. Each check names the function,
the argument, the value given and what is expected.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

#: The finite-difference step is eps * max(1, |x|): eps is relative to each input's scale.
#: Above MAX_EPS (1% of the scale) a difference quotient is a slope over a wide interval, not a
#: derivative; below MIN_EPS (64 float64 ulps of the scale) it is mostly rounding of x + h.
MAX_EPS = 1e-2
MIN_EPS = 64 * 2.0**-52


def check_options(
    name: str,
    f: Callable[..., Any],
    *,
    eps: Any,
    atol: Any,
    rtol: Any,
    nondet_tol: Any,
    seed: Any,
    flags: dict[str, Any],
) -> None:
    """Raise TypeError/ValueError for the first option of `name` (gradcheck, gradgradcheck) that is wrong."""
    if not callable(f):
        raise TypeError(f"{name}: f must be callable (the function to check), got {_show(f)}")
    step = _real(name, "eps", eps)
    if not MIN_EPS <= step <= MAX_EPS:
        raise ValueError(
            f"{name}: eps={eps!r} is outside [{MIN_EPS:.1e}, {MAX_EPS:g}]: the step is eps * max(1, |x|), "
            "relative to each input's scale, so eps must be small enough to measure a derivative and "
            "large enough to rise above rounding (default 1e-6)"
        )
    for option, value in (("atol", atol), ("rtol", rtol)):
        if value is not None:
            _non_negative(name, option, value)
    _non_negative(name, "nondet_tol", nondet_tol)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise TypeError(f"{name}: seed must be a non-negative int, got {_show(seed)}")
    for option, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name}: {option} must be True or False, got {_show(value)}")


def _real(name: str, option: str, value: Any) -> float:
    """A finite real number (bools are refused: `eps=True` is a typo, not a step of 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: {option} must be a real number, got {_show(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name}: {option} must be finite, got {value!r}")
    return number


def _non_negative(name: str, option: str, value: Any) -> None:
    if _real(name, option, value) < 0:
        raise ValueError(f"{name}: {option} must be >= 0, got {value!r}")


def _show(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"
