"""Kink awareness: kinks, jumps and domain edges are told apart from smooth (even wiggly) functions."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from gradcheck import is_differentiable_at
from gradcheck.checker.tolerance import PROBES
from minigrad import Value


def test_relu_at_zero_is_a_kink_at_the_point_with_its_one_sided_slopes():
    verdict = is_differentiable_at(lambda x: x.relu(), [Value(0.0)])
    assert not verdict and verdict.kind == "kink" and verdict.at_point
    assert (verdict.left_slope, verdict.right_slope) == (0.0, 1.0)
    assert "not differentiable here: kink at this point" in verdict.describe()


def test_a_kink_close_by_is_reported_as_near_not_at_the_point():
    verdict = is_differentiable_at(lambda x: x.abs(), [Value(3e-5)])
    assert not verdict and verdict.kind == "kink" and not verdict.at_point
    assert verdict.nearest is not None and 3e-5 <= verdict.nearest <= 1e-3
    assert "within ±" in verdict.describe()


def test_a_step_is_a_jump():
    verdict = is_differentiable_at(lambda x: 1.0 if x > 0 else 0.0, [0.0])
    assert not verdict and verdict.kind == "jump"


def test_sqrt_at_zero_is_a_domain_edge():
    verdict = is_differentiable_at(lambda x: x.sqrt(), [Value(1e-6)])
    assert not verdict and verdict.kind == "domain edge"


def test_the_kink_is_found_in_the_right_coordinate_of_several_inputs():
    f = lambda x, y, z: x * y + z.relu() * x
    verdict = is_differentiable_at(f, [Value(1.0), Value(2.0), Value(0.0)])
    assert not verdict and verdict.coordinate == 2
    assert is_differentiable_at(f, [Value(1.0), Value(2.0), Value(0.0)], coordinates=[0, 1])


def test_a_wiggly_but_smooth_function_is_smooth():
    assert is_differentiable_at(lambda x: (x * 300).sin() * 3, [Value(0.2)])


def test_many_inputs_are_probed_along_random_directions():
    x = np.linspace(-1, 1, 40)
    assert is_differentiable_at(lambda v: np.tanh(v).sum(), [x])
    kinked = x.copy()
    kinked[17] = 0.0
    assert not is_differentiable_at(lambda v: np.abs(v).sum(), [kinked])


@given(st.sampled_from([p for p in PROBES if p.family != "piecewise"]), st.integers(0, 2**32 - 1))
def test_smooth_probe_functions_are_smooth_everywhere_in_their_domain(probe, seed):
    x = np.random.default_rng(seed).uniform(*probe.domain, 3)
    assert is_differentiable_at(probe.fn, [Value(float(v)) for v in x])


@given(st.floats(-2, 2), st.floats(-2, 2))
def test_piecewise_functions_are_smooth_away_from_their_kinks(a, b):
    assume(abs(a) > 1e-2 and abs(a - b) > 1e-2)
    assert is_differentiable_at(lambda x, y: x.relu() * y + (x - y).abs(), [Value(a), Value(b)])


def test_a_point_where_the_function_is_not_finite_says_so():
    verdict = is_differentiable_at(lambda x: math.nan * x, [1.0])
    assert not verdict and verdict.kind == "non-finite value" and verdict.at_point
