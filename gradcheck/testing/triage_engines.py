"""Engines with one planted problem of each tier: each must come out of a campaign as exactly one finding, in
the right tier (`gradcheck.campaign.tiers`).

- `ListsSigmoidItLacks`: an adapter that lists `sigmoid` for an engine with no `.sigmoid()`: the
  default spelling raises AttributeError before any engine code runs, one `adapter` finding;
- `SumOverOneDimOnly`: minigrad's Tensor whose sum's backward takes one dim (`np.repeat` along an
  axis), so a sum over a tuple of dims raises TypeError in the engine: one `bug` finding, titled
  by that variant;
- `NoRtruedivValue`: a micrograd-style value class defining `__truediv__` but no `__rtruediv__`,
  checked with no adapter: `2.0 / x` raises TypeError, one `bug` finding from the inspection;
- `TanhOneMinusT`: a value class whose tanh derivative is `1 - t`: its repro exits 1;
- `ReciprocalPowerOff`: a value class computing `2.0 / x` as `2.0 * x ** -1.0001`: its value and
  gradient a little off, complex for x < 0, and a `relu` or `tanh` fed that complex number raises
  TypeError; one `bug` finding (the op's wrong numbers), covering the graphs that raise;
- `Atan2PartialsSwapped`: minigrad with atan2's partials swapped: at (0, -1), on atan2's branch
  cut, its slope +1 against torch's -1 is a wrong gradient, not a convention at a kink (a jump
  is no kink: only the continuous side has a slope);
- `TapeGradientsOnly`: a functional tape engine (no `backward`, no `.grad`) whose adapter
  overrides `gradients` only and wraps constants in `operand`, as docs/adapters.md allows; the
  structural checks it cannot run do not apply, the deep chains go through `operand`, and its one
  planted bug (cos's slope has the wrong sign) is one `bug` finding.

The value class and the tape engine are written out here (small, correct but for the planted
bug); `SumOverOneDimOnly` subclasses minigrad's `Sum` rule and uses the helpers minigrad's own
rules use (`expand_reduced` is not needed: the planted rule repeats along one axis).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import minigrad
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.ir import Constant
from gradcheck.testing.structural_engines import Value
from minigrad.elementary import data, div, where
from minigrad.elementwise import Atan2
from minigrad.tensor import apply_op
from minigrad.tensor_reductions import Sum

# --- an adapter listing a method its engine lacks ----------------------------------------------


class ListsSigmoidItLacks(EngineAdapter):
    """structural_engines' correct Value, which has no `sigmoid()`, with `sigmoid` listed."""

    name = "lists-sigmoid-it-lacks"
    ops = frozenset({"add", "sub", "mul", "neg", "tanh", "sigmoid"})

    def leaf(self, value: Any) -> Value:
        return Value(float(value))


# --- a reduction failing for a tuple of dims ---------------------------------------------------


class _SumOverOneDim(Sum):
    """sum whose backward repeats the gradient along the reduced axis: written for one axis."""

    @staticmethod
    def backward(g, out, a, *, needs, axes, keepdim):
        grown = g if keepdim else np.expand_dims(g, axes)
        axis = axes[0] if len(axes) == 1 else axes  # np.repeat takes one axis: a tuple raises TypeError
        return (np.repeat(grown, a.shape[axes[0]], axis=axis),)


class SumOverOneDimOnly(MinigradTensor):
    """minigrad's Tensor whose sum fails in backward when it reduces over two or more dims."""

    name = "sum-over-one-dim-only"
    ops = frozenset({"add", "mul", "sum"})
    create_graph = False  # the planted rule takes arrays only

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "sum":
            ndim = args[0].ndim
            axes = tuple(sorted(d % ndim for d in attrs["dims"]))
            return apply_op(_SumOverOneDim, (args[0],), axes=axes, keepdim=bool(attrs.get("keepdim", False)))
        return super().apply(op, args, attrs)


# --- a value class with no __rtruediv__ ---------------------------------------------------------


class NoRtruedivValue(Value):
    """A correct micrograd-style value class with `x / y` and `x / 2.0`, but no `2.0 / x`."""

    def __truediv__(self, other: Any) -> Value:
        other = self._lift(other)
        q = self.data / other.data
        return self._make(q, (self, other), lambda g: (g / other.data, -g * q / other.data))


class TanhOneMinusT(Value):
    """A value class whose tanh derivative is written `1 - t` instead of `1 - t**2` (26% off at
    0.37): its repro must show the numbers and exit 1."""

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        return self._make(t, (self,), lambda g: (g * (1.0 - t),))


class ReciprocalPowerOff(Value):
    """A value class with `x ** c`, `x / y`, `relu`, and `2.0 / x` written `2.0 * x ** -1.0001` (the
    planted bug): off by 1e-4 relative at ordinary x, complex where x < 0 (Python's power of a
    negative number to a fractional exponent), which the `relu` or `tanh` downstream refuses."""

    def __init__(self, data: Any, children: tuple[Value, ...] = (), rule: Any = None) -> None:
        super().__init__(0.0, children, rule)
        self.data = data  # kept as it comes, a complex power too, as micrograd keeps it

    def __pow__(self, exponent: float) -> Value:
        p = self.data**exponent
        slope = (
            (lambda g: (0.0,)) if exponent == 0 else (lambda g: (g * exponent * self.data ** (exponent - 1),))
        )
        return self._make(p, (self,), slope)

    def __truediv__(self, other: Any) -> Value:
        other = self._lift(other)
        q = self.data / other.data
        return self._make(q, (self, other), lambda g: (g / other.data, -g * q / other.data))

    def __rtruediv__(self, other: Any) -> Value:
        return self**-1.0001 * other

    def relu(self) -> Value:
        return self._make(
            self.data if self.data > 0 else 0.0, (self,), lambda g: (g if self.data > 0 else 0.0,)
        )


# --- atan2 with its partials swapped ---------------------------------------------------------------


class _Atan2Swapped(Atan2):
    @staticmethod
    def gradients(g, out, a, b):
        norm = a * a + b * b
        reciprocal = where(data(norm) == 0, 0.0, div(1.0, norm))
        return -g * b * reciprocal, g * a * reciprocal  # planted: d/da and d/db swapped


class Atan2PartialsSwapped(MinigradValue):
    """minigrad's Value with atan2's partials swapped (d/dy gets -x/r², d/dx gets y/r²)."""

    name = "atan2-partials-swapped"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "atan2":
            return minigrad.apply_op(_Atan2Swapped, *args)
        return super().apply(op, args, attrs)


# --- a functional tape engine: gradients returned, constants wrapped --------------------------

_TAPE: list[tuple[tuple[int, float], ...] | None] = []


class Var:
    """A number on the tape; no `backward`, no `.grad`: gradients come from `tape_grad`."""

    __slots__ = ("value", "index")

    def __init__(self, value: float, parents: tuple[tuple[int, float], ...] | None = None) -> None:
        self.value = float(value)
        self.index = len(_TAPE)
        _TAPE.append(parents)


def const(value: float) -> Var:
    """A constant: every number must be one before it meets a Var."""
    return Var(value)


def tape_add(a: Var, b: Var) -> Var:
    return Var(a.value + b.value, ((a.index, 1.0), (b.index, 1.0)))


def tape_sub(a: Var, b: Var) -> Var:
    return Var(a.value - b.value, ((a.index, 1.0), (b.index, -1.0)))


def tape_mul(a: Var, b: Var) -> Var:
    return Var(a.value * b.value, ((a.index, b.value), (b.index, a.value)))


def tape_neg(a: Var) -> Var:
    return Var(-a.value, ((a.index, -1.0),))


def tape_sin(a: Var) -> Var:
    return Var(math.sin(a.value), ((a.index, math.cos(a.value)),))


def tape_cos(a: Var) -> Var:
    return Var(math.cos(a.value), ((a.index, math.sin(a.value)),))  # planted: the slope is -sin


def tape_grad(y: Var, xs: Sequence[Var]) -> list[float]:
    """d y / d x for each x, by one reverse sweep over the tape (adding every contribution)."""
    adjoint = {y.index: 1.0}
    for i in range(y.index, min(x.index for x in xs) - 1, -1):
        g, parents = adjoint.get(i), _TAPE[i]
        if g is None or parents is None:
            continue
        for parent, slope in parents:
            adjoint[parent] = adjoint.get(parent, 0.0) + slope * g
    return [adjoint.get(x.index, 0.0) for x in xs]


TAPE_OPS = {"add": tape_add, "sub": tape_sub, "mul": tape_mul, "neg": tape_neg}
TAPE_OPS.update(sin=tape_sin, cos=tape_cos)


class TapeGradientsOnly(EngineAdapter):
    """The tape engine's adapter, as docs/adapters.md allows: `gradients` returned by the engine
    (no `backward`), constants wrapped in `operand`."""

    name = "tape-gradients-only"
    ops = frozenset(TAPE_OPS)

    def leaf(self, value: Any) -> Var:
        return Var(float(value))

    def operand(self, constant: Constant) -> Var:
        return const(float(constant.value))

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Var:
        return TAPE_OPS[op](*args)

    def value(self, node: Var) -> float:
        return node.value

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        loss = tape_mul(outputs[0], const(float(cotangent[0])))
        for out, c in zip(outputs[1:], cotangent[1:]):
            loss = tape_add(loss, tape_mul(out, const(float(c))))
        return tape_grad(loss, inputs)


__all__ = [
    "Atan2PartialsSwapped",
    "ListsSigmoidItLacks",
    "NoRtruedivValue",
    "SumOverOneDimOnly",
    "TanhOneMinusT",
    "TapeGradientsOnly",
]
