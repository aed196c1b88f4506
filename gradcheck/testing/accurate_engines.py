"""Correct engines more accurate than torch: right where torch's answer is off the exact value.

Judged against the exact values (`reference="exact"`) each passes where torch is off, and the
check reports torch's answer as off (`Off.TORCH`, tier `torch-off`). Judged against torch,
`KeptPowHessian` fails there (its right answer differs from torch's beyond torch's rounding);
`ScaledAtan2` passes, its gradient outside torch's rounding judged again against the exact value.
No bug is planted; each changes one derivative of a correct engine for a formula more accurate
than torch's:

- `ScaledAtan2`: `reordered_engines.LocalValue` whose atan2 partials x / (x² + y²) and
  -y / (x² + y²) are computed from x and y scaled by the larger of them, so that x² + y² never
  overflows: torch's gradient is 0 once |x|, |y| pass 1.3e154 (docs/accuracy.md, torch 1);
- `KeptPowHessian`: minigrad's Value whose pow rule masks d(a ** b)/da only at 0 ** 0, not for
  every base where b == 0: its second derivative d²(a ** b)/da db = 1 / a at b = 0 is kept, where
  torch's mask makes it 0 one way and 1 / a the other (docs/accuracy.md, torch 2). Random scalar
  graphs meet it: an input is exactly 0 about one time in twelve.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import minigrad
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.testing.reordered_engines import Derivative, LocalDerivatives, LocalValue
from minigrad import Value
from minigrad import elementary as e
from minigrad.elementary import data, where
from minigrad.elementwise import Pow


def atan2_slopes(y: Any, x: Any) -> tuple[Any, Any]:
    """atan2(y, x)'s partials x / (x² + y²) and -y / (x² + y²), x and y scaled by the larger of
    |x| and |y| first, so that x² + y² never overflows. Where torch's x² + y² is 0 (the origin, or
    squares that underflow) torch's convention, a signed 0; at inf or nan the plain formula."""
    d = x * x + y * y
    if d == 0:
        return x * 0.0, -y * 0.0
    m = max(abs(x), abs(y))
    if m == float("inf") or m != m:
        return x / d, -y / d
    xs, ys = x / m, y / m
    d = (xs * xs + ys * ys) * m
    return xs / d, -ys / d


class ScaledAtan2Value(LocalValue):
    """`LocalValue` with atan2's partials by `atan2_slopes`."""

    __slots__ = ()

    formulas: ClassVar[dict[str, Derivative]] = {"atan2": lambda a, k, out: atan2_slopes(a[0], a[1])}


class ScaledAtan2(LocalDerivatives):
    """`ScaledAtan2Value`: every registry scalar op, atan2 more accurate than torch's."""

    name = "scaled-atan2"
    value_type = ScaledAtan2Value


class _PowKeepingItsHessian(Pow):
    """minigrad's pow, d/da masked only where b == 0 and a ** (b - 1) is no finite number (0 ** 0,
    a subnormal base, nan: b * a ** (b - 1) would be 0 * inf), not at every base."""

    @staticmethod
    def gradients(g: Any, out: Any, a: Any, b: Any) -> tuple[Any, Any]:
        with np.errstate(all="ignore"):
            unbounded = ~np.isfinite(np.power(np.float64(data(a)), data(b) - 1.0))
        masked = (data(b) == 0) & unbounded
        grad_a = where(bool(masked) if np.ndim(masked) == 0 else masked, 0.0, g * (b * e.power(a, b - 1.0)))
        grad_b = where((data(a) == 0) & (data(b) >= 0), 0.0, g * (out * e.log(a)))
        return grad_a, grad_b


class KeptPowHessian(MinigradValue):
    """minigrad's Value, its pow by `_PowKeepingItsHessian`."""

    name = "kept-pow-hessian"

    def apply(self, op: str, args: Any, attrs: dict[str, Any]) -> Any:
        if op == "pow":
            return minigrad.apply_op(_PowKeepingItsHessian, *args)
        return super().apply(op, args, attrs)

    def leaf(self, value: Any) -> Value:
        return Value(value)
