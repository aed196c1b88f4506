"""The errors of an engine's answers against the exact values at many points, torch's beside them.

`ExactErrors` is `errors.PointErrors` with the exact values as the reference: within
`AGREEING_ULPS` of the exact value an entry passes as it is; otherwise it is allowed
`BOUND_SAFETY` times the rounding bound of any correct evaluation (`parity.any_order`), plus a few
of the precision's smallest subnormals per node. Torch's answers at the same points are judged by
the same allowance, so that a failing entry says who is off (`Off`). Used by
`parity.against_exact`, which says how the check runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gradcheck.checker.tolerance import Tolerance
from gradcheck.graphs.ir import Graph
from gradcheck.parity.errors import AGREEING_ULPS, BOUND_SAFETY, EPS, PointErrors, bound_ratio
from gradcheck.parity.problem import FORWARD, GRADIENT, BoundKind, Off, Problem, What

EPS32 = float(np.finfo(np.float32).eps)
# The smallest subnormal of each precision, and how many of them per node the bound leaves room
# for: it models no underflow (a product of two tiny nodes rounds to a subnormal or to 0).
SMALLEST_SUBNORMAL = {"float64": 2.0**-1074, "float32": 2.0**-149}
UNDERFLOW_ULPS = 4.0
FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Precision:
    """What an evaluation in one precision is allowed: its unit roundoff's ulp (`unit`) and the
    underflow room per graph (`floor`), and whether its bounds are float32's."""

    unit: float
    floor: float
    float32: bool

    @classmethod
    def of(cls, dtype: str, graph: Graph) -> Precision:
        unit = EPS32 if dtype == "float32" else EPS
        floor = UNDERFLOW_ULPS * SMALLEST_SUBNORMAL[dtype] * (len(graph.nodes) + 1)
        return cls(unit, floor, dtype == "float32")


def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| per entry, 0 where both are the same infinity or both nan (the same IEEE answer)."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - b)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return np.where(same, 0.0, d) if not np.isfinite(d).all() else d


def in_float32(exact: np.ndarray) -> np.ndarray:
    """Exact values as float32 holds them: beyond its range, an infinity of their sign."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(exact) & (np.abs(exact) > FLOAT32_MAX), np.sign(exact) * np.inf, exact)


class ExactErrors(PointErrors):
    """The engine's answers against the exact values (the `reference` of `PointErrors`), each
    entry allowed BOUND_SAFETY times the bound of any correct evaluation (`bound_any_order`), and
    torch's answers at the same points (`torch`, shaped like the reference) judged by the same
    allowance: who is off (`Off`)."""

    def __init__(
        self,
        policy: Tolerance,
        fwd_e: np.ndarray,
        grad_e: np.ndarray,
        reference: Any,
        numeric: Any,
        cols: np.ndarray,
        *,
        torch: Any,
        precision: Precision,
    ) -> None:
        self.precision = precision
        super().__init__(policy, fwd_e, grad_e, reference, numeric, cols)
        self.torch_fwd, self.torch_grads = torch.forward[:, cols], torch.grads[:, cols]
        self.torch_fwd_diff = distance(self.torch_fwd, self.fwd_t)
        self.torch_abs = distance(self.torch_grads, self.grad_t)

    @staticmethod
    def difference(engine: np.ndarray, reference: np.ndarray) -> np.ndarray:
        return distance(engine, reference)

    def agrees_to_ulps(self, ulps: float = AGREEING_ULPS) -> bool:
        """`PointErrors.agrees_to_ulps` in ulps of the precision checked, against the exact values."""
        return super().agrees_to_ulps(ulps * self.precision.unit / EPS)

    def beyond_ulps(self) -> np.ndarray:
        """The columns where the engine's or torch's answer is not within AGREEING_ULPS of the
        exact value, or the engine's disagrees with central differences: those that need their
        entries' bounds (the others pass as they are)."""
        ulps = AGREEING_ULPS * self.precision.unit
        with np.errstate(invalid="ignore", over="ignore"):
            close = [
                (d <= ulps * np.abs(x)).all(axis=0)
                for d, x in (
                    (self.fwd_diff, self.fwd_t),
                    (self.abs_t, self.grad_t),
                    (self.torch_fwd_diff, self.fwd_t),
                    (self.torch_abs, self.grad_t),
                )
            ]
        return np.flatnonzero(~np.logical_and.reduce(close) | self.bad_numeric)

    def floor(self, reference: np.ndarray) -> np.ndarray:
        """What any entry may differ by, whatever its bound: AGREEING_ULPS of the exact value."""
        return AGREEING_ULPS * self.precision.unit * np.abs(reference)

    def allowance(self, bound: np.ndarray, reference: np.ndarray) -> np.ndarray:
        return np.maximum(BOUND_SAFETY * bound, self.floor(reference))

    def ratio(self, difference: np.ndarray, bound: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """Against the bound itself, 0 within AGREEING_ULPS (such an entry passes as it is: a
        multiple of a bound far below an ulp would say nothing of its margin)."""
        return np.where(difference <= self.floor(reference), 0.0, bound_ratio(difference, bound))

    def bound_any_order(self, columns: np.ndarray, forward: np.ndarray, grads: np.ndarray) -> None:
        """Judge again with the bound of any correct evaluation of each entry at `columns`
        (`any_order_bounds` there, one evaluation's distance from the exact value) plus the
        underflow room; the other columns' entries are within AGREEING_ULPS of the exact value
        and pass as they are (bound 0). A bound that is not a number leaves its entry unjudged
        (allowed anything)."""
        floor = self.precision.floor
        self.fwd_bound, self.grad_bound = np.zeros_like(self.fwd_diff), np.zeros_like(self.abs_t)
        self.fwd_bound[:, columns] = np.nan_to_num(forward, nan=np.inf) + floor
        self.grad_bound[:, columns] = np.nan_to_num(grads, nan=np.inf) + floor
        self.bounded = True
        self._judge()

    def torch_outside(self) -> tuple[np.ndarray, np.ndarray]:
        """Torch's entries outside their allowance: (outputs, m) and (inputs, m)."""
        with np.errstate(invalid="ignore"):
            return ~(self.torch_fwd_diff <= self.allowed_f), ~(self.torch_abs <= self.allowed_t)

    def torch_excess(self) -> np.ndarray:
        """Per column, how far torch is outside its allowance (0 where it is within)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            forward = bound_ratio(self.torch_fwd_diff, self.allowed_f)
            grads = bound_ratio(self.torch_abs, self.allowed_t)
        ratios = np.concatenate([np.nan_to_num(forward, nan=np.inf), np.nan_to_num(grads, nan=np.inf)])
        return np.where(ratios > 1.0, ratios, 0.0).max(axis=0, initial=0.0)

    def problems(self, c: int, labels: Sequence[str]) -> list[Problem]:
        """The engine's entries outside their allowance at column `c`, each saying whether torch
        is off too, then those against central differences."""
        torch_f, torch_g = self.torch_outside()
        problems: list[Problem] = []
        failing = np.flatnonzero(~(self.fwd_diff[:, c] <= self.allowed_f[:, c]))
        if failing.size:
            j = int(failing[np.argmax(np.nan_to_num(self.fwd_ratio[failing, c], nan=np.inf))])
            off = Off.BOTH if torch_f[j, c] else Off.ENGINE
            problems.append(self._entry(What.FORWARD, c, j, self.fwd_e, self.fwd_diff, off))
        for i in np.flatnonzero(~(self.abs_t[:, c] <= self.allowed_t[:, c]))[:3]:
            off = Off.BOTH if torch_g[i, c] else Off.ENGINE
            problems.append(self._entry(What.GRADIENT, c, int(i), self.grad_e, self.abs_t, off, labels))
        return problems + [self._exact_beside(p, c, labels) for p in self._numeric_problems(c, labels)]

    def _exact_beside(self, p: Problem, c: int, labels: Sequence[str]) -> Problem:
        """A disagreement of the references as this check has them: the exact gradient against
        central differences, torch's beside it."""
        if p.what is not What.REFERENCES_DISAGREE:
            return p
        torch = float(self.torch_grads[list(labels).index(p.input), c])
        return replace(p, exact=p.reference, reference=torch)

    def torch_problems(self, c: int, labels: Sequence[str]) -> list[Problem]:
        """Torch's entries outside their allowance at column `c` (`Off.TORCH`)."""
        torch_f, torch_g = self.torch_outside()
        problems = [
            self._entry(What.FORWARD, c, int(j), self.torch_fwd, self.torch_fwd_diff, Off.TORCH)
            for j in np.flatnonzero(torch_f[:, c])[:1]
        ]
        problems += [
            self._entry(What.GRADIENT, c, int(i), self.torch_grads, self.torch_abs, Off.TORCH, labels)
            for i in np.flatnonzero(torch_g[:, c])[:3]
        ]
        return problems

    def _entry(
        self,
        what: What,
        c: int,
        e: int,
        judged: np.ndarray,
        error: np.ndarray,
        off: Off,
        labels: Sequence[str] = (),
    ) -> Problem:
        """Entry `e` of column `c` as a record: the engine's, torch's and the exact numbers, the
        error of the answer judged (`judged`, the engine's or torch's), its allowance and bound."""
        forward = what is What.FORWARD
        engine = self.fwd_e if forward else self.grad_e
        torch = self.torch_fwd if forward else self.torch_grads
        exact = self.fwd_t if forward else self.grad_t
        bound = self.fwd_bound if forward else self.grad_bound
        allowed = self.allowed_f if forward else self.allowed_t
        relative = None
        if forward:
            with np.errstate(invalid="ignore", divide="ignore"):
                relative = float(error[e, c] / self.fwd_scale[e, c])
        return Problem(
            what,
            FORWARD if forward else GRADIENT,
            output=e if forward else None,
            input=None if forward else labels[e],
            engine=float(engine[e, c]),
            reference=float(torch[e, c]),
            exact=float(exact[e, c]),
            error=float(error[e, c]),
            relative=relative,
            allowed=float(allowed[e, c]),
            bound=float(bound[e, c]),
            bound_kind=BoundKind.ANY_ORDER,
            safety=BOUND_SAFETY,
            off=off,
        )
