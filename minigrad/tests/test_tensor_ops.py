"""Elementwise Tensor ops against torch: values, gradients under random cotangents, grad dtypes,
over every kind of broadcasting, 0-d and empty tensors, in float64 and float32; second
derivatives for each op; torch's conventions at kinks (relu, abs, clamp, maximum/minimum ties)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("torch")
import torch

import minigrad
from minigrad.tests.tensor_torch_check import check, check_second

DTYPES = [np.float64, np.float32]

# (shape of a, shape of b): scalar with matrix, (3,1) with (1,4), leading dims added, empty dims.
BROADCAST_SHAPES = [
    ((), ()),
    ((), (3, 4)),
    ((3, 4), ()),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((4,), (3, 4)),
    ((2, 3, 4), (3, 1)),
    ((1, 3, 1), (2, 1, 4)),
    ((0, 3), (3,)),
    ((2, 0), (1, 1)),
]
UNARY_SHAPES = [(), (5,), (3, 4), (2, 3, 4), (2, 0, 3)]


def sample(shape: tuple[int, ...], seed: int, domain: str = "any") -> np.ndarray:
    """Random values in an op's domain, kept away from zero (kinks and poles) by 0.2."""
    rng = np.random.default_rng(seed)
    magnitude = rng.uniform(0.2, 2.0, shape)
    if domain == "positive":
        return magnitude
    return magnitude * rng.choice([-1.0, 1.0], shape)


BINARY = {
    "add": (lambda a, b: a + b, "any", "any"),
    "sub": (lambda a, b: a - b, "any", "any"),
    "mul": (lambda a, b: a * b, "any", "any"),
    "div": (lambda a, b: a / b, "any", "any"),
    "pow": (lambda a, b: a**b, "positive", "any"),
    "maximum": (lambda a, b: a.maximum(b), "any", "any"),
    "minimum": (lambda a, b: a.minimum(b), "any", "any"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_op_matches_torch(name, shapes, dtype):
    fn, domain_a, domain_b = BINARY[name]
    a = sample(shapes[0], 1, domain_a)
    b = sample(shapes[1], 2, domain_b)
    check(fn, [a, b], dtype)


@pytest.mark.parametrize("name", BINARY)
def test_binary_op_second_derivatives_match_torch(name):
    fn, domain_a, domain_b = BINARY[name]
    check_second(fn, [sample((3, 1), 3, domain_a), sample((1, 4), 4, domain_b)])


@pytest.mark.parametrize("name", ["add", "mul"])
def test_gradient_reaches_only_the_operands_that_require_it(name):
    fn = BINARY[name][0]
    mine, _ = check(fn, [sample((3, 4), 1), sample((4,), 2)], requires_grad=[False, True])
    assert mine[0].grad is None


SCALAR_FORMS = {
    "t + c": lambda t: t + 2.5,
    "c + t": lambda t: 2.5 + t,
    "t - c": lambda t: t - 1.5,
    "c - t": lambda t: 1.5 - t,
    "t * c": lambda t: t * -1.5,
    "c * t": lambda t: 3 * t,
    "t / c": lambda t: t / 4.0,
    "c / t": lambda t: 3.0 / t,
    "t ** 3": lambda t: t**3,
    "t ** 0": lambda t: t**0,
    "t ** -1.5": lambda t: t.abs() ** -1.5,
    "c ** t": lambda t: 2.0**t,
    "-t": lambda t: -t,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (3, 4)], ids=str)
@pytest.mark.parametrize("name", SCALAR_FORMS)
def test_python_number_operands_match_torch_and_keep_the_dtype(name, shape, dtype):
    check(SCALAR_FORMS[name], [sample(shape, 5)], dtype)


@pytest.mark.parametrize("name", SCALAR_FORMS)
def test_python_number_operand_second_derivatives(name):
    check_second(SCALAR_FORMS[name], [sample((2, 3), 6)])


def test_numpy_array_operands_are_constants_on_either_side():
    a = np.arange(4.0)
    at = torch.from_numpy(a)
    check((lambda t: a * t + t / (a + 1.0) - a, lambda t: at * t + t / (at + 1.0) - at), [sample((3, 4), 7)])


UNARY = {
    "relu": (lambda t: t.relu(), "any"),
    "tanh": (lambda t: t.tanh(), "any"),
    "sigmoid": (lambda t: t.sigmoid(), "any"),
    "exp": (lambda t: t.exp(), "any"),
    "log": (lambda t: t.log(), "positive"),
    "sin": (lambda t: t.sin(), "any"),
    "cos": (lambda t: t.cos(), "any"),
    "sqrt": (lambda t: t.sqrt(), "positive"),
    "abs": (lambda t: t.abs(), "any"),
    "clamp": (lambda t: t.clamp(-0.7, 1.1), "any"),
    "clamp_min": (lambda t: t.clamp(min=-0.3), "any"),
    "clamp_max": (lambda t: t.clamp(max=0.9), "any"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_op_matches_torch(name, shape, dtype):
    fn, domain = UNARY[name]
    check(fn, [sample(shape, 8, domain)], dtype)


@pytest.mark.parametrize("name", UNARY)
def test_unary_op_second_derivatives_match_torch(name):
    fn, domain = UNARY[name]
    check_second(fn, [sample((3, 4), 9, domain)])


def test_third_derivative_of_tanh_matches_torch():
    x = minigrad.tensor([0.3, -1.2], dtype=np.float64, requires_grad=True)
    xt = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    (g1,) = minigrad.grad(x.tanh().sum(), x, create_graph=True)
    (g2,) = minigrad.grad(g1.sum(), x, create_graph=True)
    (g3,) = minigrad.grad(g2.sum(), x)
    (r1,) = torch.autograd.grad(xt.tanh().sum(), xt, create_graph=True)
    (r2,) = torch.autograd.grad(r1.sum(), xt, create_graph=True)
    (r3,) = torch.autograd.grad(r2.sum(), xt)
    np.testing.assert_allclose(g3.data, r3.numpy(), rtol=1e-9)


@pytest.mark.parametrize("x", [1e-8, -3e-6, 2e-7, 0.2, 0.7, 2.5])
def test_second_derivative_of_tanh_keeps_its_digits_near_zero(x):
    # tanh'' = -2 tanh sech^2: near 0 a small number, which (1 - t)(1 + t) differentiated loses
    # (two terms of size 1 cancel: up to 3e-7 relative error, seen by the parity campaign)
    weight = 0.735263426892147  # a cotangent that is not a power of two, as the campaign draws
    exact = -2.0 * weight * math.tanh(x) / math.cosh(x) ** 2
    value = minigrad.Value(x)
    (slope,) = minigrad.grad(value.tanh() * weight, [value], create_graph=True)
    (curvature,) = minigrad.grad(slope, [value])
    tensor = minigrad.tensor([x], dtype=np.float64, requires_grad=True)
    (slopes,) = minigrad.grad((tensor.tanh() * weight).sum(), tensor, create_graph=True)
    (curvatures,) = minigrad.grad(slopes.sum(), tensor)
    for got in (float(curvature), float(curvatures.data[0])):
        assert got == pytest.approx(exact, rel=1e-14, abs=0.0)


# --- torch's conventions at kinks and ties ---------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.relu(),
        lambda t: t.abs(),
        lambda t: t.clamp(-1.0, 1.0),
        lambda t: t.clamp(min=0.0),
        lambda t: t.maximum(t * 0.0 + 1.0),
        lambda t: t.minimum(t * 0.0 + 1.0),
        lambda t: t**2.0,
        lambda t: t**0.0,
        lambda t: t.sqrt(),
        lambda t: t.log(),
    ],
)
def test_gradients_at_kinks_and_domain_edges_follow_torch(fn):
    points = np.array([-1.0, 0.0, 1.0, 2.0, -0.0])
    check(fn, [points])


def test_maximum_and_minimum_split_the_gradient_in_half_on_ties():
    a = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = minigrad.tensor([1.0, 5.0, 3.0], requires_grad=True)
    (a.maximum(b) * minigrad.tensor([2.0, 4.0, 6.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 0.0, 3.0]
    assert b.grad.tolist() == [1.0, 4.0, 3.0]
    check(lambda x, y: x.minimum(y), [np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 3.0])])


def test_a_float32_tensor_ties_a_0d_float64_one_where_they_are_equal_in_float32_as_torch():
    # -0.001 is not a float32: in float64 the two sides differ, in float32 (the result's dtype) they tie
    x = minigrad.Tensor(np.zeros(3, dtype=np.float32), requires_grad=True)
    shift = minigrad.Tensor(np.array(-0.001))
    (x + shift).minimum(shift).sum().backward()
    xt = torch.zeros(3, dtype=torch.float32, requires_grad=True)
    shift_t = torch.tensor(-0.001, dtype=torch.float64)
    (xt + shift_t).minimum(shift_t).sum().backward()
    assert x.grad.tolist() == xt.grad.tolist() == [0.5, 0.5, 0.5]


def test_tensor_exponent_rules_match_torch_at_zero_base_and_zero_exponent():
    base = np.array([0.0, 0.0, 2.0, -2.0, 0.0])
    exponent = np.array([0.0, 2.0, 0.0, 3.0, -1.0])
    check(lambda a, b: a**b, [base, exponent])


def test_relu_gradient_at_zero_is_zero():
    x = minigrad.tensor([0.0, -0.0, 1e-30], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


# --- dtype promotion ---------------------------------------------------------------------------

PROMOTION_CASES = [
    (np.float32, (3,), np.float64, ()),
    (np.float32, (3,), np.float64, (3,)),
    (np.float64, (), np.float32, (3,)),
    (np.int64, (3,), np.float32, ()),
    (np.int64, (3,), np.float64, (3,)),
    (np.int64, (3,), np.int64, (3,)),
    (np.int32, (3,), np.int64, ()),
    (np.bool_, (3,), np.float32, (3,)),
]


@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum"])
@pytest.mark.parametrize("case", PROMOTION_CASES, ids=str)
def test_result_dtype_follows_torch_promotion(case, op):
    da, sa, db, sb = case
    a, b = np.ones(sa, dtype=da), np.full(sb, 2, dtype=db)
    fn = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "div": lambda x, y: x / y}.get(
        op, lambda x, y: x.maximum(y)
    )
    ours = fn(minigrad.tensor(a), minigrad.tensor(b))
    theirs = fn(torch.from_numpy(a), torch.from_numpy(b))
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("number", [2, 2.5, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_python_numbers_do_not_change_a_tensors_dtype_unless_torch_does(dtype, number):
    t = np.ones(3, dtype=dtype)
    ours = minigrad.tensor(t) * number
    theirs = torch.from_numpy(t) * number
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")


def test_mixed_float_dtypes_give_each_input_a_gradient_of_its_own_dtype():
    a = minigrad.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    b = minigrad.tensor([3.0, 4.0], dtype=np.float64, requires_grad=True)
    out = a * b
    assert out.dtype == np.float64
    out.backward(minigrad.ones(2, dtype=np.float64))
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 2.0]


def test_float32_stays_float32_through_a_whole_backward_pass():
    x = minigrad.randn(4, 3, generator=0, requires_grad=True)
    w = minigrad.randn(3, 2, generator=1, requires_grad=True)
    y = ((x @ w).relu() * 0.5 + 1).log().sigmoid().tanh() / 3 - x.mean()
    y.sum().backward()
    assert y.dtype == np.float32 and x.grad.dtype == np.float32 and w.grad.dtype == np.float32


def test_unary_float_functions_of_integer_tensors_give_float32_like_torch():
    ints = np.array([1, 2, 3])
    ours = minigrad.tensor(ints).exp()
    theirs = torch.from_numpy(ints).exp()
    assert ours.dtype == np.float32 and theirs.dtype == torch.float32
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-6)


# --- errors ------------------------------------------------------------------------------------


def test_broadcast_mismatch_names_the_op_and_both_shapes():
    with pytest.raises(
        RuntimeError, match=r"add: The size of tensor a \(3\) must match the size of tensor b \(4\)"
    ):
        minigrad.zeros(2, 3) + minigrad.zeros(4)
    with pytest.raises(RuntimeError, match=r"\(2, 3\) and \(4,\)"):
        minigrad.zeros(2, 3) * minigrad.zeros(4)


def test_clamp_needs_a_bound():
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        minigrad.zeros(2).clamp()


def test_unsupported_operand_types_raise_type_error():
    with pytest.raises(TypeError):
        minigrad.zeros(2) + "a"


@pytest.mark.parametrize("op", ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"])
def test_comparisons_give_boolean_tensors_outside_the_graph_like_torch(op):
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    b = np.array([2.0, 2.0, 2.0])
    x = minigrad.tensor(a, requires_grad=True)
    ours = getattr(x, op)(minigrad.tensor(b))
    theirs = getattr(torch.from_numpy(a), op)(torch.from_numpy(b))
    assert ours.dtype == np.bool_ and not ours.requires_grad
    np.testing.assert_array_equal(ours.data, theirs.numpy())
    np.testing.assert_array_equal(getattr(x, op)(2.0).data, getattr(torch.from_numpy(a), op)(2.0).numpy())
    np.testing.assert_array_equal((~ours).data, (~theirs).numpy())


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=3),
    name=st.sampled_from(["add", "sub", "mul", "div", "maximum"]),
    seed=st.integers(0, 2**16),
)
def test_any_broadcastable_pair_of_shapes_matches_torch(shapes, name, seed):
    a_shape, b_shape = shapes.input_shapes
    fn = BINARY[name][0]
    check(fn, [sample(a_shape, seed), sample(b_shape, seed + 1)], np.float64, seed=seed)


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_relu_of_a_float_array_is_numpy_maximum_with_zero_bit_for_bit(dtype, data):
    """relu's array forward (taken against a row of zeros, for numpy's faster loop) gives exactly
    np.maximum(x, 0): signed zeros, nan and infinities included, in any layout."""
    from minigrad.elementary import relu_array

    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    x = data.draw(hnp.arrays(dtype, shape, elements=st.floats(width=np.dtype(dtype).itemsize * 8)))
    if x.ndim >= 2 and data.draw(st.booleans()):
        x = x.swapaxes(0, -1)  # a non-contiguous layout
    expected = np.maximum(x, 0)
    overwritten = x.copy()
    for got in (relu_array(x), relu_array(overwritten, out=overwritten)):  # new, and in place
        assert got.dtype == expected.dtype and got.shape == expected.shape
        bits = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in (got, expected)]
        np.testing.assert_array_equal(*bits)


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_choosing_gradient_values_or_zero_is_np_where_with_nan_and_infinities(dtype, data):
    """`where(keep, g, 0.0)` on arrays (relu's gradient, clamp's, ...) multiplies by the mask
    unless that would turn a dropped inf or nan into nan: it must equal np.where everywhere, a kept
    nan staying nan and a dropped one giving 0, and warn about nothing (relu's rule runs outside
    np.errstate in a grad() pass)."""
    import warnings

    from minigrad.elementary import where

    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    g = data.draw(hnp.arrays(dtype, shape, elements=st.floats(width=np.dtype(dtype).itemsize * 8)))
    keep = data.draw(hnp.arrays(np.bool_, shape))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = where(keep, g, 0.0)
    expected = np.where(keep, g, 0.0)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(np.abs(got), np.abs(expected))  # (the product may give -0.0)
