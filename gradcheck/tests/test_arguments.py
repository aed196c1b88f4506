"""gradcheck's options are validated: a wrong one is one clear error, never a silent pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcheck import GradcheckError, gradcheck, gradgradcheck
from minigrad import Value


def frozen_sin(x: Value) -> Value:
    """sin(x) forward with a backward of 0: a wrong derivative every honest check must catch."""
    return x * 0.0 + math.sin(x.data)


CHECKS = [gradcheck, gradgradcheck]


def test_the_wrong_sin_fails_with_the_default_step():
    with pytest.raises(GradcheckError):
        gradcheck(frozen_sin, [Value(0.3)])


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_step_of_a_whole_period_is_refused_instead_of_passing_a_wrong_sin(fast_mode):
    with pytest.raises(
        ValueError, match=r"gradcheck: eps=6\.28.* is outside .*relative to each input's scale"
    ):
        gradcheck(frozen_sin, [Value(0.3)], eps=2 * math.pi, fast_mode=fast_mode)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("eps", [0.0, -1e-6, 0.5, 1e-300, math.inf, math.nan])
def test_eps_outside_the_useful_range_or_not_finite_is_a_value_error(check, eps):
    with pytest.raises(ValueError, match=rf"{check.__name__}: eps"):
        check(lambda x: x.tanh(), [Value(0.3)], eps=eps)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("eps", ["a", None, True, [1e-6], 1e-6j])
def test_eps_that_is_not_a_real_number_is_a_type_error_naming_it(check, eps):
    with pytest.raises(
        TypeError, match=rf"{check.__name__}: eps must be a real number, got {type(eps).__name__}"
    ):
        check(lambda x: x.tanh(), [Value(0.3)], eps=eps)


def test_a_real_step_in_range_is_accepted_also_as_a_numpy_float():
    assert gradcheck(lambda x: x.tanh(), [Value(0.3)], eps=np.float64(1e-5))
    assert gradcheck(lambda x: x.tanh(), [Value(0.3)], eps=1e-3)


@pytest.mark.parametrize("option", ["atol", "rtol", "nondet_tol"])
@pytest.mark.parametrize(
    ("value", "error"),
    [("x", TypeError), (-1e-9, ValueError), (math.nan, ValueError), (math.inf, ValueError)],
)
def test_tolerances_are_non_negative_finite_numbers(option, value, error):
    with pytest.raises(error, match=rf"gradcheck: {option} "):
        gradcheck(lambda x: x.tanh(), [Value(0.3)], **{option: value})


def test_a_wrong_function_with_a_string_tolerance_is_a_type_error_not_a_numpy_error():
    with pytest.raises(TypeError, match=r"gradcheck: atol must be a real number, got str 'x'"):
        gradcheck(frozen_sin, [Value(0.3)], atol="x")


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("flag", ["fast_mode", "raise_exception", "check_kinks"])
@pytest.mark.parametrize("value", [1, "yes", None])
def test_flags_are_booleans(check, flag, value):
    with pytest.raises(
        TypeError, match=rf"{check.__name__}: {flag} must be True or False, got {type(value).__name__}"
    ):
        check(lambda x: x.tanh(), [Value(0.3)], **{flag: value})


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_the_seed_is_a_non_negative_int(seed):
    with pytest.raises(TypeError, match=r"gradcheck: seed must be a non-negative int"):
        gradcheck(lambda x: x.tanh(), [Value(0.3)], seed=seed)


@pytest.mark.parametrize("check", CHECKS)
def test_f_must_be_callable(check):
    with pytest.raises(TypeError, match=rf"{check.__name__}: f must be callable"):
        check(Value(1.0), [Value(0.3)])


def test_options_are_checked_before_f_runs():
    def f(x):
        raise AssertionError("f ran before its options were validated")

    with pytest.raises(ValueError, match="eps"):
        gradcheck(f, [Value(0.3)], eps=-1.0)
