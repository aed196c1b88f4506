"""The scalar ops of the registry (tensor graphs use them too, elementwise): one entry per op.

Each entry's reference math (`numpy`, `grads`, `mpmath`) is written here from the textbook
definitions, independently of any engine's derivative rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs import edge_values
from gradcheck.graphs.opspec import CANCELLATION, KINK_MARGIN, POLE_MARGIN, Accuracy, OpSpec, at_zero

# `x ** c` draws these exponents: 0 first (its derivative at x = 0 is a classic bug), then the
# simple integers, roots and non-integers.
EXPONENTS: tuple[float, ...] = (0.0, 1.0, 2.0, -1.0, 0.5, 3.0, -2.0, 1.5, -0.5, 2.5, -1.5, 0.25)


def _pow_const_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    (a,), c = args, attrs["exponent"]
    if float(c).is_integer():
        return np.abs(a) >= POLE_MARGIN if c < 0 else np.ones(np.shape(a), dtype=bool)
    return a >= POLE_MARGIN


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _sign(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.sign(args[0])


def _add_sub_domain(args: Sequence[np.ndarray], out: np.ndarray) -> np.ndarray:
    return np.abs(out) >= CANCELLATION * (np.abs(args[0]) + np.abs(args[1]))


def _power_rule(base: Any, exponent: Any) -> Any:
    """d/da a**c = c * a**(c-1), and 0 when c = 0 at a = 0 (as torch; elsewhere c = 0 gives 0
    by itself, and its rate along c, a**(c-1), is kept for second derivatives)."""
    return np.where((exponent != 0) | (base != 0), exponent * base ** (exponent - 1.0), 0.0)


def _rate_along_exponent(base: Any, out: Any) -> Any:
    """d/db a**b = a**b * log a for a > 0; 0 at a = 0 (as torch); nan below 0 (no real rate)."""
    return np.where(base > 0, out * np.log(base), np.where(base == 0, 0.0, np.nan))


def mp_divide(mp: Any, a: Any, b: Any) -> Any:
    """a / b on mpmath numbers, with IEEE's results where mpmath raises: +-inf for a nonzero
    number over 0 and nan for 0 / 0 (mpmath has no signed zero: the divisor counts as +0)."""
    if b:
        return a / b
    return mp.nan if not a or mp.isnan(a) else mp.inf * mp.sign(a)


def mp_power(mp: Any, a: Any, b: Any) -> Any:
    """a ** b on mpmath numbers, with IEEE's inf for 0 to a negative power, where mpmath raises
    (a negative base to a fractional power gives a complex number: nan to its readers)."""
    return mp.inf if not a and b < 0 else a**b


def _atan2_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """Away from the origin (a pole) and from the branch cut, the negative x axis."""
    y, x = args
    return (np.hypot(y, x) >= POLE_MARGIN) & ((x >= 0) | (np.abs(y) >= POLE_MARGIN))


# Each entry's `accuracy` (in EPS units of the result, and of each operand's gradient
# contribution) is the largest error measured over 10,000 points of its domain across torch,
# Python's math (minigrad, micrograd, textbook formulas), the registry's numpy math, JAX and HIPS
# autograd (`python benchmarks/op_accuracy.py --points 10000`: the figures noted beside each),
# plus a fifth or more, rounded up to a quarter; `test_op_accuracy` fails when one is understated.
SCALAR_SPECS: list[OpSpec] = [
    OpSpec(
        "add",
        2,
        lambda a, k: a[0] + a[1],
        lambda a, k: a[0] + a[1],
        "{0} + {1}",
        domain=lambda a, k: _add_sub_domain(a, a[0] + a[1]),
        grads=lambda a, k, out: (1.0, 1.0),
        family="arithmetic",
        accuracy=Accuracy(0.5, (0.0, 0.0)),  # measured: 0.50 (correctly rounded), 0
        number_operands=True,
        edges=edge_values.binary((1e300, 1e300), (-1e300, -1e300)),
        mpmath=lambda mp, a, b: a + b,
        array=lambda xp, a, k: a[0] + a[1],
    ),
    OpSpec(
        "sub",
        2,
        lambda a, k: a[0] - a[1],
        lambda a, k: a[0] - a[1],
        "{0} - {1}",
        domain=lambda a, k: _add_sub_domain(a, a[0] - a[1]),
        grads=lambda a, k, out: (1.0, -1.0),
        family="arithmetic",
        accuracy=Accuracy(0.5, (0.0, 0.0)),  # measured: 0.50 (correctly rounded), 0
        number_operands=True,
        edges=edge_values.binary((1e300, -1e300)),
        mpmath=lambda mp, a, b: a - b,
        array=lambda xp, a, k: a[0] - a[1],
    ),
    OpSpec(
        "mul",
        2,
        lambda a, k: a[0] * a[1],
        lambda a, k: a[0] * a[1],
        "{0} * {1}",
        grads=lambda a, k, out: (a[1], a[0]),
        family="arithmetic",
        accuracy=Accuracy(0.5, (0.5, 0.5)),  # measured: 0.49, 0.49, 0.49 (correctly rounded)
        number_operands=True,
        edges=edge_values.binary((1e300, 1e300), (1e-300, 1e-300), (1e300, 1e-300)),
        mpmath=lambda mp, a, b: a * b,
        array=lambda xp, a, k: a[0] * a[1],
    ),
    OpSpec(
        "div",
        2,
        lambda a, k: a[0] / a[1],
        lambda a, k: a[0] / a[1],
        "{0} / {1}",
        domain=lambda a, k: np.abs(a[1]) >= POLE_MARGIN,
        kinks="pole at divisor 0",
        poles=lambda a, k: at_zero(a[1]),
        grads=lambda a, k, out: (1.0 / a[1], -a[0] / (a[1] * a[1])),
        family="arithmetic",
        accuracy=Accuracy(1.25, (1.25, 2.25)),  # measured: 0.91 (micrograd's a * b ** -1), 0.89, 1.84
        number_operands=True,
        edges=edge_values.binary((1e300, 1e-300), (1e-300, 1e300), (-1.0, 0.0), (1.0, -0.0)),
        mpmath=mp_divide,
        array=lambda xp, a, k: a[0] / a[1],
    ),
    OpSpec(
        "pow",
        2,
        lambda a, k: a[0] ** a[1],
        lambda a, k: a[0] ** a[1],
        "{0} ** {1}",
        domain=lambda a, k: (a[0] >= POLE_MARGIN) & (np.abs(a[1]) <= 4.0),
        kinks="base must be positive",
        poles=lambda a, k: at_zero(a[0]) & (a[1] < 1.0),
        # torch at base 0: d/da = 0 when b = 0; d/db = 0 when b >= 0 (not 0 * log 0 = nan); below
        # 0, a ** b is real at integer b alone, so it has no rate along b (log a is not real): nan
        kink_cases=(((0.0, 2.0), {}), ((0.0, 0.0), {}), ((2.0, 0.0), {})),
        grads=lambda a, k, out: (_power_rule(a[0], a[1]), _rate_along_exponent(a[0], out)),
        family="sqrt_pow",
        accuracy=Accuracy(0.75, (24.0, 1.0)),  # measured: 0.50, 17.1 (b - 1 rounded, times log a), 0.68
        number_operands=True,
        edges=edge_values.binary((1e300, 2.0), (10.0, 400.0), (2.0, -1100.0), (0.0, -1.0), (-2.0, 0.5)),
        mpmath=mp_power,
        array=lambda xp, a, k: a[0] ** a[1],
    ),
    OpSpec(
        "pow_const",
        1,
        lambda a, k: a[0] ** k["exponent"],
        lambda a, k: a[0] ** k["exponent"],
        "{0} ** {exponent}",
        domain=_pow_const_domain,
        kinks="pole at 0 for negative exponents; base >= 0 for fractional ones",
        # the power rule c * x**(c-1) has a pole at 0 for every c < 1 (for c = 0 too, written
        # naively); below 0 a fractional power is outside the domain, not at the pole
        poles=lambda a, k: at_zero(a[0]) & (k["exponent"] < 1.0) & ((a[0] >= 0) | (k["exponent"] % 1 == 0)),
        attrs={"exponent": EXPONENTS},
        # torch: d/dx x**0 = 0 everywhere, also at x = 0 (where c * x**(c-1) would divide by 0)
        kink_cases=(((0.0,), {"exponent": 0.0}), ((0.0,), {"exponent": 2.0}), ((0.0,), {"exponent": 1.0})),
        grads=lambda a, k, out: (_power_rule(a[0], k["exponent"]),),
        family="sqrt_pow",
        accuracy=Accuracy(1.25, (1.75,)),  # measured: 0.85, 1.34
        edges=edge_values.with_exponents(),
        mpmath=lambda mp, x, exponent: mp_power(mp, x, mp.mpf(exponent)),
        array=lambda xp, a, k: a[0] ** k["exponent"],
    ),
    OpSpec(
        "neg",
        1,
        lambda a, k: -a[0],
        lambda a, k: -a[0],
        "-{0}",
        grads=lambda a, k, out: (-1.0,),
        bounded=True,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),  # measured: 0, 0 (exact)
        edges=edge_values.unary(),
        mpmath=lambda mp, x: -x,
        array=lambda xp, a, k: -a[0],
    ),
    OpSpec(
        "relu",
        1,
        lambda a, k: a[0].relu(),
        lambda a, k: np.maximum(a[0], 0.0),
        "{0}.relu()",
        domain=lambda a, k: np.abs(a[0]) >= KINK_MARGIN,
        branch=_sign,
        kinks="kink at 0 (torch: derivative 0 there)",
        kink_cases=(((0.0,), {}), ((-0.0,), {})),
        grads=lambda a, k, out: (np.where(a[0] > 0, 1.0, 0.0),),
        bounded=True,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.0,)),  # measured: 0, 0 (exact)
        mpmath=lambda mp, x: mp.mpf(0) if x <= 0 else x,  # nan stays nan
        edges=edge_values.unary(),
        array=lambda xp, a, k: xp.maximum(a[0], 0.0),
    ),
    OpSpec(
        "tanh",
        1,
        lambda a, k: a[0].tanh(),
        lambda a, k: np.tanh(a[0]),
        "{0}.tanh()",
        # beyond |x| = 8 the derivative 1 - tanh^2 is all cancellation
        domain=lambda a, k: np.abs(a[0]) <= 8.0,
        grads=lambda a, k, out: (1.0 - out * out,),
        bounded=True,
        family="tanh_sigmoid",
        accuracy=Accuracy(2.25, (2.75,)),  # measured: 1.74 (JAX), 2.23 (HIPS autograd's 1 / cosh(x) ** 2)
        mpmath=lambda mp, x: mp.tanh(x),
        edges=edge_values.unary(*edge_values.EXP_POINTS),
        array=lambda xp, a, k: xp.tanh(a[0]),
    ),
    OpSpec(
        "sigmoid",
        1,
        lambda a, k: a[0].sigmoid(),
        lambda a, k: _sigmoid(a[0]),
        "{0}.sigmoid()",
        domain=lambda a, k: np.abs(a[0]) <= 16.0,
        grads=lambda a, k, out: (out * (1.0 - out),),
        bounded=True,
        family="tanh_sigmoid",
        accuracy=Accuracy(1.25, (2.5,)),  # measured: 1.00, 2.02
        mpmath=lambda mp, x: 1 / (1 + mp.exp(-x)),
        edges=edge_values.unary(*edge_values.EXP_POINTS),
        array=lambda xp, a, k: 1.0 / (1.0 + xp.exp(-a[0])),
    ),
    OpSpec(
        "exp",
        1,
        lambda a, k: a[0].exp(),
        lambda a, k: np.exp(a[0]),
        "{0}.exp()",
        domain=lambda a, k: (a[0] <= 9.0) & (a[0] >= -20.0),
        grads=lambda a, k, out: (out,),
        bounded=True,
        family="exp_log",
        accuracy=Accuracy(1.25, (0.5,)),  # measured: 1.01 (JAX), 0.28
        mpmath=lambda mp, x: mp.exp(x),
        edges=edge_values.unary(*edge_values.EXP_POINTS),
        array=lambda xp, a, k: xp.exp(a[0]),
    ),
    OpSpec(
        "log",
        1,
        lambda a, k: a[0].log(),
        lambda a, k: np.log(a[0]),
        "{0}.log()",
        domain=lambda a, k: a[0] >= POLE_MARGIN,
        kinks="pole at 0",
        poles=lambda a, k: at_zero(a[0]) & (a[0] >= 0),
        grads=lambda a, k, out: (1.0 / a[0],),
        bounded=True,
        family="exp_log",
        accuracy=Accuracy(0.75, (1.25,)),  # measured: 0.49, 0.85 (x ** -1)
        mpmath=lambda mp, x: mp.log(x),
        edges=edge_values.unary(1e-320, 1e308, 2.0),
        array=lambda xp, a, k: xp.log(a[0]),
    ),
    OpSpec(
        "sin",
        1,
        lambda a, k: a[0].sin(),
        lambda a, k: np.sin(a[0]),
        "{0}.sin()",
        domain=lambda a, k: np.abs(a[0]) <= 100.0,
        grads=lambda a, k, out: (np.cos(a[0]),),
        bounded=True,
        family="trig",
        accuracy=Accuracy(0.75, (1.0,)),  # measured: 0.50, 0.81
        mpmath=lambda mp, x: mp.sin(x),
        edges=edge_values.unary(1e16, 3.141592653589793),
        array=lambda xp, a, k: xp.sin(a[0]),
    ),
    OpSpec(
        "atan",
        1,
        lambda a, k: a[0].atan(),
        lambda a, k: np.arctan(a[0]),
        "{0}.atan()",
        grads=lambda a, k, out: (1.0 / (1.0 + a[0] * a[0]),),
        bounded=True,
        family="trig",
        accuracy=Accuracy(0.75, (1.5,)),  # measured: 0.52, 1.09
        mpmath=lambda mp, x: mp.atan(x),
        edges=edge_values.unary(1e16, 1e308),
        array=lambda xp, a, k: xp.arctan(a[0]),
    ),
    OpSpec(
        "atan2",
        2,
        lambda a, k: a[0].atan2(a[1]),
        lambda a, k: np.arctan2(a[0], a[1]),
        "{0}.atan2({1})",
        domain=_atan2_domain,
        kinks="pole at (0, 0); jump of 2*pi across y = 0 for x < 0",
        poles=lambda a, k: at_zero(a[0]) & at_zero(a[1]),
        grads=lambda a, k, out: (a[1] / (a[0] * a[0] + a[1] * a[1]), -a[0] / (a[0] * a[0] + a[1] * a[1])),
        bounded=True,
        family="trig",
        accuracy=Accuracy(1.0, (2.0, 2.0)),  # measured: 0.72, 1.66, 1.58
        mpmath=lambda mp, y, x: mp.atan2(y, x),
        array=lambda xp, a, k: xp.arctan2(a[0], a[1]),
        edges=edge_values.binary((0.0, -1.0), (-0.0, -1.0), (1e-300, -1e300), (1e300, 1e-300)),
    ),
    OpSpec(
        "cos",
        1,
        lambda a, k: a[0].cos(),
        lambda a, k: np.cos(a[0]),
        "{0}.cos()",
        domain=lambda a, k: np.abs(a[0]) <= 100.0,
        grads=lambda a, k, out: (-np.sin(a[0]),),
        bounded=True,
        family="trig",
        accuracy=Accuracy(0.75, (1.25,)),  # measured: 0.47, 0.90
        mpmath=lambda mp, x: mp.cos(x),
        edges=edge_values.unary(1e16, 3.141592653589793),
        array=lambda xp, a, k: xp.cos(a[0]),
    ),
    OpSpec(
        "sqrt",
        1,
        lambda a, k: a[0].sqrt(),
        lambda a, k: np.sqrt(a[0]),
        "{0}.sqrt()",
        domain=lambda a, k: a[0] >= POLE_MARGIN,
        kinks="infinite slope at 0",
        poles=lambda a, k: at_zero(a[0]) & (a[0] >= 0),
        grads=lambda a, k, out: (0.5 / out,),
        bounded=True,
        family="sqrt_pow",
        accuracy=Accuracy(0.75, (0.75,)),  # measured: 0.49, 0.31
        mpmath=lambda mp, x: mp.sqrt(x),
        edges=edge_values.unary(1e-320, 1e308, 4.0),
        array=lambda xp, a, k: xp.sqrt(a[0]),
    ),
    OpSpec(
        "abs",
        1,
        lambda a, k: a[0].abs(),
        lambda a, k: np.abs(a[0]),
        "{0}.abs()",
        domain=lambda a, k: np.abs(a[0]) >= KINK_MARGIN,
        branch=_sign,
        kinks="kink at 0 (torch: derivative 0 there)",
        kink_cases=(((0.0,), {}), ((-0.0,), {})),
        grads=lambda a, k, out: (np.sign(a[0]),),
        bounded=True,
        family="piecewise",
        accuracy=Accuracy(0.0, (1.25,)),  # measured: 0, 0.88 (HIPS autograd's g * x / |x|)
        mpmath=lambda mp, x: abs(x),
        edges=edge_values.unary(),
        array=lambda xp, a, k: xp.abs(a[0]),
    ),
]
