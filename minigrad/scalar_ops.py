"""The ops of `Value`: the shared elementwise rules, and the one only a Value with a constant has.

`c ** x` for a number c follows torch's pow with a scalar base (a zero gradient at c == 0 with
x >= 0), which differs from the elementwise `Pow` of two inputs. Every other op of Value, `x ** c`
(`PowConst`, shared with Tensor) included, is a rule of `elementwise`, re-exported here under its
old name.
"""

from __future__ import annotations

from minigrad import elementwise
from minigrad import floatmath as fm
from minigrad.elementary import cos, data, div, log, power, power_scalar, sin, where
from minigrad.elementwise import *  # noqa: F403 (the shared rules, still importable from here)
from minigrad.op import ScalarOp


class RPowConst(ScalarOp):
    """c ** a for a number c; zero gradient at c == 0 with a >= 0, as torch."""

    name = symbol = "**"
    forward = staticmethod(lambda a, c: fm.pow(c, a))

    @staticmethod
    def backward(g, out, a, c):
        return (where(c == 0 and data(a) >= 0, 0.0, g * (out * fm.log(c))),)


__all__ = [
    *elementwise.__all__,
    "RPowConst",
    "ScalarOp",
    "cos",
    "div",
    "log",
    "power",
    "power_scalar",
    "sin",
]
