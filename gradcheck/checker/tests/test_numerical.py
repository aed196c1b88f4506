"""Central differences: the layout contract of numerical_jacobian / _vjp / _jvp and their accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
from gradcheck import numerical_jacobian, numerical_jvp, numerical_vjp
from minigrad import Value

finite = st.floats(-3, 3, allow_nan=False)


def test_jacobian_of_plain_float_function_matches_calculus():
    # f(x, y) = (x*y, sin x): J = [[y, x], [cos x, 0]]
    jac = numerical_jacobian(lambda x, y: (x * y, math.sin(x)), [0.7, -1.3])
    assert len(jac) == 2 and len(jac[0]) == 2
    assert jac[0][0].shape == () and jac[0][0] == pytest.approx(-1.3, abs=1e-9)
    assert jac[0][1] == pytest.approx(0.7, abs=1e-9)
    assert jac[1][0] == pytest.approx(math.cos(0.7), abs=1e-9)
    assert jac[1][1] == 0.0


def test_jacobian_blocks_have_output_shape_then_input_shape():
    a = np.arange(6.0).reshape(2, 3)
    x = np.array([0.5, -1.0, 2.0])
    jac = numerical_jacobian(lambda m, v: m @ v, [a, x])
    assert jac[0][0].shape == (2, 2, 3)  # d(a@x)/da
    assert jac[0][1].shape == (2, 3)  # d(a@x)/dx = a
    np.testing.assert_allclose(jac[0][1], a, atol=1e-8)
    expected = np.zeros((2, 2, 3))
    for i in range(2):
        expected[i, i, :] = x
    np.testing.assert_allclose(jac[0][0], expected, atol=1e-8)


def test_value_inputs_and_outputs_are_differentiated_without_recording_a_graph():
    seen = []

    def f(x, y):
        seen.append(minigrad.is_grad_enabled())
        return (x * y).exp()

    x, y = Value(0.3), Value(-0.4)
    jac = numerical_jacobian(f, [x, y])
    assert jac[0][0] == pytest.approx(-0.4 * math.exp(-0.12), rel=1e-8)
    assert seen and not any(seen)
    assert x.data == 0.3 and y.data == -0.4 and x.grad == 0.0


def test_inputs_are_not_modified_and_results_are_float64():
    x = np.array([1.0, 2.0], dtype=np.float32)
    before = x.copy()
    (grad,) = numerical_vjp(lambda v: (v * v).sum(), [x], 1.0)
    np.testing.assert_array_equal(x, before)
    assert grad.dtype == np.float64 and grad.shape == (2,)
    np.testing.assert_allclose(grad, [2.0, 4.0], atol=1e-8)


@given(finite, finite, finite)
def test_vjp_and_jvp_are_the_jacobian_contracted(x, y, c):
    f = lambda a, b: (a * b + math.sin(a), a - b * b)
    jac = numerical_jacobian(f, [x, y])
    matrix = np.array([[float(jac[k][j]) for j in range(2)] for k in range(2)])
    vjp = numerical_vjp(f, [x, y], [c, 1.0])
    np.testing.assert_allclose(np.array([float(g) for g in vjp]), np.array([c, 1.0]) @ matrix, atol=1e-8)
    jvp = numerical_jvp(f, [x, y], [1.0, c])
    np.testing.assert_allclose(np.array([float(g) for g in jvp]), matrix @ np.array([1.0, c]), atol=1e-6)


@given(st.lists(finite, min_size=1, max_size=5))
def test_linear_map_jacobian_is_its_matrix(values):
    x = np.array(values)
    a = np.random.default_rng(len(values)).standard_normal((3, x.size))
    (block,) = numerical_jacobian(lambda v: a @ v, [x])[0]
    np.testing.assert_allclose(block, a, atol=1e-8 * (1 + np.abs(a).max()))


def test_step_scales_with_large_inputs():
    # at x = 1e8 an absolute step of 1e-6 is below a float's spacing (1.5e-8); a relative one is not
    (d,) = numerical_vjp(lambda x: x * x, [1e8], 1.0)
    assert float(d) == pytest.approx(2e8, rel=1e-8)


def test_bad_inputs_and_outputs_get_clear_errors():
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        numerical_jacobian(lambda x: x, 1.0)
    with pytest.raises(TypeError, match="input 0 is a str"):
        numerical_jacobian(lambda x: x, ["a"])
    with pytest.raises(TypeError, match="output 0 is a dict"):
        numerical_jacobian(lambda x: {"x": x}, [1.0])
    with pytest.raises(ValueError, match="output shapes changed"):
        numerical_jacobian(lambda x: np.zeros(1 if x > 0.5 else 2), [0.5])
    with pytest.raises(ValueError, match="cotangent for output 0 has shape"):
        numerical_vjp(lambda x: np.array([x, x]), [1.0], np.ones(3))


Tensor = getattr(minigrad, "Tensor", None)


@pytest.mark.skipif(Tensor is None, reason="minigrad.Tensor not available")
def test_tensor_inputs_are_differentiated_in_float64_and_left_alone():
    x = Tensor(np.array([[0.5, -1.0], [2.0, 0.25]], dtype=np.float32), requires_grad=True)
    before = x.data.copy()
    (grad,) = numerical_vjp(lambda t: (t * t).sum(), [x], 1.0)
    assert grad.dtype == np.float64 and grad.shape == (2, 2)
    np.testing.assert_allclose(grad, 2.0 * before.astype(np.float64), atol=1e-8)
    np.testing.assert_array_equal(x.data, before)
    assert x.grad is None
    ((block,),) = numerical_jacobian(lambda t: t.exp(), [x])
    assert block.shape == (2, 2, 2, 2)
