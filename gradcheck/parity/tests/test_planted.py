"""Deliberately wrong derivative rules, written as minigrad custom ops: gradcheck must catch every one.

Each planted op has a correct forward and a wrong backward, and is used inside a small function of
two inputs so the bug is seen through the chain rule. Every bug must fail in slow mode (naming the
wrong entries) and in fast mode, at several points, while the same function with the correct op
passes. torch's default tolerances (atol 1e-5, rtol 1e-3) let the small bugs through; ours do not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck import GradcheckError, gradcheck, gradgradcheck
from gradcheck.checker.tolerance import TORCH
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.layout_ops import FULL_SLICE
from gradcheck.parity.compare import check_graph
from gradcheck.testing.broken_engines import OverwrittenRepeats
from gradcheck.testing.catching import stream_graphs_until_caught
from minigrad import ScalarOp, Value, apply_op
from minigrad import floatmath as fm
from minigrad.scalar_ops import cos, div, sin


class GoodSin(ScalarOp):
    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        return (g * cos(a),)


class SignFlippedExp(ScalarOp):
    name = "exp"
    forward = staticmethod(fm.exp)

    @staticmethod
    def backward(g, out, a):
        return (-g * out,)


class DoubledTanh(ScalarOp):
    name = "tanh"
    forward = staticmethod(fm.tanh)

    @staticmethod
    def backward(g, out, a):
        return (2.0 * g * (1.0 - out * out),)


class SigmoidWithTanhRule(ScalarOp):
    """The derivative of the neighbouring function: tanh's rule 1 - y² on sigmoid's output."""

    name = "sigmoid"
    forward = staticmethod(fm.sigmoid)

    @staticmethod
    def backward(g, out, a):
        return (g * (1.0 - out * out),)


class LogWithLog1pRule(ScalarOp):
    """log's forward with log1p's derivative 1 / (1 + a)."""

    name = "log"
    forward = staticmethod(fm.log)

    @staticmethod
    def backward(g, out, a):
        return (div(g, a + 1.0),)


class ExpOff1e4(ScalarOp):
    name = "exp"
    forward = staticmethod(fm.exp)

    @staticmethod
    def backward(g, out, a):
        return (g * out * (1.0 + 1e-4),)


class SinOff1e6(ScalarOp):
    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        return (g * cos(a) * (1.0 + 1e-6),)


class CosIgnoresCotangent(ScalarOp):
    """Returns d cos(a)/da without multiplying by the incoming gradient g: right only when g == 1."""

    name = "cos"
    forward = staticmethod(fm.cos)

    @staticmethod
    def backward(g, out, a):
        return (-sin(a) if isinstance(a, float) else -a.sin(),)


def through(op):
    """A function of two inputs that routes the op through the chain rule: op(a*b) * a + b."""

    def f(a, b):
        return apply_op(op, a * b) * a + b

    f.__qualname__ = f"through_{op.__name__}"
    return f


PLANTED = [
    SignFlippedExp,
    DoubledTanh,
    SigmoidWithTanhRule,
    LogWithLog1pRule,
    ExpOff1e4,
    SinOff1e6,
    CosIgnoresCotangent,
]
POINTS = [(0.7, 1.3), (-0.4, 0.9), (1.6, -0.8)]


def inputs_for(op, point):
    a, b = point
    if op is LogWithLog1pRule:
        a, b = abs(a), abs(b)  # log needs a*b > 0
    return [Value(a), Value(b)]


@pytest.mark.parametrize("point", POINTS)
def test_the_correct_custom_op_passes(point):
    assert gradcheck(through(GoodSin), inputs_for(GoodSin, point))
    assert gradcheck(through(GoodSin), inputs_for(GoodSin, point), fast_mode=True)


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("op", PLANTED, ids=lambda op: op.__name__)
def test_slow_mode_catches_the_planted_bug_and_names_the_entry(op, point):
    with pytest.raises(GradcheckError) as caught:
        gradcheck(through(op), inputs_for(op, point))
    result = caught.value.result
    assert not result.only_kinks, "a smooth op's bug must not be excused as a kink"
    assert result.mismatches
    first = result.mismatches[0]
    assert first.abs_error > first.allowed
    assert first.input in (0, 1)
    if first.output is not None:  # a wrong Jacobian entry: confirmed by the accurate oracle, no kink
        assert first.method == "richardson"  # custom ops run on floats only, so not mpmath
        assert first.kink is not None and first.kink.smooth


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("op", PLANTED, ids=lambda op: op.__name__)
def test_fast_mode_catches_the_planted_bug_and_the_slow_rerun_names_it(op, point):
    result = gradcheck(through(op), inputs_for(op, point), fast_mode=True, raise_exception=False)
    assert not result
    assert result.fast is not None and not result.fast.passed
    assert result.mode == "fast, then slow" and result.mismatches


def test_the_wrong_entries_are_exactly_those_the_bug_touches():
    # only input 1's gradient goes through the wrong exp; input 0's is right
    f = lambda a, b: a * 3.0 + apply_op(SignFlippedExp, b)
    result = gradcheck(f, [Value(0.5), Value(0.2)], raise_exception=False)
    assert [(m.output, m.input) for m in result.mismatches] == [(0, 1)]
    m = result.mismatches[0]
    assert m.analytical == pytest.approx(-math.exp(0.2)) and m.numerical == pytest.approx(math.exp(0.2))
    text = result.report()
    assert "d output 0 / d input 1" in text and "analytical" in text and "allowed" in text
    assert "Reproduce with" in text and "Value(0.5), Value(0.2)" in text
    assert "gradcheck(lambda x: f(Value(0.5), x), [Value(0.2)]" in text  # the smallest call: input 1 alone


def test_a_bug_seen_only_with_a_non_unit_cotangent_is_caught_by_the_random_cotangent():
    # with one output seeded by 1.0 the Jacobian rows are right; only a random cotangent exposes it
    f = lambda a: apply_op(CosIgnoresCotangent, a)
    result = gradcheck(f, [Value(0.3)], raise_exception=False)
    assert not result
    (m,) = result.mismatches
    assert m.output is None and "random cotangent" in result.report()


@pytest.mark.parametrize("op", [ExpOff1e4, SinOff1e6], ids=lambda op: op.__name__)
def test_torch_default_tolerance_lets_small_bugs_through_ours_does_not(op):
    inputs = inputs_for(op, POINTS[0])
    assert gradcheck(through(op), inputs, atol=TORCH.atol, rtol=TORCH.rtol)
    assert not gradcheck(through(op), inputs, raise_exception=False)


class SinWithDetachedRule(ScalarOp):
    """First derivative right, second wrong: on the create_graph path the rule cuts the graph."""

    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        if isinstance(a, float):
            return (g * math.cos(a),)
        return (g * Value(math.cos(a.data)),)  # a constant: its derivative w.r.t. a is lost


def test_gradgradcheck_catches_a_wrong_second_derivative_that_gradcheck_cannot_see():
    f = through(SinWithDetachedRule)
    inputs = [Value(0.7), Value(1.3)]
    assert gradcheck(f, inputs) and gradcheck(f, inputs, fast_mode=True)
    with pytest.raises(GradcheckError, match="gradgradcheck failed"):
        gradgradcheck(f, inputs)
    assert not gradgradcheck(f, inputs, fast_mode=True, raise_exception=False)
    assert gradgradcheck(through(GoodSin), inputs)


class Counter:
    calls = 0


class NonReentrantSin(ScalarOp):
    """Backward that depends on how often it ran (hidden state): not reentrant."""

    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        Counter.calls += 1
        return (g * cos(a) * (1.0 + 1e-3 * (Counter.calls % 2)),)


class LeakySin(ScalarOp):
    """Backward that adds a constant: a zero cotangent does not give a zero gradient."""

    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        return (g * cos(a) + 1e-3,)


class IntegerGradSin(ScalarOp):
    """Backward that returns an int for a float input: wrong gradient type."""

    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        return (round(g * cos(a)) if isinstance(a, float) else g * cos(a),)


def test_non_reentrant_backward_is_reported():
    result = gradcheck(lambda a: apply_op(NonReentrantSin, a), [Value(0.4)], raise_exception=False)
    assert any("not reentrant" in str(p) for p in result.problems)


def test_gradient_from_a_zero_cotangent_must_be_zero():
    result = gradcheck(lambda a: apply_op(LeakySin, a), [Value(0.4)], raise_exception=False)
    assert any("zero cotangent" in str(p) for p in result.problems)


def test_gradient_type_must_match_the_input():
    result = gradcheck(lambda a: apply_op(IntegerGradSin, a), [Value(0.4)], raise_exception=False)
    assert any("expected a float" in str(p) for p in result.problems)


def test_a_function_that_modifies_its_input_is_reported():
    def mutating(a):
        out = a.sin()
        a.data += 1.0
        return out

    x = Value(0.4)
    result = gradcheck(mutating, [x], raise_exception=False)
    assert any("input 0 was modified" in str(p) for p in result.problems)


@pytest.mark.parametrize("seed", range(5))
def test_a_bug_in_one_of_many_inputs_is_caught_in_fast_mode(seed):
    rng = np.random.default_rng(seed)
    xs = [Value(float(v)) for v in rng.uniform(-1, 1, 40)]

    def f(*values):
        total = values[0] * 0.0
        for i, v in enumerate(values):
            total = total + (apply_op(SinOff1e6, v) if i == 17 else v.sin()) * (i + 1)
        return total

    result = gradcheck(f, xs, fast_mode=True, raise_exception=False, seed=seed)
    assert not result and [(m.input) for m in result.mismatches] == [17]


def test_torch_gradcheck_itself_passes_the_1e4_bug_that_ours_catches():
    torch = pytest.importorskip("torch")

    class TorchExpOff1e4(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            out = a.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out * (1.0 + 1e-4)

    a = torch.tensor([0.7], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: TorchExpOff1e4.apply(t) * 2.0, (a,))
    assert not gradcheck(lambda v: apply_op(ExpOff1e4, v) * 2.0, [Value(0.7)], raise_exception=False)


def exp_off_by(relative_error: float) -> type[ScalarOp]:
    """exp with a derivative rule off by the given relative error."""

    def backward(g, out, a):
        return (g * out * (1.0 + relative_error),)

    return type(
        "ExpOffBy",
        (ScalarOp,),
        {"name": "exp", "forward": staticmethod(fm.exp), "backward": staticmethod(backward)},
    )


@settings(max_examples=30)
@given(
    st.floats(-2.0, 2.0),
    st.floats(-2.0, 2.0),
    st.floats(1e-6, 1.0),
    st.sampled_from([-1.0, 1.0]),
)
def test_any_relative_error_from_1e6_up_is_caught_in_both_modes(a, b, size, sign):
    op = exp_off_by(sign * size)
    f = lambda x, y: apply_op(op, x) * 2.0 + y
    inputs = [Value(a), Value(b)]
    assert not gradcheck(f, inputs, raise_exception=False)
    assert not gradcheck(f, inputs, fast_mode=True, raise_exception=False)


# --- a planted bug in a tensor op of the registry ------------------------------------------------


def _index_graph(indices: tuple[int, ...]) -> Graph:
    """x[indices] for x of shape (2, 3), the indices on the last dim, at two input points."""
    points = [np.array([[[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], [[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]]])]
    node = OpNode("index", (0,), (("index", (FULL_SLICE, ("ints", indices))),))
    return Graph([Input("x0", points[0][0], (2, 3))], [node], [1], points, meta={"kind": "tensor"})


def test_indexing_that_overwrites_a_repeated_index_is_caught_where_an_index_repeats():
    repeated = _index_graph((0, 2, -3))  # 0 and -3 are the same element
    caught = check_graph(repeated, OverwrittenRepeats(), seed=1)
    assert not caught.passed
    assert any("x0" in str(problem) for problem in caught.problems), caught.report()
    assert check_graph(repeated, load_engine("minigrad-tensor"), seed=1).passed
    assert check_graph(_index_graph((2, 0)), OverwrittenRepeats(), seed=1).passed  # no repeat, no bug


def test_random_tensor_graphs_catch_indexing_that_overwrites_repeated_indices():
    assert stream_graphs_until_caught(OverwrittenRepeats(), 100, tensor=True) is not None
