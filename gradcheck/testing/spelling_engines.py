"""Engines whose bug is in one spelling of an op or one argument type only, for the tests of
spellings (`gradcheck.graphs.spellings`): a campaign that calls each op one way passes them.

`AbsoluteThroughSqrt` is minigrad's Value with a second spelling of abs, `absolute(x)`, that an
engine writes as sqrt(x * x): right wherever x is not 0, nan at 0 (0 times sqrt's infinite
slope), where `abs(x)`'s rule gives 0; as HIPS autograd 1.8.0's `np.absolute` beside its
`np.abs` (HIPS/autograd#712). `IntegerPowerKeepsSlope` is minigrad's Value whose `**` with a
Python int exponent takes a rule of its own that gives x ** 0 the slope 1 (a one where a zero
belongs), while a float exponent of the same value is right; as JAX 0.4.18's integer-array
exponent (jax-ml/jax#17995). The `...CalledOneWay` twins are the same engines with no
spellings listed: what a campaign that calls each op one way (main before spellings) checks.
"""

from __future__ import annotations

from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.spellings import Spelling
from minigrad import Value


def absolute(x: Value) -> Value:
    """|x| as sqrt(x * x): its slope x / sqrt(x * x) is 0 / 0 at x = 0 (the planted bug)."""
    return (x * x) ** 0.5


def integer_power(x: Value, n: int) -> Value:
    """x ** n for a Python int n by the engine's integer rule: right but for n = 0, where the
    result keeps x's slope (x - x.data + 1: the value 1, the slope 1; the planted bug)."""
    if n == 0:
        return x - x.data + 1.0
    return x ** float(n)


class AbsoluteThroughSqrt(MinigradValue):
    name = "absolute-through-sqrt"
    ops = frozenset({"add", "mul", "tanh", "abs"})
    spellings = (Spelling("abs", "absolute(x)", lambda a, k: absolute(a[0])),)


class AbsoluteThroughSqrtCalledOneWay(AbsoluteThroughSqrt):
    name = "absolute-through-sqrt-called-one-way"
    spellings = ()


class IntegerPowerKeepsSlope(MinigradValue):
    name = "integer-power-keeps-slope"
    ops = frozenset({"add", "mul", "tanh", "pow_const"})
    spellings = (
        Spelling(
            "pow_const",
            "x ** int",
            lambda a, k: integer_power(a[0], int(k["exponent"])),
            integer_exponent=True,
        ),
    )


class IntegerPowerKeepsSlopeCalledOneWay(IntegerPowerKeepsSlope):
    name = "integer-power-keeps-slope-called-one-way"
    spellings = ()
