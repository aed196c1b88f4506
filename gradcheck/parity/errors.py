"""The parity check's tolerances, and its errors at many points in one numpy pass.

`PointErrors` compares the engine's forward values and gradients with torch's and with central
differences at m points at once (one column per point): the figures a `GraphCheck` keeps, which
points fail, and the records of what fails at a point (`gradcheck.parity.problem`). One pass over
all K points costs about what one point cost compared alone.

Against torch every entry is judged by its own rounding bound (`parity.bound`): a float64
evaluation of the entry errs by at most B, so the engine's and torch's differ by at most 2B,
"the rounding bound" of their difference, and an engine passes while it stays within
`BOUND_SAFETY` times that. A well-conditioned entry is allowed a few ulps, a difference of large
terms the rounding of those terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.tolerance import Tolerance
from gradcheck.parity.problem import FORWARD, GRADIENT, BoundKind, Problem, What

# How far beyond the rounding bound of the difference (twice each entry's first-order bound) an
# engine may be. The bound sums every rounding at its worst, so a correct engine measured far
# inside it: over 1.2 million random scalar and tensor graphs of ten engines (minigrad, torch,
# micrograd, JAX, HIPS autograd and the published engines of the lab) the largest multiple seen
# was 0.6 (`benchmarks/bench_sensitivity.py --false-alarms`); 4 leaves room for what first order
# leaves out and for formulas no measured engine spells.
BOUND_SAFETY = 4.0
# Hessian-vector products: the bound's model of the second backward pass is cruder (each
# contribution's terms taken from its size and the rates its operands move at), so this much
# more on top. Measured: over one-op graphs of every scalar op, 10,000 points each, the engines'
# worst error reached 1.9 times the bound (abs, HIPS autograd; atan2 1.6, pow 1.3:
# `benchmarks/op_accuracy.py`).
HVP_SAFETY = 4.0
# The engine-vs-torch tolerance a point's entries were judged by before the rounding bound:
# `classify` still uses it to find the coordinates where a failing engine differs grossly (a
# convention at a kink differs by the size of the derivative, far beyond any rounding).
TORCH_TOLERANCE = Tolerance(atol=1e-10, rtol=1e-9)
# Numerical gradients: the policy's tolerance times this factor, plus their own error estimate.
NUMERIC_SAFETY = 1e3
ERROR_ESTIMATE_SAFETY = 10.0
# Relative errors divide by the point's largest gradient entry, but never by less than this: a
# gradient that is zero up to rounding (x/x) has no meaningful relative error.
SCALE_FLOOR = 1e-8

# Entries this many ulps of their own size from torch's are taken as agreeing without computing
# their rounding bound (which costs torch passes). An entry that rounds at all is allowed about 4
# ulps or more (2 * BOUND_SAFETY times a bound of at least half an ulp); what this lets through
# unexamined is a difference of 1-2 ulps in an entry float64 computes exactly or nearly so (3% of
# the entries of random scalar graphs: benchmarks/bench_agreeing_ulps.py). No finding has been
# that small: the sensitivity benchmark's smallest bug, mul's derivative off by 1e-13, is 450
# ulps, and is still caught.
AGREEING_ULPS = 2.0
# Hessian-vector products are allowed HVP_SAFETY times more, so twice as many ulps here.
HVP_AGREEING_ULPS = 4.0
EPS = float(np.finfo(np.float64).eps)

# The GraphCheck maxima, in the order `PointErrors.figures` gives them.
FIGURES = (
    "max_forward_err",
    "max_abs_err_torch",
    "max_rel_err_torch",
    "max_bound_ratio",
    "max_abs_err_numeric",
    "max_rel_err_numeric",
    "max_rel_err_torch_numeric",
)


@dataclass(frozen=True)
class ExactJudgement:
    """One point's entries judged against the exact values (forward (F,), gradients (N,)) with the
    rounding bound of any correct evaluation (`parity.any_order`): which entries outside torch's
    rounding are also outside BOUND_SAFETY times that bound, and how far."""

    forward: np.ndarray
    grads: np.ndarray
    forward_bound: np.ndarray
    grad_bound: np.ndarray
    bad_forward: np.ndarray  # per output entry
    bad_grads: np.ndarray  # per gradient entry

    @property
    def passed(self) -> bool:
        return not (self.bad_forward.any() or self.bad_grads.any())


class PointErrors:
    """The engine's results (`fwd_e` (outputs, m), `grad_e` (inputs, m)) against the references
    at points `cols` (torch's `reference`, central differences `numeric` or None).

    Absolute errors are |engine - reference|; relative ones divide by max(1, the point's gradient
    scale (largest |torch| entry, at least SCALE_FLOOR)). Until `bound` gives the entries'
    rounding bounds, every difference from torch counts as outside them (`needs_bounds`: the
    bounds cost a torch pass, spent only on a block where something differs).
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
        self.cols = cols
        self.fwd_t = fwd_t = reference.forward[:, cols]
        self.grad_t = grad_t = reference.grads[:, cols]
        m = len(cols)

        abs_fwd = np.abs(fwd_t)
        self.fwd_scale = np.maximum(abs_fwd, 1e-3 * np.maximum(_column_max(abs_fwd), 1e-300))
        with np.errstate(over="ignore", invalid="ignore"):
            self.fwd_diff = self.difference(fwd_e, fwd_t)
            self.fwd_rel = self.fwd_diff / self.fwd_scale
        fwd_err = _column_max(self.fwd_rel) if fwd_t.size else np.zeros(m)
        self.fwd_err = np.where(np.isfinite(fwd_err), fwd_err, np.inf)

        scale = np.maximum(_column_max(np.abs(grad_t)) if grad_t.size else np.zeros(m), SCALE_FLOOR)
        self.unit = unit = np.maximum(scale, 1.0)
        with np.errstate(invalid="ignore"):
            self.abs_t = self.difference(grad_e, grad_t)
        self.fwd_bound = np.zeros_like(self.fwd_diff)
        self.grad_bound = np.zeros_like(self.abs_t)
        self.bounded = False
        self.exact: dict[int, ExactJudgement] = {}  # columns judged again against the exact values

        self.numeric = numeric is not None
        if self.numeric:
            self.grad_n = grad_n = numeric.grads[:, cols]
            self.allowed_n = ERROR_ESTIMATE_SAFETY * numeric.error[:, cols] + NUMERIC_SAFETY * (
                policy.atol * unit + policy.rtol * np.abs(grad_n)
            )
            self.abs_n = np.abs(grad_e - grad_n)
            self.abs_tn = np.abs(grad_t - grad_n)
        self._judge()

    @staticmethod
    def difference(engine: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """|engine - reference| per entry (nan where either is nan, or both the same infinity)."""
        return np.abs(engine - reference)

    def allowance(self, bound: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """What an entry with rounding bound `bound` may differ by (BOUND_SAFETY times it)."""
        return BOUND_SAFETY * bound

    def ratio(self, difference: np.ndarray, bound: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """A difference as a multiple of its entry's bound (`max_bound_ratio`, the margin figure)."""
        return bound_ratio(difference, bound)

    def needs_bounds(self) -> bool:
        """Whether some point fails before the rounding bounds are known (any difference from
        torch, or beyond the numeric tolerance)."""
        return not self.bounded and bool(self.bad.any())

    def agrees_to_ulps(self, ulps: float = AGREEING_ULPS) -> bool:
        """Whether every entry is within `ulps` of its own size from torch's and nothing fails
        against central differences: then the block passes as it is, its rounding bounds not
        computed (and its figures hold no ratio to them)."""
        if self.bounded or self.bad_numeric.any():
            return False
        if not (within_ulps(self.fwd_diff, self.fwd_t, ulps) and within_ulps(self.abs_t, self.grad_t, ulps)):
            return False
        self.bounded = True
        self.allowed_f, self.allowed_t = ulps * EPS * np.abs(self.fwd_t), ulps * EPS * np.abs(self.grad_t)
        self.fwd_ratio, self.grad_ratio = np.zeros_like(self.fwd_diff), np.zeros_like(self.abs_t)
        self.figures[3] = np.zeros(len(self.cols))
        self.bad_forward = self.bad_torch = np.zeros(len(self.cols), dtype=bool)
        self.bad = self.bad_elsewhere = self.bad_numeric
        return True

    def bound(self, forward: np.ndarray, grads: np.ndarray) -> None:
        """Judge again with each entry's rounding bound (`bound.entry_bounds` at these points:
        one evaluation's, (outputs, m) and (inputs, m)); the difference's is twice it."""
        self.fwd_bound, self.grad_bound = 2.0 * forward, 2.0 * grads
        self.bounded = True
        self._judge()

    def outside_rounding_only(self, c: int) -> bool:
        """Whether column `c` fails only against torch, by finite numbers beyond torch's rounding
        (not against central differences, and with torch's pattern of nan and inf): what another
        correct evaluation order could explain."""
        if not self.bad[c] or self.bad_numeric[c]:
            return False
        same = np.isfinite(self.fwd_e[:, c]) == np.isfinite(self.fwd_t[:, c])
        same_grads = np.isfinite(self.grad_e[:, c]) == np.isfinite(self.grad_t[:, c])
        differences = np.concatenate([self.fwd_diff[:, c], self.abs_t[:, c]])
        return bool(same.all() and same_grads.all() and np.isfinite(differences).all())

    def judge_by_exact(
        self,
        c: int,
        forward: np.ndarray,
        grads: np.ndarray,
        forward_bound: np.ndarray,
        grad_bound: np.ndarray,
    ) -> bool:
        """Judge column `c`'s entries outside torch's rounding again, against the exact values
        with the rounding bound of any correct evaluation (one evaluation's, so BOUND_SAFETY times
        it is allowed): True, and the column passes, when every one is within it."""
        with np.errstate(invalid="ignore"):
            outside_f = ~(self.fwd_diff[:, c] <= self.allowed_f[:, c])
            outside_t = ~(self.abs_t[:, c] <= self.allowed_t[:, c])
            bad_f = outside_f & ~(np.abs(self.fwd_e[:, c] - forward) <= BOUND_SAFETY * forward_bound)
            bad_g = outside_t & ~(np.abs(self.grad_e[:, c] - grads) <= BOUND_SAFETY * grad_bound)
        judgement = ExactJudgement(forward, grads, forward_bound, grad_bound, bad_f, bad_g)
        self.exact[c] = judgement
        ratios = [
            bound_ratio(np.abs(self.fwd_e[outside_f, c] - forward[outside_f]), forward_bound[outside_f])
        ]
        ratios.append(
            bound_ratio(np.abs(self.grad_e[outside_t, c] - grads[outside_t]), grad_bound[outside_t])
        )
        self.figures[3][c] = max(worst_error(r) for r in ratios)  # against the bound the verdict used
        if judgement.passed:
            self.bad_forward[c] = self.bad_torch[c] = False
            self.bad[c] = self.bad_elsewhere[c] = bool(self.bad_numeric[c])
        return judgement.passed

    def _judge(self) -> None:
        with np.errstate(invalid="ignore", divide="ignore"):
            self.allowed_f = self.allowance(self.fwd_bound, self.fwd_t)
            self.bad_forward = _any_column(~(self.fwd_diff <= self.allowed_f))
            self.allowed_t = self.allowance(self.grad_bound, self.grad_t)
            self.bad_torch = _any_column(~(self.abs_t <= self.allowed_t))
            self.fwd_ratio = self.ratio(self.fwd_diff, self.fwd_bound, self.fwd_t)
            self.grad_ratio = self.ratio(self.abs_t, self.grad_bound, self.grad_t)
        bad = np.zeros(len(self.cols), dtype=bool)
        abs_t_max = _column_nanmax(self.abs_t)
        ratio = np.maximum(_column_nanmax(self.fwd_ratio), _column_nanmax(self.grad_ratio))
        figures = [self.fwd_err, abs_t_max, abs_t_max / self.unit, ratio]
        if self.numeric:
            slack = self.allowed_n + self.allowed_t  # an entry is computed to its own rounding at best
            abs_n_max = _column_nanmax(self.abs_n)
            figures += [abs_n_max, abs_n_max / self.unit, _column_nanmax(self.abs_tn) / self.unit]
            bad |= _any_column(~(self.abs_n <= slack))
            bad |= _any_column(~(self.abs_tn <= slack))
        self.figures = figures
        self.bad_numeric = bad  # against central differences
        self.bad_elsewhere = bad | self.bad_forward  # forward values, or against central differences
        self.bad = self.bad_elsewhere | self.bad_torch

    def excess(self) -> np.ndarray:
        """Per column, how far it is outside its allowance: the largest ratio of an error to the
        error allowed (forward values and gradients against torch: BOUND_SAFETY times their
        rounding bound; against central differences: their tolerance plus that); inf where a
        number is not finite on one side only. Above 1 where a column fails."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratios = [
                _column_nanmax(bound_ratio(self.fwd_diff, self.allowed_f)),
                _column_nanmax(bound_ratio(self.abs_t, self.allowed_t)),
            ]
            if self.numeric:
                slack = self.allowed_n + self.allowed_t
                ratios.append(_column_nanmax(bound_ratio(self.abs_n, slack)))
                ratios.append(_column_nanmax(bound_ratio(self.abs_tn, slack)))
            excess = np.maximum.reduce(ratios)
            for c, judged in self.exact.items():  # judged against the exact values: by that bound
                forward = bound_ratio(
                    np.abs(self.fwd_e[:, c] - judged.forward), BOUND_SAFETY * judged.forward_bound
                )
                grads = bound_ratio(
                    np.abs(self.grad_e[:, c] - judged.grads), BOUND_SAFETY * judged.grad_bound
                )
                against_torch = [ratios[2][c], ratios[3][c]] if self.numeric else []
                excess[c] = max(
                    worst_error(forward[judged.bad_forward]),
                    worst_error(grads[judged.bad_grads]),
                    *against_torch,
                )
        return excess

    def fold_into(self, result: Any, upto: int) -> None:
        """Raise `result`'s maxima to this block's figures at columns 0..upto-1 (in point order,
        as Python's `max` does, so a NaN figure never replaces a number)."""
        for name, values in zip(FIGURES, self.figures):
            setattr(result, name, max([getattr(result, name), *values[:upto].tolist()]))

    def problems(self, c: int, labels: Sequence[str]) -> list[Problem]:
        """What is wrong at column `c`, as records (empty when nothing is)."""
        problems: list[Problem] = []
        fwd_e, fwd_t = self.fwd_e[:, c], self.fwd_t[:, c]
        grad_e, grad_t = self.grad_e[:, c], self.grad_t[:, c]
        judged = self.exact.get(c)
        if judged is not None:
            return self._exact_problems(judged, c, labels) + self._numeric_problems(c, labels)
        failing = np.flatnonzero(~(self.fwd_diff[:, c] <= self.allowed_f[:, c]))
        if failing.size:
            j = failing[_worst_output(self.fwd_diff[failing, c], self.fwd_ratio[failing, c])]
            problems.append(
                Problem(
                    What.FORWARD,
                    FORWARD,
                    output=int(j),
                    engine=float(fwd_e[j]),
                    reference=float(fwd_t[j]),
                    error=float(self.fwd_diff[j, c]),
                    relative=float(self.fwd_rel[j, c]),
                    allowed=float(self.allowed_f[j, c]),
                    bound=float(self.fwd_bound[j, c]),
                    bound_kind=BoundKind.TORCH_ROUNDING,
                    safety=BOUND_SAFETY,
                )
            )
        abs_t, allowed_t = self.abs_t[:, c], self.allowed_t[:, c]
        for i in np.flatnonzero(~(abs_t <= allowed_t))[:3]:
            problems.append(
                Problem(
                    What.GRADIENT,
                    GRADIENT,
                    input=labels[i],
                    engine=float(grad_e[i]),
                    reference=float(grad_t[i]),
                    error=float(abs_t[i]),
                    allowed=float(allowed_t[i]),
                    bound=float(self.grad_bound[i, c]),
                    bound_kind=BoundKind.TORCH_ROUNDING,
                    safety=BOUND_SAFETY,
                )
            )
        return problems + self._numeric_problems(c, labels)

    def _exact_problems(self, judged: ExactJudgement, c: int, labels: Sequence[str]) -> list[Problem]:
        """The entries that failed against the exact values, as records (the bound of any
        evaluation order, `BoundKind.ANY_ORDER`)."""
        problems: list[Problem] = []
        fwd_e, fwd_t = self.fwd_e[:, c], self.fwd_t[:, c]
        for j in np.flatnonzero(judged.bad_forward)[:1]:
            bound = float(judged.forward_bound[j])
            problems.append(
                Problem(
                    What.FORWARD,
                    FORWARD,
                    output=int(j),
                    engine=float(fwd_e[j]),
                    reference=float(fwd_t[j]),
                    exact=float(judged.forward[j]),
                    error=abs(float(fwd_e[j]) - float(judged.forward[j])),
                    relative=float(self.fwd_rel[j, c]),
                    allowed=BOUND_SAFETY * bound,
                    bound=bound,
                    bound_kind=BoundKind.ANY_ORDER,
                    safety=BOUND_SAFETY,
                )
            )
        grad_e, grad_t = self.grad_e[:, c], self.grad_t[:, c]
        for i in np.flatnonzero(judged.bad_grads)[:3]:
            bound = float(judged.grad_bound[i])
            problems.append(
                Problem(
                    What.GRADIENT,
                    GRADIENT,
                    input=labels[i],
                    engine=float(grad_e[i]),
                    reference=float(grad_t[i]),
                    exact=float(judged.grads[i]),
                    error=abs(float(grad_e[i]) - float(judged.grads[i])),
                    allowed=BOUND_SAFETY * bound,
                    bound=bound,
                    bound_kind=BoundKind.ANY_ORDER,
                    safety=BOUND_SAFETY,
                )
            )
        return problems

    def _numeric_problems(self, c: int, labels: Sequence[str]) -> list[Problem]:
        """The entries that fail against central differences (and torch's against them), as records."""
        if not self.numeric:
            return []
        problems: list[Problem] = []
        grad_e, grad_t = self.grad_e[:, c], self.grad_t[:, c]
        allowed_t = self.allowed_t[:, c]
        grad_n, abs_n = self.grad_n[:, c], self.abs_n[:, c]
        allowed_n, abs_tn = self.allowed_n[:, c] + allowed_t, self.abs_tn[:, c]
        for i in np.flatnonzero(~(abs_n <= allowed_n))[:3]:
            problems.append(
                Problem(
                    What.NUMERIC,
                    GRADIENT,
                    input=labels[i],
                    engine=float(grad_e[i]),
                    numeric=float(grad_n[i]),
                    error=float(abs_n[i]),
                    allowed=float(allowed_n[i]),
                )
            )
        for i in np.flatnonzero(~(abs_tn <= allowed_n))[:1]:
            problems.append(
                Problem(
                    What.REFERENCES_DISAGREE,
                    GRADIENT,
                    input=labels[i],
                    reference=float(grad_t[i]),
                    numeric=float(grad_n[i]),
                    error=float(abs_tn[i]),
                    allowed=float(allowed_n[i]),
                )
            )
        return problems


def within_ulps(difference: np.ndarray, reference: np.ndarray, ulps: float) -> bool:
    """Whether every difference is at most `ulps` ulps of its reference entry's size (a nan
    difference never is)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return bool((difference <= ulps * EPS * np.abs(reference)).all())


def bound_ratio(error: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """error / bound, 0 where the error is 0 and inf where only the bound is."""
    ratio = np.where(bound > 0, error / np.where(bound > 0, bound, 1.0), np.inf)
    return np.where(error == 0, 0.0, ratio)


# The reductions below call the ufuncs' `reduce` directly: `ndarray.max` and `ndarray.any` go
# through a Python wrapper that costs about as much again on arrays this small.
_maximum, _any = np.maximum.reduce, np.logical_or.reduce


def _worst_output(diff: np.ndarray, ratio: np.ndarray) -> int:
    """Which of the failing outputs a forward problem names: the first whose difference is nan or
    inf (a nan output), else the one furthest outside its rounding bound."""
    bad = np.flatnonzero(~np.isfinite(diff))
    return int(bad[0]) if bad.size else int(np.argmax(ratio))


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
