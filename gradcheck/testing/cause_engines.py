"""Engines whose bugs the harness once reported wrongly: minigrad with one thing changed each.

Each reproduces a class of bug met on third-party engines and must come out of a
campaign as exactly one finding per bug, with the right op and kind: a division whose number on
the left is unsupported (no `__rtruediv__`), a division by a number computed as a reciprocal of
the reversed quotient (it raises at `0.0 / v`, also in nodes no output uses), two bugs in one
engine, an `x ** 0` rule raising three exception types at 0, and maximum's partials at a tie.

Beyond minigrad's top-level API, the changed rules subclass minigrad's `PowConst` and `Maximum`
and are written with the helpers of minigrad's own rules (`data`, `where`, `sum_to`), so they
take floats, arrays and, under create_graph, Values and Tensors as minigrad's rules do; a tensor
rule is applied with `minigrad.tensor.apply_op` (see `gradcheck.testing`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import minigrad
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.testing.kind_engines import ReluTimesTwo
from minigrad import Tensor
from minigrad.elementary import data, where
from minigrad.elementwise import PowConst
from minigrad.tensor import apply_op as apply_tensor_op
from minigrad.tensor_dispatch import sum_to
from minigrad.tensor_ops import Maximum


def _number(x: Any) -> bool:
    return isinstance(x, (int, float))


class NoRtruediv(MinigradValue):
    """A Value class without `__rtruediv__`: `2.0 / x` raises TypeError as Python does."""

    name = "no-rtruediv"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "div" and _number(args[0]):
            raise TypeError(f"unsupported operand type(s) for /: 'float' and '{type(args[1]).__name__}'")
        return super().apply(op, args, attrs)


def _reversed_quotient(c: float, x: Any) -> Any:
    """The engine's `c / x`: `(x / c) ** -1`, which raises ZeroDivisionError for c = 0 (a rule of
    the engine, apart from its adapter: the exception is the engine's)."""
    if c == 0:
        raise ZeroDivisionError("float division by zero")
    return c / x


class ReversedQuotientRtruediv(MinigradValue):
    """`c / x` computed as `(x / c) ** -1` in Python floats: right for every c but 0, where the
    forward raises ZeroDivisionError, whether or not any output uses the node."""

    name = "reversed-quotient-rtruediv"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "div" and _number(args[0]):
            return _reversed_quotient(args[0], args[1])
        return super().apply(op, args, attrs)


class ReluTwoTanhOff(ReluTimesTwo):
    """Two bugs: relu's slope is 2 (wrong-gradient) and tanh's value is 1e-6 too large, its slope
    right (wrong-value)."""

    name = "relu-two-tanh-off"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        out = super().apply(op, args, attrs)
        return out + 1e-6 if op == "tanh" else out


def _naive_power_slope(x: float, c: float) -> float:
    """c * x ** (c - 1) in Python floats, through `math.pow` for a negatively signed base: at
    0.0 it raises ZeroDivisionError, at -0.0 ValueError, at +-5e-324 OverflowError."""
    base = math.pow(x, c - 1.0) if math.copysign(1.0, x) < 0 else x ** (c - 1.0)
    return c * base


class _NaiveZeroPower(PowConst):
    @staticmethod
    def backward(g, out, a, c):
        if c != 0:
            return PowConst.backward(g, out, a, c)
        return (g * _naive_power_slope(data(a), c),)


class NaiveZeroPower(MinigradValue):
    """`x ** 0` differentiated as `0 * x ** -1` (micrograd's rule): three exception types at 0."""

    name = "naive-zero-power"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "pow_const" and attrs["exponent"] == 0:
            return minigrad.apply_op(_NaiveZeroPower, args[0], const=attrs["exponent"])
        return super().apply(op, args, attrs)


def _maximum_sharing(share_a: float, share_b: float) -> type[Maximum]:
    """minigrad's maximum with the partials (share_a, share_b) at a tie instead of torch's (1/2, 1/2)."""

    class TieShared(Maximum):
        @staticmethod
        def backward(g, out, a, b, *, needs):
            a_data, b_data = data(a), data(b)
            tie = a_data == b_data
            grad_a = sum_to(where(a_data < b_data, 0.0, where(tie, share_a * g, g)), a) if needs[0] else None
            grad_b = sum_to(where(b_data < a_data, 0.0, where(tie, share_b * g, g)), b) if needs[1] else None
            return grad_a, grad_b

    return TieShared


class _TieMaximum(MinigradTensor):
    """minigrad's Tensor with maximum's rule `rule` (its partials at a tie changed)."""

    rule: ClassVar[type[Maximum]] = Maximum

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        tensors = all(isinstance(a, Tensor) for a in args) and args[0].dtype == args[1].dtype
        if op == "maximum" and tensors:
            return apply_tensor_op(self.rule, tuple(args))
        return super().apply(op, args, attrs)


class MaximumZeroAtTie(_TieMaximum):
    """maximum's partials are (0, 0) at a tie: no subgradient (they must sum to 1), a wrong gradient."""

    name = "maximum-zero-at-tie"
    rule = _maximum_sharing(0.0, 0.0)


class MaximumFirstAtTie(_TieMaximum):
    """maximum's partials are (1, 0) at a tie: a valid subgradient, not torch's (1/2, 1/2): a convention."""

    name = "maximum-first-at-tie"
    rule = _maximum_sharing(1.0, 0.0)
