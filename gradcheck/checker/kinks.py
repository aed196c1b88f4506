"""Kink awareness: is the function differentiable around this point, or is there a kink nearby?

Like ∇Fuzz, we probe a small neighbourhood instead of trusting one difference. Along a direction
u we compare the one-sided slopes (F(x+ru) - F(x))/r and (F(x) - F(x-ru))/r at radii
r = radius, radius/10, ..., radius/10^4. For a smooth F their gap is about r·F'' and so shrinks
tenfold with r; at a kink it stays put (the left and right derivatives differ), and at a jump the
change in F itself does not shrink with r. Outputs turning NaN/inf nearby mark a domain edge.

At a kink at the point itself no single number is the derivative: the engine's slope is judged
against the two one-sided derivatives instead (`OneSided`). A slope between them (either one, or a
Clarke subgradient such as torch's relu'(0) = 0 and abs'(0) = 0) is valid; any other is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.flat import FlatFunction
from gradcheck.checker.numerical import one_sided_column
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import load_engine

DEFAULT_RADIUS = 1e-3
SCALES = 5
#: A gap still at least this fraction of the gap at ten times the radius means "not shrinking".
PERSIST = 0.3
#: Slopes differing by less than this (relative to 1 + |slope|) count as equal.
SLOPE_TOL = 1e-6
_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Differentiability:
    """Verdict of a neighbourhood probe; truthy when F is smooth within `radius` of x."""

    smooth: bool
    kind: str  # "smooth", "kink", "jump", "domain edge" or "non-finite value" (NaN/inf at x itself)
    coordinate: int | None  # flat input coordinate probed (None for a random direction)
    nearest: float | None  # smallest probe radius at which the non-smoothness still showed
    left_slope: float | None
    right_slope: float | None
    radius: float

    def __bool__(self) -> bool:
        return self.smooth

    @property
    def at_point(self) -> bool:
        """Non-smooth down to the smallest probe radius: not differentiable at x itself."""
        return (
            not self.smooth and self.nearest is not None and self.nearest <= self.radius / 10 ** (SCALES - 1)
        )

    def describe(self) -> str:
        if self.smooth:
            return f"differentiable: no kink, jump or domain edge within ±{self.radius:g}"
        where = "at this point" if self.at_point else f"within ±{self.nearest:g} of this point"
        text = f"not differentiable here: {self.kind} {where}"
        if self.left_slope is not None and self.right_slope is not None:
            text += f" (left slope {self.left_slope:.6g}, right slope {self.right_slope:.6g})"
        return text


_SMOOTH = Differentiability(True, "smooth", None, None, None, None, DEFAULT_RADIUS)


def probe_direction(
    func: FlatFunction, u: np.ndarray, radius: float, coordinate: int | None = None
) -> Differentiability:
    """Probe F along direction u (any norm; radii are in units of u's max-norm)."""
    u = u / float(np.max(np.abs(u)))
    f0 = func.fx
    if not np.all(np.isfinite(f0)):
        return Differentiability(False, "non-finite value", coordinate, 0.0, None, None, radius)
    radii = [radius / 10.0**k for k in range(SCALES)]
    gaps, jumps, slopes = [], [], []
    for r in radii:
        fp, fm = func(func.x + r * u), func(func.x - r * u)
        if not (np.all(np.isfinite(fp)) and np.all(np.isfinite(fm))):
            return Differentiability(False, "domain edge", coordinate, r, None, None, radius)
        with np.errstate(invalid="ignore"):
            right, left = (fp - f0) / r, (f0 - fm) / r
            gap = np.abs(right - left)
            noise = 100.0 * _EPS * (1.0 + np.abs(f0)) / r + SLOPE_TOL * (
                1.0 + np.maximum(np.abs(right), np.abs(left))
            )
            worst = int(np.nanargmax(gap / noise)) if gap.size else 0
        gaps.append((float(gap[worst]), float(noise[worst]), worst))
        jumps.append(np.abs(fp - f0) + np.abs(fm - f0))
        slopes.append((float(left[worst]), float(right[worst])))
    nearest = None
    kind = "smooth"
    worst_slopes = (None, None)
    for k in range(1, SCALES):
        gap, noise, _ = gaps[k]
        if gap > noise and gap > PERSIST * gaps[k - 1][0]:
            nearest, kind, worst_slopes = radii[k], "kink", slopes[k]
        with np.errstate(invalid="ignore"):
            jumped = (jumps[k] > 0.5 * jumps[k - 1]) & (jumps[k] > 1e3 * _EPS * (1.0 + np.abs(f0)) + 1e-9)
        if np.any(jumped):
            nearest, kind, worst_slopes = radii[k], "jump", (None, None)
    if nearest is None:
        return Differentiability(True, "smooth", coordinate, None, None, None, radius)
    return Differentiability(False, kind, coordinate, nearest, worst_slopes[0], worst_slopes[1], radius)


def probe(
    func: FlatFunction,
    coordinates: Sequence[int] | None = None,
    radius: float = DEFAULT_RADIUS,
    directions: int = 16,
    seed: int = 0,
) -> Differentiability:
    """Probe the given coordinates (default: all if few, else random directions); first problem wins."""
    if func.n == 0:
        return _SMOOTH
    scale = max(1.0, float(np.max(np.abs(func.x))))
    if coordinates is None and func.n <= directions:
        coordinates = range(func.n)
    if coordinates is not None:
        for i in coordinates:
            u = np.zeros(func.n)
            u[i] = 1.0
            verdict = probe_direction(func, u, radius * max(1.0, abs(float(func.x[i]))), int(i))
            if not verdict:
                return verdict
        return Differentiability(True, "smooth", None, None, None, None, radius)
    rng = np.random.default_rng(seed)
    for _ in range(directions):
        verdict = probe_direction(func, rng.standard_normal(func.n), radius * scale)
        if not verdict:
            return verdict
    return Differentiability(True, "smooth", None, None, None, None, radius)


def is_differentiable_at(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    radius: float = DEFAULT_RADIUS,
    coordinates: Sequence[int] | None = None,
    directions: int = 16,
    seed: int = 0,
    engine: str | EngineAdapter = "minigrad",
) -> Differentiability:
    """Whether f(*inputs) is smooth within ±radius (relative to max(1, |x|)) of `inputs`.

    `coordinates` are flat input positions (inputs concatenated in C order) to probe one by one;
    by default every coordinate when there are at most `directions` of them, otherwise
    `directions` random directions. Returns a `Differentiability` (truthy when smooth) whose
    `describe()` says what was found: a kink (left and right slopes differ), a jump or a domain
    edge, and how close to the point.
    """
    return probe(FlatFunction(f, inputs, load_engine(engine)), coordinates, radius, directions, seed)


@dataclass(frozen=True)
class OneSided:
    """A Jacobian column's one-sided derivatives at x (one entry per output) and their error."""

    left: np.ndarray
    right: np.ndarray
    error: np.ndarray

    def admits(self, slopes: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Which `slopes` lie between the left and the right derivative, within `allowed` and the
        estimates' own error: a valid derivative at a kink."""
        low, high = np.minimum(self.left, self.right), np.maximum(self.left, self.right)
        slack = allowed + 2.0 * self.error
        with np.errstate(invalid="ignore"):
            return np.isfinite(slack) & (slopes >= low - slack) & (slopes <= high + slack)

    def describe(self, row: int) -> str:
        return f"left slope {self.left[row]:.6g}, right slope {self.right[row]:.6g}"


def one_sided(func: FlatFunction, i: int) -> OneSided:
    """Column i's derivatives from the left and from the right of x, extrapolated."""
    left, right = one_sided_column(func, i, -1), one_sided_column(func, i, +1)
    return OneSided(left.value, right.value, np.maximum(left.error, right.error))


def judge_kinks(
    func: FlatFunction,
    analytical: np.ndarray,
    numerical: np.ndarray,
    failing: np.ndarray,
    allowed: Callable[[np.ndarray, float], np.ndarray],
    verdict: Callable[[int], Differentiability | None],
) -> tuple[dict[int, OneSided], list[str]]:
    """Entries of a failing Jacobian at a kink at the point: a slope between the one-sided
    derivatives is valid, so it is cleared in `failing` and put in `numerical` (a random cotangent
    check then compares against it), with a note. Returns each kinked column's one-sided
    derivatives (for the entries still failing) and the notes."""
    sides, notes = {}, []
    for i in map(int, np.nonzero(failing.any(axis=0))[0]):
        kink = verdict(i)
        if kink is None or kink.kind != "kink" or not kink.at_point:
            continue
        sides[i] = side = one_sided(func, i)
        valid = failing[:, i] & side.admits(analytical[:, i], allowed(side.left, 1.0))
        failing[:, i] &= ~valid
        numerical[valid, i] = analytical[valid, i]
        for r in np.nonzero(valid)[0][:1]:
            j, index = func.locate_input(i)
            notes.append(
                f"input {j}{list(index) if index else ''} is at a kink ({side.describe(r)}): the slope "
                f"{float(analytical[r, i])!r} lies between them, a valid derivative there (as torch's "
                "conventions at kinks are), not compared with the numerical one, which averages the sides"
            )
    return sides, notes
