"""The parity check's tolerances, and its errors at many points in one numpy pass.

`PointErrors` compares the engine's forward values and gradients with torch's and with central
differences at m points at once (one column per point): the figures a `GraphCheck` keeps, which
points fail, and the words for a failing point. One pass over all K points costs about what one
point cost compared alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.checker.tolerance import Tolerance
from gradcheck.parity.rounding import SPREAD_SAFETY, rounding_only

# Engine vs torch: both are float64 autograd, so they agree far closer than either agrees with a
# numerical oracle; errors are measured against the point's gradient scale (its largest entry).
TORCH_TOLERANCE = Tolerance(atol=1e-10, rtol=1e-9)
# Forward values: relative to max(|torch value|, 1e-3 * largest output of the point).
FORWARD_RTOL = 1e-10
# Numerical gradients: the policy's tolerance times this factor, plus their own error estimate.
NUMERIC_SAFETY = 1e3
ERROR_ESTIMATE_SAFETY = 10.0
# Relative errors divide by the point's largest gradient entry, but never by less than this: a
# gradient that is zero up to rounding (x/x) has no meaningful relative error.
SCALE_FLOOR = 1e-8

# The GraphCheck maxima, in the order `PointErrors.figures` gives them.
FIGURES = (
    "max_forward_err",
    "max_abs_err_torch",
    "max_rel_err_torch",
    "max_abs_err_numeric",
    "max_rel_err_numeric",
    "max_rel_err_torch_numeric",
)


class PointErrors:
    """The engine's results (`fwd_e` (outputs, m), `grad_e` (inputs, m)) against the references
    at points `cols` (torch's `reference`, central differences `numeric` or None).

    Absolute errors are |engine - reference|; relative ones divide by max(1, the point's gradient
    scale (largest |torch| entry, at least SCALE_FLOOR)).
    """

    def __init__(
        self,
        policy: Tolerance,
        fwd_e: np.ndarray,
        grad_e: np.ndarray,
        reference: Any,
        numeric: Any,
        cols: np.ndarray,
    ) -> None:
        self.fwd_e, self.grad_e = fwd_e, grad_e
        self.fwd_t = fwd_t = reference.forward[:, cols]
        self.grad_t = grad_t = reference.grads[:, cols]
        m = len(cols)

        abs_fwd = np.abs(fwd_t)
        self.fwd_scale = np.maximum(abs_fwd, 1e-3 * np.maximum(_column_max(abs_fwd), 1e-300))
        with np.errstate(over="ignore"):  # a difference at an exact zero is judged by its floor
            self.fwd_rel = np.abs(fwd_e - fwd_t) / self.fwd_scale
        fwd_err = _column_max(self.fwd_rel) if fwd_t.size else np.zeros(m)
        self.fwd_err = np.where(np.isfinite(fwd_err), fwd_err, np.inf)

        scale = np.maximum(_column_max(np.abs(grad_t)) if grad_t.size else np.zeros(m), SCALE_FLOOR)
        unit = np.maximum(scale, 1.0)
        self.abs_t = np.abs(grad_e - grad_t)
        self.allowed_t = TORCH_TOLERANCE.atol * unit + TORCH_TOLERANCE.rtol * np.maximum(
            np.abs(grad_t), 1e-3 * scale
        )
        abs_t_max = _column_nanmax(self.abs_t)
        figures = [self.fwd_err, abs_t_max, abs_t_max / unit]
        self.bad_torch = _any_column(~(self.abs_t <= self.allowed_t))
        self.bad_forward = ~(self.fwd_err <= FORWARD_RTOL)
        bad = np.zeros(m, dtype=bool)

        self.numeric = numeric is not None
        if self.numeric:
            self.grad_n = grad_n = numeric.grads[:, cols]
            self.allowed_n = ERROR_ESTIMATE_SAFETY * numeric.error[:, cols] + NUMERIC_SAFETY * (
                policy.atol * unit + policy.rtol * np.abs(grad_n)
            )
            self.abs_n = np.abs(grad_e - grad_n)
            self.abs_tn = np.abs(grad_t - grad_n)
            abs_n_max = _column_nanmax(self.abs_n)
            figures += [abs_n_max, abs_n_max / unit, _column_nanmax(self.abs_tn) / unit]
            bad |= _any_column(~(self.abs_n <= self.allowed_n))
            bad |= _any_column(~(self.abs_tn <= self.allowed_n))
        self.figures = figures
        self.bad_numeric = bad  # against central differences
        self.bad_elsewhere = bad | self.bad_forward  # forward values, or against central differences
        self.bad = self.bad_elsewhere | self.bad_torch

    def forward_failing(self) -> np.ndarray:
        """The columns whose forward values differ from torch's, with finite values on both sides."""
        finite = ~_any_column(~(np.isfinite(self.fwd_e) & np.isfinite(self.fwd_t)))
        return np.flatnonzero(self.bad_forward & finite)

    def settle_forward(self, c: int, rounding: np.ndarray) -> bool:
        """Clear column `c`'s forward failure when every differing output is within its rounding
        bound (`rounding.forward_rounding`: the absolute floor of an output whose terms cancel);
        whether it did."""
        failing = ~(self.fwd_rel[:, c] <= FORWARD_RTOL)
        error = np.abs(self.fwd_e[failing, c] - self.fwd_t[failing, c])
        if not (error <= SPREAD_SAFETY * rounding[failing]).all():
            return False
        self.fwd_rel[failing, c] = 0.0
        self.fwd_err[c] = float(_column_max(self.fwd_rel[:, c : c + 1])[0])
        self.bad_forward[c] = False
        self.bad_elsewhere[c] = self.bad_numeric[c]
        self.bad[c] = self.bad_elsewhere[c] | self.bad_torch[c]
        return True

    def gradient_only(self) -> np.ndarray:
        """The columns whose only failures are gradient entries (against torch or central differences)."""
        return np.flatnonzero(self.bad & ~self.bad_forward)

    def settle(self, c: int, rounding: np.ndarray) -> bool:
        """Clear column `c` when every gradient entry is within its rounding (`rounding`, per entry:
        how far float64 rounding moves torch's gradient): from torch's by `rounding.rounding_only`,
        from central differences by their tolerance plus that much; whether it did."""
        e, t = self.grad_e[:, c], self.grad_t[:, c]
        failing = ~(self.abs_t[:, c] <= self.allowed_t[:, c])
        if not rounding_only(e[failing], t[failing], rounding[failing]).all():
            return False
        if self.numeric:
            slack = self.allowed_n[:, c] + SPREAD_SAFETY * rounding
            if not ((self.abs_n[:, c] <= slack) & (self.abs_tn[:, c] <= slack)).all():
                return False
        self.bad_torch[c] = self.bad_numeric[c] = False
        self.bad_elsewhere[c] = self.bad_forward[c]
        self.bad[c] = self.bad_elsewhere[c]
        return True

    def fold_into(self, result: Any, upto: int) -> None:
        """Raise `result`'s maxima to this block's figures at columns 0..upto-1 (in point order,
        as Python's `max` does, so a NaN figure never replaces a number)."""
        for name, values in zip(FIGURES, self.figures):
            setattr(result, name, max([getattr(result, name), *values[:upto].tolist()]))

    def problems(self, c: int, labels: Sequence[str]) -> list[str]:
        """What is wrong at column `c`, in words (empty when nothing is)."""
        problems: list[str] = []
        fwd_e, fwd_t = self.fwd_e[:, c], self.fwd_t[:, c]
        grad_e, grad_t = self.grad_e[:, c], self.grad_t[:, c]
        fwd_err = float(self.fwd_err[c])
        if not fwd_err <= FORWARD_RTOL:
            j = _worst_output(self.fwd_rel[:, c])
            problems.append(
                f"forward: output {j} is {float(fwd_e[j])!r} but torch gives {float(fwd_t[j])!r} "
                f"(rel err {fwd_err:.3g} > {FORWARD_RTOL:g})"
            )
        abs_t, allowed_t = self.abs_t[:, c], self.allowed_t[:, c]
        for i in np.flatnonzero(~(abs_t <= allowed_t))[:3]:
            problems.append(
                f"gradient of {labels[i]}: engine {float(grad_e[i])!r}, torch {float(grad_t[i])!r} "
                f"(abs err {abs_t[i]:.3g} > allowed {allowed_t[i]:.3g})"
            )
        if not self.numeric:
            return problems
        grad_n, abs_n = self.grad_n[:, c], self.abs_n[:, c]
        allowed_n, abs_tn = self.allowed_n[:, c], self.abs_tn[:, c]
        for i in np.flatnonzero(~(abs_n <= allowed_n))[:3]:
            problems.append(
                f"gradient of {labels[i]}: engine {float(grad_e[i])!r}, "
                f"central differences {float(grad_n[i])!r} "
                f"(abs err {abs_n[i]:.3g} > allowed {allowed_n[i]:.3g})"
            )
        for i in np.flatnonzero(~(abs_tn <= allowed_n))[:1]:
            problems.append(
                f"reference disagreement: torch's gradient of {labels[i]} {float(grad_t[i])!r} vs central "
                f"differences {float(grad_n[i])!r} (abs err {abs_tn[i]:.3g} > allowed {allowed_n[i]:.3g})"
            )
        return problems


# The reductions below call the ufuncs' `reduce` directly: `ndarray.max` and `ndarray.any` go
# through a Python wrapper that costs about as much again on arrays this small.
_maximum, _any = np.maximum.reduce, np.logical_or.reduce


def _worst_output(rel: np.ndarray) -> int:
    """The output a failing forward check names: the first whose error is nan or inf (a nan
    output), else the one with the largest error."""
    bad = np.flatnonzero(~np.isfinite(rel))
    return int(bad[0]) if bad.size else int(np.argmax(rel))


def _column_max(x: np.ndarray) -> np.ndarray:
    """Each column's largest entry (NaN when it holds a NaN), 0 for no rows."""
    return _maximum(x, axis=0) if x.shape[0] else np.zeros(x.shape[1])


def worst_error(x: np.ndarray) -> float:
    """The largest of the errors `x`, inf when one is NaN (unlike numpy's nanmax), 0 for none."""
    if x.size == 0:
        return 0.0
    return float(np.inf) if np.isnan(x).any() else float(x.max())


def _column_nanmax(x: np.ndarray) -> np.ndarray:
    """Each column's largest entry, inf when it holds a NaN, 0 for no rows."""
    if x.shape[0] == 0:
        return np.zeros(x.shape[1])
    return np.where(_any(np.isnan(x), axis=0), np.inf, _maximum(x, axis=0))


def _any_column(x: np.ndarray) -> np.ndarray:
    return _any(x, axis=0)
