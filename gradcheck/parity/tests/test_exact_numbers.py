"""Exact numbers: each elementwise op's jet (value, first and second derivatives) comes from its
registry entry, the written-out arithmetic jets agree with it, one reverse pass over dual numbers
gives gradients and Hessian-vector products, IEEE's nan and inf stand where the math has no
value, and float64 rounding is to nearest."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import exact_jets, exact_numbers
from gradcheck.parity.exact_jets import ARITHMETIC, derive, jet, nearest_float
from gradcheck.parity.exact_numbers import Tape, apply, xp

POINTS = [(0.7, 1.3), (-2.5, 0.375), (3.0, -1e-3), (1e-8, 4.0), (0.0, -0.5), (-0.0, 2.0)]


def _as_float(x):
    return float(x) if mpmath.isfinite(x) else x


@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_each_written_out_arithmetic_jet_is_its_registry_entrys(name):
    spec = REGISTRY[name]
    with mpmath.workprec(192):
        for point in POINTS:
            values = [mpmath.mpf(v) for v in point[: spec.arity]]
            written, derived = ARITHMETIC[name](*values, order=2), derive(spec, values, {}, 2)
            assert written.value == derived.value
            assert written.d1 == derived.d1, (name, point)
            for row_w, row_d in zip(written.d2, derived.d2):  # the same up to the last few bits
                for w, d in zip(row_w, row_d):
                    assert abs((w or 0) - d) <= mpmath.ldexp(abs(d), -185), (name, point)


def test_a_jet_is_kept_by_its_exact_arguments_and_precision():
    exact_jets.clear_cache()
    spec = REGISTRY["tanh"]
    with mpmath.workprec(128):
        first = jet(spec, [mpmath.mpf(0.5)], {}, 2)
        assert jet(spec, [mpmath.mpf(0.5)], {}, 1) is first and exact_jets.cache_size() == 1
    with mpmath.workprec(256):
        assert jet(spec, [mpmath.mpf(0.5)], {}, 1) is not first
    assert exact_jets.cache_size() == 2


def test_a_reverse_pass_over_dual_numbers_gives_the_gradient_and_the_hessian_times_the_direction():
    # f = x * y + sin(x): gradient (y + cos x, x); Hessian [[-sin x, 1], [1, 0]]
    with mpmath.workprec(192), Tape(derivatives=True, tangents=True) as tape:
        x, y = tape.leaf(0.5, 2.0), tape.leaf(-1.5, 3.0)
        f = x * y + xp.sin(x)
        tape.backward([(f, mpmath.mpf(1))])
        assert x.adj == -1.5 + mpmath.cos(0.5) and y.adj == 0.5
        assert x.adj_t == -mpmath.sin(0.5) * 2.0 + 3.0 and y.adj_t == 2.0


def test_comparisons_a_rule_makes_are_logged_with_the_values_compared():
    with mpmath.workprec(64), Tape(derivatives=True, tangents=False) as tape:
        x = tape.leaf(0.0)
        apply(REGISTRY["relu"], [x], {})
        assert (mpmath.mpf(0), mpmath.mpf(0), False) in tape.decisions


@pytest.mark.parametrize(
    ("op", "args", "expected"),
    [
        ("div", (1.0, 0.0), math.inf),
        ("div", (-2.0, 0.0), -math.inf),
        ("div", (0.0, 0.0), math.nan),
        ("log", (0.0,), -math.inf),
        ("log", (-1.0,), math.nan),
        ("sqrt", (-1.0,), math.nan),
        ("pow", (0.0, -1.0), math.inf),
        ("pow", (-8.0, 1 / 3), math.nan),
        ("exp", (math.inf,), math.inf),
        ("tanh", (-math.inf,), -1.0),
        ("relu", (math.nan,), math.nan),
        ("maximum", (math.nan, 1.0), math.nan),
    ],
)
def test_where_the_math_has_no_finite_value_the_result_is_ieees(op, args, expected):
    with mpmath.workprec(64):
        value = _as_float(jet(REGISTRY[op], [mpmath.mpf(a) for a in args], {}, 0).value)
    assert value == expected or (math.isnan(expected) and math.isnan(value))


def test_clip_and_logaddexp_of_the_exact_numpy_are_the_registrys_clamp_and_log_of_exps():
    with mpmath.workprec(128):
        values = np.array([exact_numbers.constant(v) for v in (-2.0, 0.25, 3.0)], dtype=object)
        assert [float(v) for v in xp.clip(values, -0.5, 1.0)] == [-0.5, 0.25, 1.0]
        both = xp.logaddexp(exact_numbers.constant(1.0), exact_numbers.constant(-2.0))
        assert both.v == mpmath.log(mpmath.exp(1) + mpmath.exp(-2))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Fraction(1) + Fraction(1, 2**53), 1.0),  # a tie: to even
        (Fraction(1) + Fraction(3, 2**53), 1.0 + 2**-51),  # a tie: to even, upward
        (Fraction(1) + Fraction(1, 2**53) + Fraction(1, 2**60), 1.0 + 2**-52),  # above a tie: up
        (Fraction(3, 2**1075), 2 * 5e-324),  # a subnormal tie: to even
        (Fraction(1, 2**1075), 0.0),  # half the smallest subnormal: to even, 0
        (Fraction(2**1024 - 2**971 + 2**969), 1.7976931348623157e308),  # the largest float
        (Fraction(2**1024 - 2**970), math.inf),  # the midpoint above it: to even, inf
        (-Fraction(7, 3), -7 / 3),
    ],
)
def test_nearest_float_rounds_to_nearest_with_ties_to_even(value, expected):
    with mpmath.workprec(2000):
        x = mpmath.mpf(value.numerator) / value.denominator
    assert nearest_float(x) == expected
