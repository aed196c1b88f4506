"""gradcheck / gradgradcheck on correct minigrad code: every op passes at tight tolerances, in both modes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minigrad
from gradcheck import GradcheckError, GradcheckResult, gradcheck, gradgradcheck, policy_for
from gradcheck.checker.tolerance import TORCH
from minigrad import ScalarOp, Value, apply_op

# op name -> (function of two Values, domain of both inputs, points to avoid as (kink) lines)
OPS = {
    "add": (lambda a, b: a + b, (-3, 3)),
    "sub": (lambda a, b: a - b, (-3, 3)),
    "mul": (lambda a, b: a * b, (-3, 3)),
    "div": (lambda a, b: a / b, (0.3, 3)),
    "pow": (lambda a, b: a**b, (0.3, 3)),
    "add_const": (lambda a, b: a + 2.5 + (1.5 + b), (-3, 3)),
    "sub_const": (lambda a, b: (a - 2.5) * (1.5 - b), (-3, 3)),
    "mul_const": (lambda a, b: a * 2.5 + 0.5 * b, (-3, 3)),
    "div_const": (lambda a, b: a / 2.5 + 1.5 / b, (0.3, 3)),
    "pow_const": (lambda a, b: a**2.5 + 1.7**b + a**3 * b**-2, (0.3, 3)),
    "neg": (lambda a, b: -a * b, (-3, 3)),
    "relu": (lambda a, b: a.relu() * b, (-3, 3)),
    "tanh": (lambda a, b: (a * b).tanh(), (-3, 3)),
    "sigmoid": (lambda a, b: (a - b).sigmoid(), (-3, 3)),
    "exp": (lambda a, b: (a * b).exp(), (-2, 2)),
    "log": (lambda a, b: (a * b).log(), (0.1, 3)),
    "sin": (lambda a, b: (a * b).sin(), (-3, 3)),
    "cos": (lambda a, b: (a + b).cos(), (-3, 3)),
    "sqrt": (lambda a, b: (a * b).sqrt(), (0.1, 3)),
    "abs": (lambda a, b: (a - b).abs() * a, (-3, 3)),
}


def point(name, data):
    lo, hi = OPS[name][1]
    a = data.draw(st.floats(lo, hi))
    b = data.draw(st.floats(lo, hi))
    assume(abs(a) > 1e-2 and abs(b) > 1e-2 and abs(a - b) > 1e-2)  # away from relu/abs kinks
    return [Value(a), Value(b)]


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=15)
@given(data=st.data())
def test_every_correct_op_passes_slow_fast_and_second_order(name, data):
    f = OPS[name][0]
    inputs = point(name, data)
    assert gradcheck(f, inputs)
    assert gradcheck(f, inputs, fast_mode=True)
    assert gradgradcheck(f, inputs)


def test_the_default_tolerance_is_the_policy_for_the_ops_in_the_graph_and_far_tighter_than_torch():
    result = gradcheck(lambda a, b: (a * b).exp() + a.sin(), [Value(0.2), Value(0.4)])
    assert result.tolerance == policy_for(["*", "exp", "sin", "+"])
    assert result.tolerance.rtol <= TORCH.rtol / 1e4 and result.tolerance.atol <= TORCH.atol / 1e4
    explicit = gradcheck(lambda a: a.exp(), [Value(0.2)], atol=1e-3, rtol=1e-2)
    assert (explicit.tolerance.atol, explicit.tolerance.rtol) == (1e-3, 1e-2)


def test_several_outputs_are_each_checked_against_every_input():
    f = lambda a, b, c: (a * b, (b + c).tanh(), c.exp() * a)
    inputs = [Value(0.3), Value(-0.7), Value(1.1)]
    assert gradcheck(f, inputs) and gradcheck(f, inputs, fast_mode=True) and gradgradcheck(f, inputs)


def test_floats_are_wrapped_as_values():
    assert gradcheck(lambda a, b: a * b.exp(), [0.5, -1.0])


def test_unused_inputs_get_zero_gradients():
    assert gradcheck(lambda a, b: a.exp(), [Value(0.5), Value(2.0)])


def test_a_deep_graph_passes():
    def chain(x):
        for _ in range(200):
            x = (x * 0.9).tanh() + 0.1
        return x

    assert gradcheck(chain, [Value(0.4)]) and gradcheck(chain, [Value(0.4)], fast_mode=True)


def test_fast_mode_costs_a_constant_number_of_evaluations():
    f = lambda *xs: sum(((x * (i + 1)).sin() for i, x in enumerate(xs)), Value(0.0))
    inputs = [Value(0.1 * i) for i in range(30)]
    slow = gradcheck(f, inputs)
    fast = gradcheck(f, inputs, fast_mode=True)
    assert slow.evaluations >= 2 * 30 and fast.evaluations < 30
    assert slow.mode == "slow" and fast.mode == "fast"


class ReluSlopeAtZero(ScalarOp):
    """relu whose derivative at 0 is `slope` (torch's is 0; anything in [0, 1] is a valid one)."""

    name = "relu"
    slope = 1.0
    forward = staticmethod(lambda a: max(a, 0.0))

    @classmethod
    def backward(cls, g, out, a):
        return (g * (1.0 if a > 0 else cls.slope if a == 0 else 0.0),)


class ReluSlopeTwoAtZero(ReluSlopeAtZero):
    slope = 2.0


def relu_with_slope_two_at_zero(a, b):
    return apply_op(ReluSlopeTwoAtZero, a * b)


def test_result_object_instead_of_exception():
    result = gradcheck(relu_with_slope_two_at_zero, [Value(0.0), Value(1.5)], raise_exception=False)
    assert isinstance(result, GradcheckResult) and not result
    with pytest.raises(GradcheckError) as error:
        gradcheck(relu_with_slope_two_at_zero, [Value(0.0), Value(1.5)])
    assert error.value.result.mismatches[0].analytical == 3.0


@pytest.mark.parametrize("slope", [0.0, 0.25, 1.0], ids=["torch's", "between", "right-sided"])
def test_at_a_kink_a_slope_between_the_one_sided_derivatives_passes_with_a_note(slope):
    op = type("Relu", (ReluSlopeAtZero,), {"slope": slope})
    result = gradcheck(lambda a, b: apply_op(op, a) * b, [Value(0.0), Value(2.0)], raise_exception=False)
    assert result, result.report()
    assert "input 0 is at a kink (left slope 0, right slope 2)" in result.report()
    assert "a valid derivative there" in result.report()


def test_at_a_kink_a_slope_outside_the_one_sided_derivatives_fails_and_says_why():
    result = gradcheck(relu_with_slope_two_at_zero, [Value(0.0), Value(1.5)], raise_exception=False)
    assert not result and result.only_kinks
    (mismatch,) = result.mismatches
    assert (mismatch.output, mismatch.input, mismatch.analytical) == (0, 0, 3.0)
    assert mismatch.one_sided == (0.0, 1.5)
    text = result.report()
    assert "a kink at this point: left derivative 0, right derivative 1.5" in text
    assert "no derivative of either side" in text


def test_beside_a_kink_the_slope_of_the_wrong_side_fails():
    op = type("Relu", (ReluSlopeAtZero,), {"backward": classmethod(lambda cls, g, out, a: (g * 1.0,))})
    result = gradcheck(lambda a: apply_op(op, a), [Value(-1e-5)], raise_exception=False)
    assert not result, "relu'(-1e-5) = 1 is wrong: the point is on the flat side of the kink"


def test_with_check_kinks_false_a_kink_is_compared_with_the_numerical_derivative():
    result = gradcheck(lambda a: a.relu(), [Value(0.0)], raise_exception=False, check_kinks=False)
    assert not result and result.mismatches[0].one_sided is None


def test_reproducer_is_runnable_and_fails_the_same_way():
    result = gradcheck(relu_with_slope_two_at_zero, [Value(0.0), Value(1.5)], raise_exception=False)
    assert "Value(0.0), Value(1.5)" in result.reproduce
    source = "\n".join(line[4:] for line in result.reproduce.splitlines())
    with pytest.raises(GradcheckError):
        exec(source, {})


def test_bad_inputs_and_outputs_are_named():
    with pytest.raises(TypeError, match="input 0 is a str"):
        gradcheck(lambda a: a, ["x"])
    with pytest.raises(TypeError, match="output 0 is a float"):
        gradcheck(lambda a: 1.0, [Value(1.0)])
    with pytest.raises(TypeError, match="must be a list or tuple"):
        gradcheck(lambda a: a, Value(1.0))
    x = Value(0.5)
    with pytest.raises(ValueError, match="inputs 0 and 1 are the same object"):
        gradcheck(lambda a, b: a * b, [x, x])
    with pytest.raises(ValueError, match="no inputs"):
        gradcheck(lambda: Value(1.0), [])


Tensor = getattr(minigrad, "Tensor", None)
needs_tensor = pytest.mark.skipif(Tensor is None, reason="minigrad.Tensor not available")


@needs_tensor
def test_tensor_functions_pass_in_both_modes_and_second_order():
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = Tensor(rng.standard_normal((4, 2)), requires_grad=True)
    f = lambda x, w: ((x @ w).tanh() * 2.0).exp()
    assert gradcheck(f, [x, w]) and gradcheck(f, [x, w], fast_mode=True) and gradgradcheck(f, [x, w])
    assert x.grad is None and w.grad is None


@needs_tensor
def test_float32_tensors_need_an_explicit_tolerance():
    x = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    with pytest.raises(ValueError, match="float32"):
        gradcheck(lambda t: (t * t).sum(), [x])
    assert gradcheck(lambda t: (t * t).sum(), [x], atol=1e-4, rtol=1e-3)


def test_at_a_pole_the_report_blames_the_point_not_the_backward_laws():
    result = gradcheck(lambda a: a.log(), [Value(0.0)], raise_exception=False)
    assert not result and result.problems == []  # 0 * inf = nan is IEEE, not a zero-cotangent bug
    assert any("not finite" in note for note in result.notes)


@needs_tensor
def test_a_tensor_that_does_not_require_grad_is_refused():
    with pytest.raises(ValueError, match="requires_grad=False"):
        gradcheck(lambda t: t.exp(), [Tensor(np.ones(2))])
