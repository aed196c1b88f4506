"""The ops of `Value`: the shared elementwise rules, and the two that only a Value with a constant has.

`x ** c` and `c ** x` for a number c follow torch's pow with a scalar (c = 0.5 computed as a square
root, a zero gradient when c == 0), which differs from the elementwise `Pow` of two inputs. Every
other op of Value is a rule of `elementwise`, re-exported here under its old name.
"""

from __future__ import annotations

from typing import Any

from minigrad import elementwise
from minigrad import floatmath as fm
from minigrad.elementary import cos, data, div, log, power, sin, where
from minigrad.elementwise import *  # noqa: F403 (the shared rules, still importable from here)
from minigrad.op import ScalarOp


def power_scalar(x: Any, c: float) -> Any:
    return fm.pow_scalar(x, c) if type(x) is float else x**c


class PowConst(ScalarOp):
    """a ** c for a number c; zero gradient when c == 0, as torch."""

    name = "**"
    forward = staticmethod(fm.pow_scalar)

    @staticmethod
    def backward(g, out, a, c):
        return (where(c == 0, 0.0, g * (c * power_scalar(a, c - 1.0))),)


class RPowConst(ScalarOp):
    """c ** a for a number c; zero gradient at c == 0 with a >= 0, as torch."""

    name = "**"
    forward = staticmethod(lambda a, c: fm.pow(c, a))

    @staticmethod
    def backward(g, out, a, c):
        return (where(c == 0 and data(a) >= 0, 0.0, g * (out * fm.log(c))),)


__all__ = [
    *elementwise.__all__,
    "PowConst",
    "RPowConst",
    "ScalarOp",
    "cos",
    "div",
    "log",
    "power",
    "power_scalar",
    "sin",
]
