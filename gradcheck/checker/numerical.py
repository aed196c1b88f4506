"""Numerical differentiation, the one module for it: central differences and the fourth-order
stencil (the checker), Ridders-Richardson extrapolation (the oracle), and the batched Richardson
stencil with its error estimate (the numeric reference of the parity check).

The step for coordinate ``i`` is ``eps * max(1, |x_i|)``, and the divisor is the step actually
taken in floating point. See `flat.py` for how inputs and outputs are laid out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.flat import FlatFunction, Jacobian
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import load_engine

DEFAULT_EPS = 1e-6


def steps(x: np.ndarray, eps: float) -> np.ndarray:
    """The step per coordinate: eps scaled by the coordinate's magnitude when it exceeds 1."""
    return eps * np.maximum(1.0, np.abs(x))


def central_difference(func: FlatFunction, direction: np.ndarray, h: float) -> np.ndarray:
    """(F(x + h·u) - F(x - h·u)) / 2h for the flat function, a derivative along `direction`."""
    xp = func.x + h * direction
    xm = func.x - h * direction
    return (func(xp) - func(xm)) / (2.0 * h)


def jacobian_column(func: FlatFunction, i: int, eps: float) -> np.ndarray:
    """Column i of the Jacobian: central difference along coordinate i with the exact float step."""
    xi = func.x[i]
    h = float(steps(np.array([xi]), eps)[0])
    xp, xm = func.x.copy(), func.x.copy()
    xp[i] = xi + h
    xm[i] = xi - h
    taken = xp[i] - xm[i]  # the step the floats actually represent
    return (func(xp) - func(xm)) / taken


#: Step of the fourth-order stencil, relative to max(1, |x|): balances its h^4 truncation error
#: against rounding (about eps_machine·|F| / h), for ~1e-12 accuracy on order-one functions.
STENCIL_STEP = 2.0**-11


def stencil_column(func: FlatFunction, i: int, step: float = STENCIL_STEP) -> np.ndarray:
    """Column i by the fourth-order central stencil [1, -8, 0, 8, -1] / 12h (4 evaluations).

    Error about h^4·F^(5)/30 instead of central differences' h^2·F^(3)/6, so a step of ~5e-4 gives
    ~1e-12 where the plain central difference at 1e-6 gives ~1e-9.
    """
    xi = func.x[i]
    h = step * max(1.0, abs(float(xi)))
    points = []
    for k in (2.0, 1.0, -1.0, -2.0):
        x = func.x.copy()
        x[i] = xi + k * h
        points.append(func(x))
    far, near, near_m, far_m = points
    return (8.0 * (near - near_m) - (far - far_m)) / (12.0 * h)


def jacobian_matrix(func: FlatFunction, eps: float) -> np.ndarray:
    """The full (m, n) Jacobian by 2n evaluations."""
    matrix = np.empty((func.m, func.n))
    for i in range(func.n):
        matrix[:, i] = jacobian_column(func, i, eps)
    return matrix


def numerical_jacobian(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    eps: float = DEFAULT_EPS,
    engine: str | EngineAdapter = "minigrad",
) -> Jacobian:
    """The Jacobian of `f` at `inputs` by central differences: blocks J[k][j] (see `flat.py`)."""
    func = FlatFunction(f, inputs, load_engine(engine))
    return func.blocks(jacobian_matrix(func, eps))


def numerical_vjp(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    cotangent: Any,
    eps: float = DEFAULT_EPS,
    engine: str | EngineAdapter = "minigrad",
) -> tuple[np.ndarray, ...]:
    """cotangentᵀ·J by central differences: one float64 array per input, of that input's shape.

    `cotangent` is one array per output (a bare array or number when `f` has one output).
    """
    func = FlatFunction(f, inputs, load_engine(engine))
    v = func.join_outputs(cotangent, "cotangent")
    flat = np.array([v @ jacobian_column(func, i, eps) for i in range(func.n)])
    return func.split_inputs(flat)


def numerical_jvp(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    tangent: Any,
    eps: float = DEFAULT_EPS,
    engine: str | EngineAdapter = "minigrad",
) -> tuple[np.ndarray, ...]:
    """J·tangent by one central difference along the tangent: one array per output.

    The step is `eps * max(1, |x|_inf)` along the tangent scaled to unit max-norm.
    """
    func = FlatFunction(f, inputs, load_engine(engine))
    u = func.join_inputs(tangent, "tangent")
    scale = float(np.max(np.abs(u))) if u.size else 0.0
    if scale == 0.0:
        return func.split_outputs(np.zeros(func.m))
    h = eps * max(1.0, float(np.max(np.abs(func.x)))) / scale
    return func.split_outputs(central_difference(func, u, h))


# --- Ridders-Richardson extrapolation (the oracle's float64 stage) -----------------------------

#: First step, relative to max(1, |x|), of the Richardson tableau; each next step is half as long.
FIRST_STEP = 2.0**-6
#: Steps tried (the smallest is FIRST_STEP / 2**(LEVELS-1), about 1e-4 relative).
LEVELS = 8


@dataclass(frozen=True)
class Estimate:
    """A numerical derivative and, per entry, an estimate of its absolute error."""

    value: np.ndarray
    error: np.ndarray


def ridders(
    difference: Callable[[float], np.ndarray], h0: float, levels: int = LEVELS, power: int = 2
) -> Estimate:
    """Extrapolate differences `difference(h)` to h -> 0 (Ridders' method, entrywise).

    Row k holds the difference at h0/2^k and its Richardson extrapolations cancelling h^2, h^4, ...
    for central differences (`power` 2: their error has even powers of h only), or h, h^2, ... for
    one-sided ones (`power` 1).
    The estimate kept for each entry is the one whose neighbours in the tableau agree best; that
    disagreement is the error estimate. Stops once going deeper only makes every entry worse.
    """
    previous = [np.asarray(difference(h0), dtype=np.float64)]
    best = previous[0].copy()
    error = np.full(best.shape, np.inf)
    for k in range(1, levels):
        row = [np.asarray(difference(h0 / 2.0**k), dtype=np.float64)]
        factor = 2.0**power
        for j in range(1, k + 1):
            row.append(row[j - 1] + (row[j - 1] - previous[j - 1]) / (factor - 1.0))
            factor *= 2.0**power
            with np.errstate(invalid="ignore"):
                spread = np.maximum(np.abs(row[j] - row[j - 1]), np.abs(row[j] - previous[j - 1]))
                better = spread <= error
            best = np.where(better, row[j], best)
            error = np.where(better, spread, error)
        with np.errstate(invalid="ignore"):
            worse = np.abs(row[k] - previous[k - 1]) >= 2.0 * error
        if np.all(worse):
            break
        previous = row
    return Estimate(best, error)


def _first_step(difference: Callable[[float], np.ndarray], h0: float) -> float:
    """Shrink the first step until the differences are finite (domain edges such as log near 0)."""
    for _ in range(6):
        if np.all(np.isfinite(difference(h0))):
            return h0
        h0 /= 16.0
    return h0


def richardson_column(func: FlatFunction, i: int, levels: int = LEVELS) -> Estimate:
    """Column i of the Jacobian (all outputs, one input coordinate) to high accuracy."""
    xi = func.x[i]
    scale = max(1.0, abs(float(xi)))

    def difference(h: float) -> np.ndarray:
        xp, xm = func.x.copy(), func.x.copy()
        xp[i] = xi + h
        xm[i] = xi - h
        return (func(xp) - func(xm)) / (xp[i] - xm[i])

    return ridders(difference, _first_step(difference, FIRST_STEP * scale), levels)


def one_sided_column(func: FlatFunction, i: int, side: int, levels: int = LEVELS) -> Estimate:
    """Column i's derivative from one side of x only (`side` +1: the right, -1: the left),
    extrapolated: at a kink it is the slope of the smooth piece on that side, where central
    differences average the two pieces."""
    xi = func.x[i]
    scale = max(1.0, abs(float(xi)))

    def difference(h: float) -> np.ndarray:
        x = func.x.copy()
        x[i] = xi + side * h
        return (func(x) - func.fx) / (x[i] - xi)

    return ridders(difference, _first_step(difference, FIRST_STEP * scale), levels, power=1)


def richardson_directional(func: FlatFunction, u: np.ndarray, levels: int = LEVELS) -> Estimate:
    """J·u (all outputs) to high accuracy, by differences along the direction u."""
    norm = float(np.max(np.abs(u))) if u.size else 0.0
    if norm == 0.0:
        return Estimate(np.zeros(func.m), np.zeros(func.m))
    scale = max(1.0, float(np.max(np.abs(func.x)))) / norm

    def difference(h: float) -> np.ndarray:
        return (func(func.x + h * u) - func(func.x - h * u)) / (2.0 * h)

    return ridders(difference, _first_step(difference, FIRST_STEP * scale), levels)


# --- the batched stencil of the parity check's numeric reference -------------------------------

#: Relative step of the batched stencil: h = BATCH_STEP * max(1, |x|); with Richardson
#: extrapolation its truncation error is O(h^4).
BATCH_STEP = 1e-5
#: Its offsets, in units of h: +-h, +-2h (the coarse pair) and +-h/4, +-h/2 (the fine pair).
BATCH_OFFSETS = np.array([1.0, -1.0, 2.0, -2.0, 0.25, -0.25, 0.5, -0.5])


def batch_stencil(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For n coordinates at K points, x (n, K): the stencil (1 + 8n, n, K) and the steps h (n, K).

    Row 0 is x itself; rows 1 + 8i ... 8 + 8i move coordinate i by each offset times h_i, so the
    whole stencil is evaluated in one vectorised pass.
    """
    n, k = x.shape
    h = BATCH_STEP * np.maximum(1.0, np.abs(x))
    r = len(BATCH_OFFSETS)
    stencil = np.broadcast_to(x, (1 + r * n, n, k)).copy()
    for i in range(n):
        stencil[1 + r * i : 1 + r * (i + 1), i, :] += BATCH_OFFSETS[:, None] * h[i]
    return stencil, h


def batch_extrapolate(f: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From a function's values f (1 + 8n, K) on `batch_stencil`'s rows, the coarse (+-h, +-2h) and
    fine (+-h/4, +-h/2) Richardson estimates of its derivative along each coordinate, each (n, K).
    The gap between them bounds the fine estimate's truncation error."""
    n, r = h.shape[0], len(BATCH_OFFSETS)
    by_offset = f[1:].reshape(n, r, -1)  # row 1 + r * i + j is coordinate i moved by offset j
    row = [by_offset[:, j] for j in range(r)]  # each (n, K)
    # values that are infinite on both sides of a step give nan: no estimate there, and no warning
    with np.errstate(invalid="ignore", over="ignore"):
        d_h = (row[0] - row[1]) / (2 * h)
        d_2h = (row[2] - row[3]) / (4 * h)
        d_q = (row[4] - row[5]) / (0.5 * h)
        d_half = (row[6] - row[7]) / h
        return (4 * d_h - d_2h) / 3, (4 * d_q - d_half) / 3  # Richardson: the h^2 terms cancel
