"""The accurate oracle: Richardson extrapolation and mpmath beat central differences by far."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcheck.checker.numerical import FlatFunction, jacobian_column, richardson_column, ridders
from gradcheck.checker.oracle import MPValue, accurate_gradient, accurate_vjp
from gradcheck.checker.tolerance import PROBES
from gradcheck.engines.loading import load_engine
from minigrad import Value

MINIGRAD = load_engine("minigrad")


def exact_gradient(fn, x):
    """Reference gradient by mpmath.diff at 50 digits on the Value-API function."""
    with mpmath.workdps(50):
        point = [mpmath.mpf(float(v)) for v in x]
        out = []
        for i in range(len(x)):

            def along(t, i=i):
                args = [MPValue(p) for p in point]
                args[i] = MPValue(t)
                return fn(*args).data

            out.append(float(mpmath.diff(along, point[i])))
    return np.array(out)


@pytest.mark.parametrize("probe", [p for p in PROBES if p.family != "piecewise"], ids=lambda p: p.name)
def test_richardson_is_far_more_accurate_than_central_differences(probe):
    rng = np.random.default_rng(7)
    worst_central = worst_richardson = 0.0
    for _ in range(10):
        x = rng.uniform(*probe.domain, 3)
        exact = exact_gradient(probe.fn, x)
        func = FlatFunction(probe.fn, [Value(float(v)) for v in x], MINIGRAD)
        scale = np.maximum(1.0, np.abs(exact))
        central = np.array([jacobian_column(func, i, 1e-6)[0] for i in range(3)])
        richardson = np.array([richardson_column(func, i).value[0] for i in range(3)])
        worst_central = max(worst_central, float(np.max(np.abs(central - exact) / scale)))
        worst_richardson = max(worst_richardson, float(np.max(np.abs(richardson - exact) / scale)))
    assert worst_richardson < 1e-11
    assert worst_richardson * 30 < worst_central


def test_ridders_error_estimate_bounds_the_true_error():
    estimate = ridders(lambda h: np.array([(math.exp(1 + h) - math.exp(1 - h)) / (2 * h)]), 0.1)
    true_error = abs(estimate.value[0] - math.e)
    assert true_error < 1e-12
    assert true_error <= 10 * estimate.error[0] + 1e-15


def test_accurate_gradient_on_a_plain_float_function_uses_richardson():
    f = lambda x, y: math.exp(x) * math.sin(y)  # math.* drops mpmath precision: not generic
    g = accurate_gradient(f, np.array([0.4, 1.1]))
    np.testing.assert_allclose(g, [math.exp(0.4) * math.sin(1.1), math.exp(0.4) * math.cos(1.1)], rtol=1e-12)


def test_accurate_gradient_on_a_generic_function_is_exact():
    f = lambda x, y: (x * y).exp() + y.log()
    x = np.array([0.3, 2.0])
    exact = [2.0 * math.exp(0.6), 0.3 * math.exp(0.6) + 0.5]
    np.testing.assert_allclose(accurate_gradient(f, x, method="mpmath"), exact, rtol=1e-15)
    np.testing.assert_allclose(accurate_gradient(f, x), exact, rtol=1e-15)
    np.testing.assert_allclose(accurate_gradient(f, x, method="richardson"), exact, rtol=1e-12)


def test_auto_falls_back_when_a_generic_looking_function_drops_to_float():
    # returns an MPValue, but math.exp squeezed it through a float: mpmath would differentiate noise
    f = lambda x: x * 0.0 + math.exp(float(x)) + x.exp()
    g = accurate_gradient(f, np.array([0.5]))
    assert g[0] == pytest.approx(2 * math.exp(0.5), rel=1e-11)


def test_cotangent_weights_the_outputs():
    f = lambda x, y: (x * y, x + y, y * y)
    g = accurate_gradient(f, np.array([2.0, 3.0]), cotangent=np.array([1.0, -2.0, 0.5]))
    np.testing.assert_allclose(g, [3.0 - 2.0, 2.0 - 2.0 + 3.0], rtol=1e-12)


@given(st.floats(0.05, 5.0))
def test_oracle_is_accurate_near_a_domain_edge(x):
    # log near 0: the first Richardson step must shrink to stay inside the domain
    g = accurate_gradient(lambda v: math.log(v), np.array([x]), method="richardson")
    assert g[0] == pytest.approx(1.0 / x, rel=1e-10)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="1-D array"):
        accurate_gradient(lambda x: x, np.ones((2, 2)))
    with pytest.raises(ValueError, match="pass a cotangent"):
        accurate_gradient(lambda x: (x, x), np.ones(1), method="richardson")
    with pytest.raises(ValueError, match="method must be"):
        accurate_gradient(lambda x: x, np.ones(1), method="exact")
    with pytest.raises(TypeError, match="did not return mpmath numbers"):
        accurate_gradient(lambda x: math.sin(x), np.ones(1), method="mpmath")


def test_mpvalue_speaks_value_api():
    a, b = MPValue(2), MPValue(3)
    assert float((a * b + 1 - a / b) ** 2) == pytest.approx((7 - 2 / 3) ** 2, rel=1e-15)
    assert float((1 - a).relu()) == 0.0 and float((-a).abs()) == 2.0
    assert float(MPValue(0).sigmoid()) == 0.5 and float(MPValue(1).exp().log()) == pytest.approx(1.0)
    assert float(mpmath.sqrt(a)) == pytest.approx(math.sqrt(2))  # mpmath functions accept it


def test_accurate_vjp_follows_the_numerical_layout():
    a = np.array([[0.3, -0.2], [0.5, 0.1]])
    b = np.array([1.5, -0.5])
    cot = np.array([1.0, -2.0])
    grad_a, grad_b = accurate_vjp(lambda m, v: np.tanh(m @ v), [a, b], cot)
    inner = 1.0 - np.tanh(a @ b) ** 2
    np.testing.assert_allclose(grad_a, np.outer(cot * inner, b), rtol=1e-11)
    np.testing.assert_allclose(grad_b, (cot * inner) @ a, rtol=1e-11)


def test_mpvalue_follows_ieee_where_mpmath_would_go_complex():
    assert math.isnan(float(MPValue(-1).log())) and math.isnan(float(MPValue(-4).sqrt()))
    assert math.isnan(float(MPValue(-8) ** 0.5))


def test_a_binary_registry_op_is_an_mpmath_method_taking_the_other_operand():
    y, x = MPValue(1.0), MPValue(-2.0)
    assert abs(float(y.atan2(x)) - math.atan2(1.0, -2.0)) < 1e-15
    assert abs(float(y.atan2(-2.0)) - math.atan2(1.0, -2.0)) < 1e-15
