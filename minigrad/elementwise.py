"""The elementwise ops, one rule each, shared by `Value` and `Tensor`: the forward beside its derivative.

A rule's `forward` runs on floats (for Value) and on arrays (for Tensor); its `backward(g, out, *inputs)`
returns one gradient per input, written as plain math with the helpers of `elementary`, which
dispatch on type. So one rule serves four paths: floats and arrays in a plain `backward()`, Values
and Tensors under `grad(..., create_graph=True)`, where the rule itself builds a differentiable
graph. The Tensor engine sums each gradient back to its input's shape (the gradient of
broadcasting); Value passes constants as plain floats and keeps only its inputs' gradients.

A rule's `name` is torch's (`torch.<name>`, and Tensor's `grad_fn`); `symbol` is micrograd's
spelling shown as `Value._op`. To add an elementwise op: one rule here (and in `RULES`), plus the
method on Value and Tensor that applies it.
"""

from __future__ import annotations

import math
import operator
from typing import Any, ClassVar

import numpy as np

from minigrad import elementary as e
from minigrad.elementary import data, div, where
from minigrad.op import ScalarOp


class Elementwise(ScalarOp):
    """Base of the shared rules. `domain` says where each input is differentiable and finite
    ("real" or "positive"); the engine's tests draw their points from it."""

    symbol: ClassVar[str]
    arity: ClassVar[int] = 1
    domain: ClassVar[tuple[str, ...]] = ("real",)
    arithmetic: ClassVar[bool] = True
    elementwise: ClassVar[bool] = True
    fresh_grads: ClassVar[bool] = False  # TensorOp's flags: a gradient may be g itself (x + y)
    reuses_grad: ClassVar[bool] = False


BOTH = (True, True)


class Binary(Elementwise):
    """A rule of two inputs: `gradients(g, out, a, b)` gives the gradient for each.

    `backward` is `gradients` with `needs` (None for an input that needs none), the signature the
    Tensor engine calls; a scalar pass calls `gradients` itself, one call per node, unless a
    subclass rewrote `backward` (then `direct` is False and `backward` is what runs).
    """

    arity = 2
    domain = ("real", "real")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        shared = Binary.backward.__func__  # type: ignore[attr-defined]  # a bound classmethod has one
        cls.direct = getattr(cls.backward, "__func__", None) is shared
        if cls.direct:
            cls.scalar_backward = cls.gradients

    @staticmethod
    def gradients(g: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    @classmethod
    def backward(cls, g: Any, out: Any, a: Any, b: Any, needs: tuple[bool, bool] = BOTH) -> tuple[Any, Any]:  # type: ignore[override]
        grad_a, grad_b = cls.gradients(g, out, a, b)
        return (grad_a if needs[0] else None, grad_b if needs[1] else None)


# --- binary ------------------------------------------------------------------------------------


class Add(Binary):
    name, symbol = "add", "+"
    forward = staticmethod(operator.add)

    @staticmethod
    def gradients(g, out, a, b):
        return g, g


class Sub(Binary):
    name, symbol = "sub", "-"
    forward = staticmethod(operator.sub)

    @staticmethod
    def gradients(g, out, a, b):
        return g, -g


class Mul(Binary):
    name, symbol = "mul", "*"
    forward = staticmethod(operator.mul)

    @staticmethod
    def gradients(g, out, a, b):
        return g * b, g * a


class Div(Binary):
    name, symbol = "div", "/"
    forward = staticmethod(div)

    @staticmethod
    def gradients(g, out, a, b):
        return div(g, b), -g * div(div(a, b), b)


class Pow(Binary):
    """a ** b; torch's rules but for one mask: d/da is 0 where b == 0 only where b * a ** (b - 1)
    is not a number (a == 0, inf or nan: torch masks every b == 0), so that its derivative along b
    is a ** -1 and the Hessian is symmetric: d²/da db = 1/a both ways at b = ±0, where torch's is 0
    one way. d/db is 0 where a == 0 and b >= 0, as torch's. Where a ** (b - 1) alone overflows,
    d/da is b / a * a ** b, the exact slope (torch's is inf)."""

    name, symbol = "pow", "**"
    forward = staticmethod(e.power)
    domain = ("positive", "real")

    @staticmethod
    def slope_a(out, a, b):
        """b * a ** (b - 1). Where a ** (b - 1) overflows and the slope does not (a = b = 5e-324:
        the slope is 1), b / a * a ** b, with a divisor of 1 elsewhere, so that no inf of b / a
        reaches a second derivative."""
        slope = b * e.power(a, b - 1.0)
        overflowed = e.nonfinite(slope) & e.finite(a) & e.finite(b) & (data(a) != 0)
        if np.any(overflowed):
            rescaled = div(b, where(overflowed, a, 1.0)) * out
            slope = where(overflowed & e.finite(rescaled), rescaled, slope)
        return slope

    @staticmethod
    def gradients(g, out, a, b):
        slope_a = Pow.slope_a(out, a, b)
        masked_a = (data(b) == 0) & (e.nonfinite(a) | e.nonfinite(slope_a))
        if np.any(masked_a) and not getattr(b, "requires_grad", False):
            # a constant exponent (x ** np.asarray(0)): x ** 0 is 1, whose second derivatives are 0,
            # so the dropped slope is taken at a base of 1, where its rule has no 0 × inf (at a == 0);
            # along an exponent that varies, d/db of the slope at a == 0 is no number (nan, as torch's)
            slope_a = Pow.slope_a(out, where(masked_a, 1.0, a), b)
        grad_a = where(masked_a, 0.0, g * slope_a)
        grad_b = where((data(a) == 0) & (data(b) >= 0), 0.0, g * (out * e.log(a)))
        return grad_a, grad_b


class PowConst(Elementwise):
    """a ** c for a number c, torch's pow with a scalar exponent: c = 0.5 and -0.5 are computed as
    sqrt and 1 / sqrt (see `power_scalar`), and the gradient is a constant 0 when c == 0, so its own
    derivative is 0 too, even at a == 0 where c * a ** (c - 1) is nan."""

    name, symbol = "pow", "**"
    forward = staticmethod(e.power_scalar)

    @staticmethod
    def backward(g, out, a, c):
        if c == 0:
            return (e.zeros_like(g),)
        return (g * (c * e.power_scalar(a, c - 1.0)),)


class Atan2(Binary):
    """atan2(a, b), the angle of the point (b, a); d/da = b / (a² + b²), d/db = -a / (a² + b²).

    Computed with a and b divided by s, a power of 2 near max(|a|, |b|): a² + b² itself overflows
    past 1.3e154 (float32: 1.8e19) and underflows below 1e-162, where torch's gradient is 0 (or
    nan) and these are the exact values; elsewhere the digits are torch's, the scaling being exact.
    At the origin both are 0, signed as torch's g * b * 0."""

    name, symbol = "atan2", "atan2"
    forward = staticmethod(lambda a, b: math.atan2(a, b) if type(a) is float else np.arctan2(a, b))

    @staticmethod
    def gradients(g, out, a, b):
        shrink = e.inverse_binade(a, b)
        a, b = a * shrink, b * shrink  # a constant factor: the derivative through it is exact
        norm = a * a + b * b
        reciprocal = where(data(norm) == 0, 0.0, div(1.0, norm))
        return g * b * reciprocal * shrink, -g * a * reciprocal * shrink


# --- unary -------------------------------------------------------------------------------------


class Neg(Elementwise):
    name, symbol = "neg", "neg"
    arithmetic = False
    forward = staticmethod(operator.neg)

    @staticmethod
    def backward(g, out, a):
        return (-g,)


class ReLU(Elementwise):
    """max(a, 0); derivative 0 where the output is <= 0 (so at a == 0), g at nan, as torch. The
    output is never negative, so that is where it is 0: one comparison, no negated mask."""

    name, symbol = "relu", "ReLU"
    arithmetic = False  # it only selects: numpy has nothing to warn about
    reuses_grad = True  # Tensor.backward may say g is its own: the mask then goes into g
    forward = staticmethod(e.relu)

    @staticmethod
    def backward(g, out, a, *, owned=False):
        return (where(data(out) != 0, g, 0.0, overwrite=owned),)  # owned: see TensorOp.reuses_grad


class Tanh(Elementwise):
    """tanh; derivative 1 - out², computed as (1 - out)(1 + out), which keeps its digits near |out| = 1.

    Near out = 0 that product's own derivative (a second derivative of tanh) would be the
    difference of two nearly equal terms, losing digits as out -> 0; there 1 - out * out, whose
    derivative -2 out out' has no such difference, and which has no cancellation for |out| < 1/4.
    """

    name, symbol = "tanh", "tanh"
    forward = staticmethod(e.tanh)

    @staticmethod
    def backward(g, out, a):
        small = abs(data(out)) < 0.25
        return (g * where(small, 1.0 - out * out, (1.0 - out) * (1.0 + out)),)


class Sigmoid(Elementwise):
    name, symbol = "sigmoid", "sigmoid"
    forward = staticmethod(e.sigmoid)

    @staticmethod
    def backward(g, out, a):
        return (g * (1.0 - out) * out,)


class Exp(Elementwise):
    name, symbol = "exp", "exp"
    forward = staticmethod(e.exp)

    @staticmethod
    def backward(g, out, a):
        return (g * out,)


class Log(Elementwise):
    name, symbol = "log", "log"
    forward = staticmethod(e.log)
    domain = ("positive",)

    @staticmethod
    def backward(g, out, a):
        return (div(g, a),)


class Sin(Elementwise):
    name, symbol = "sin", "sin"
    forward = staticmethod(e.sin)

    @staticmethod
    def backward(g, out, a):
        return (g * e.cos(a),)


class Cos(Elementwise):
    name, symbol = "cos", "cos"
    forward = staticmethod(e.cos)

    @staticmethod
    def backward(g, out, a):
        return (g * -e.sin(a),)


class Sqrt(Elementwise):
    name, symbol = "sqrt", "sqrt"
    forward = staticmethod(e.sqrt)
    domain = ("positive",)

    @staticmethod
    def backward(g, out, a):
        return (div(g, 2.0 * out),)


class Abs(Elementwise):
    """|a|; derivative sign(a), so 0 at a == 0 and at nan; an inf gradient there gives nan, as
    torch's g * sgn(a)."""

    name, symbol = "abs", "abs"
    forward = staticmethod(abs)

    @staticmethod
    def backward(g, out, a):
        return (g * e.sign(a),)


class Atan(Elementwise):
    name, symbol = "atan", "atan"
    forward = staticmethod(lambda a: math.atan(a) if type(a) is float else np.arctan(a))

    @staticmethod
    def backward(g, out, a):
        return (div(g, 1.0 + a * a),)


#: Every shared rule, by torch's name: the engine's tests compare each with `torch.<name>`.
RULES: dict[str, type[Elementwise]] = {
    rule.name: rule
    for rule in (
        Add,
        Sub,
        Mul,
        Div,
        Pow,
        Atan2,
        Neg,
        ReLU,
        Tanh,
        Sigmoid,
        Exp,
        Log,
        Sin,
        Cos,
        Sqrt,
        Abs,
        Atan,
    )
}

__all__ = ["RULES", "Binary", "Elementwise", "PowConst", *(rule.__name__ for rule in RULES.values())]
