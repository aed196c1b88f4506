"""One broken engine per kind of difference: minigrad's Value with one rule changed.

The findings' tests run campaigns and checks on these and expect each to be named by its kind
(`gradcheck.parity.kinds.Kind`): a relu whose slope is 2 (wrong-gradient), a relu that takes the
slope 1/2 at its kink (a convention), tanh's derivative treated as a constant (wrong second
derivatives), a tanh value off by 1e-6 (wrong-value), a sqrt whose derivative is nan
(nonfinite), and an exp that raises (exception).

Beyond minigrad's top-level API, each changed rule subclasses minigrad's own (`ReLU`, `Tanh`,
`Sqrt` of `minigrad.scalar_ops`), keeping its forward, and writes the new derivative with the
helpers minigrad's rules use (`data`, `where`), which take floats and, under create_graph, Values
(see `gradcheck.testing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import minigrad
from gradcheck.engines.minigrad_value import MinigradValue
from minigrad.elementary import data, where
from minigrad.scalar_ops import ReLU, ScalarOp, Sqrt, Tanh


class _ReluSlopeTwo(ReLU):
    @staticmethod
    def backward(g, out, a):
        return (where(data(out) <= 0, 0.0, g * 2.0),)


class _ReluHalfAtZero(ReLU):
    @staticmethod
    def backward(g, out, a):
        x = data(a)
        return (g * 0.5 if x == 0 else where(x <= 0, 0.0, g),)  # nan passes g on, as torch


class _TanhConstantSlope(Tanh):
    @staticmethod
    def backward(g, out, a):
        y = data(out)
        return (g * ((1.0 - y) * (1.0 + y)),)  # a float: no second derivative flows through it


class _SqrtNanSlope(Sqrt):
    @staticmethod
    def backward(g, out, a):
        return (g * float("nan"),)


class _OneRuleChanged(MinigradValue):
    """minigrad's Value with the rule of op `op` replaced by `rule`."""

    op: ClassVar[str] = ""
    rule: ClassVar[type[ScalarOp]]

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == self.op:
            return minigrad.apply_op(self.rule, *args)
        return super().apply(op, args, attrs)


class ReluTimesTwo(_OneRuleChanged):
    """relu's derivative is 2 instead of 1: one wrong-gradient finding, blamed on relu alone."""

    name = "relu-times-two"
    op, rule = "relu", _ReluSlopeTwo


class ReluHalfAtZero(_OneRuleChanged):
    """relu'(0) = 1/2 (between the one-sided slopes 0 and 1; torch takes 0): a convention."""

    name = "relu-half-at-zero"
    op, rule = "relu", _ReluHalfAtZero


class TanhFirstOrderOnly(_OneRuleChanged):
    """tanh's derivative as a plain number: right gradients, wrong second derivatives."""

    name = "tanh-first-order-only"
    op, rule = "tanh", _TanhConstantSlope


class SqrtNanSlope(_OneRuleChanged):
    """sqrt's derivative is nan where torch's is finite: nonfinite."""

    name = "sqrt-nan-slope"
    op, rule = "sqrt", _SqrtNanSlope


class TanhValueOff(MinigradValue):
    """tanh's value is 1e-6 (relative) too large: wrong-value."""

    name = "tanh-value-off"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        out = super().apply(op, args, attrs)
        return out * (1.0 + 1e-6) if op == "tanh" else out


def _exp_that_raises(x: Any) -> Any:
    """The engine's exp (a rule apart from its adapter: the exception is the engine's)."""
    raise OverflowError("exp is not implemented by this engine")


class ExpRaises(MinigradValue):
    """exp raises: exception."""

    name = "exp-raises"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "exp":
            return _exp_that_raises(args[0])
        return super().apply(op, args, attrs)
