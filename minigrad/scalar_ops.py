"""The scalar ops of `Value`: each forward rule on floats, its derivative rule right beside it.

A derivative rule `backward(g, out, *inputs)` returns one gradient per differentiable input.
It is written once and serves two paths: plain floats (the fast path of `backward()`), and
Values (under `grad(..., create_graph=True)`, where the rule itself builds a differentiable
graph). Constants such as the 2 in `x * 2` come after the differentiable inputs and get no
gradient. The helpers below dispatch: a float goes to `floatmath`, a Value to its own method.
"""

from __future__ import annotations

import operator
from typing import Any, ClassVar

from minigrad import floatmath as fm


def _is_float(x: Any) -> bool:
    return type(x) is float or type(x) is int


def _data(x: Any) -> float:
    return x if _is_float(x) else x.data


def div(x: Any, y: Any) -> Any:
    return fm.div(x, y) if _is_float(x) and _is_float(y) else x / y


def zero(g: Any) -> Any:
    """A zero gradient of g's kind: 0.0 for floats, a Value on the differentiable path."""
    return 0.0 if _is_float(g) else g * 0.0


def cos(x: Any) -> Any:
    return fm.cos(x) if _is_float(x) else x.cos()


def sin(x: Any) -> Any:
    return fm.sin(x) if _is_float(x) else x.sin()


def log(x: Any) -> Any:
    return fm.log(x) if _is_float(x) else x.log()


def power(x: Any, y: Any) -> Any:
    return fm.pow(x, y) if _is_float(x) and _is_float(y) else x**y


def power_scalar(x: Any, c: float) -> Any:
    return fm.pow_scalar(x, c) if _is_float(x) else x**c


class ScalarOp:
    """Base of every scalar op: a name (shown as `Value._op`), a forward and a derivative rule."""

    name: ClassVar[str]

    @staticmethod
    def forward(*args: float) -> float:
        raise NotImplementedError

    @staticmethod
    def backward(g: Any, out: Any, *args: Any) -> tuple[Any, ...]:
        raise NotImplementedError


# --- binary ops between two Values -------------------------------------------------------------


class Add(ScalarOp):
    name = "+"
    forward = staticmethod(operator.add)

    @staticmethod
    def backward(g, out, a, b):
        return g, g


class Sub(ScalarOp):
    name = "-"
    forward = staticmethod(operator.sub)

    @staticmethod
    def backward(g, out, a, b):
        return g, -g


class Mul(ScalarOp):
    name = "*"
    forward = staticmethod(operator.mul)

    @staticmethod
    def backward(g, out, a, b):
        return g * b, g * a


class Div(ScalarOp):
    name = "/"
    forward = staticmethod(fm.div)

    @staticmethod
    def backward(g, out, a, b):
        return div(g, b), -g * div(div(a, b), b)


class Pow(ScalarOp):
    """a ** b with both differentiable; torch's rules: d/da is 0 when b == 0, d/db is 0 at a == 0."""

    name = "**"
    forward = staticmethod(fm.pow)

    @staticmethod
    def backward(g, out, a, b):
        b_value, a_value = _data(b), _data(a)
        grad_a = zero(g) if b_value == 0 else g * (b * power(a, b - 1.0))
        grad_b = zero(g) if a_value == 0 and b_value >= 0 else g * (out * log(a))
        return grad_a, grad_b


# --- a Value with a constant number (the constant is the last argument) ----------------------


class AddConst(ScalarOp):
    name = "+"
    forward = staticmethod(operator.add)

    @staticmethod
    def backward(g, out, a, c):
        return (g,)


class SubConst(ScalarOp):
    name = "-"
    forward = staticmethod(operator.sub)

    @staticmethod
    def backward(g, out, a, c):
        return (g,)


class RSubConst(ScalarOp):
    """c - a."""

    name = "-"
    forward = staticmethod(lambda a, c: c - a)

    @staticmethod
    def backward(g, out, a, c):
        return (-g,)


class MulConst(ScalarOp):
    name = "*"
    forward = staticmethod(operator.mul)

    @staticmethod
    def backward(g, out, a, c):
        return (g * c,)


class DivConst(ScalarOp):
    name = "/"
    forward = staticmethod(fm.div)

    @staticmethod
    def backward(g, out, a, c):
        return (div(g, c),)


class RDivConst(ScalarOp):
    """c / a."""

    name = "/"
    forward = staticmethod(lambda a, c: fm.div(c, a))

    @staticmethod
    def backward(g, out, a, c):
        return (-g * div(out, a),)


class PowConst(ScalarOp):
    """a ** c for a number c; zero gradient when c == 0, as torch."""

    name = "**"
    forward = staticmethod(fm.pow_scalar)

    @staticmethod
    def backward(g, out, a, c):
        if c == 0:
            return (zero(g),)
        return (g * (c * power_scalar(a, c - 1.0)),)


class RPowConst(ScalarOp):
    """c ** a for a number c; zero gradient at c == 0 with a >= 0, as torch."""

    name = "**"
    forward = staticmethod(lambda a, c: fm.pow(c, a))

    @staticmethod
    def backward(g, out, a, c):
        if c == 0 and _data(a) >= 0:
            return (zero(g),)
        return (g * (out * fm.log(c)),)


# --- unary ops ---------------------------------------------------------------------------------


class Neg(ScalarOp):
    name = "neg"
    forward = staticmethod(operator.neg)

    @staticmethod
    def backward(g, out, a):
        return (-g,)


class ReLU(ScalarOp):
    """max(a, 0); derivative 0 where the output is <= 0 (so at a == 0), g at nan, as torch."""

    name = "ReLU"
    forward = staticmethod(fm.relu)

    @staticmethod
    def backward(g, out, a):
        return (zero(g) if _data(out) <= 0 else g,)


class Tanh(ScalarOp):
    """tanh; derivative 1 - out², computed as (1 - out)(1 + out), which keeps its digits near |out| = 1."""

    name = "tanh"
    forward = staticmethod(fm.tanh)

    @staticmethod
    def backward(g, out, a):
        return (g * ((1.0 - out) * (1.0 + out)),)


class Sigmoid(ScalarOp):
    name = "sigmoid"
    forward = staticmethod(fm.sigmoid)

    @staticmethod
    def backward(g, out, a):
        return (g * (1.0 - out) * out,)


class Exp(ScalarOp):
    name = "exp"
    forward = staticmethod(fm.exp)

    @staticmethod
    def backward(g, out, a):
        return (g * out,)


class Log(ScalarOp):
    name = "log"
    forward = staticmethod(fm.log)

    @staticmethod
    def backward(g, out, a):
        return (div(g, a),)


class Sin(ScalarOp):
    name = "sin"
    forward = staticmethod(fm.sin)

    @staticmethod
    def backward(g, out, a):
        return (g * cos(a),)


class Cos(ScalarOp):
    name = "cos"
    forward = staticmethod(fm.cos)

    @staticmethod
    def backward(g, out, a):
        return (g * -sin(a),)


class Sqrt(ScalarOp):
    name = "sqrt"
    forward = staticmethod(fm.sqrt)

    @staticmethod
    def backward(g, out, a):
        return (div(g, 2.0 * out),)


class Abs(ScalarOp):
    """|a|; derivative sign(a), so 0 at a == 0, as torch."""

    name = "abs"
    forward = staticmethod(abs)

    @staticmethod
    def backward(g, out, a):
        return (g * fm.sign(_data(a)),)
