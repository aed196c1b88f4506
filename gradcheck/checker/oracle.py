"""An accurate numerical oracle: derivatives to ~3e-13 where central differences give ~3e-10.

Stable public entry point (the parity harness relies on it)::

    accurate_gradient(f, x, cotangent=None, *, method="auto") -> np.ndarray

* ``f`` is called as ``f(*xs)`` with one Python float per entry of the 1-D array ``x`` and returns
  a number or a sequence of numbers (a flat output vector). A function written with Value's API
  (``x.exp()``), which fails on floats, is called on minigrad Values instead.
* ``cotangent`` (same length as that output vector) weights the outputs; ``None`` means ``f``
  returns a single number and the weight is 1.
* The result is the float64 gradient of ``sum(cotangent * f(x))`` with respect to ``x``, shape
  ``x.shape``.
* ``method``: ``"richardson"`` (float64 central differences at 8 steps from 2^-6·max(1, |x|)
  down, extrapolated to step 0 with Ridders' tableau, which also yields an error estimate);
  ``"mpmath"`` (``f`` is called on `MPValue` numbers, 40-digit mpmath numbers that speak Value's
  API and that mpmath's functions accept, and differentiated by ``mpmath.diff``; ``f`` must be
  generic over number types); or ``"auto"`` (mpmath when ``f`` returns mpmath numbers and a
  float64 spot check agrees with them, Richardson otherwise).

Measured accuracy (``benchmarks/bench_gradcheck.py``): Richardson 2e-13 to 6e-13 relative on
smooth functions of every op family, 400x to 2000x better than central differences at 1e-6;
mpmath is exact to float64 rounding. Richardson's steps reach 0.03, so it degrades near kinks
of any derivative (``a * relu(a)`` near 0); gradcheck therefore consults it only after shorter
stencils disagree.

`richardson_column`, `richardson_directional` and `accurate_vjp` offer the same oracle over the
structured inputs of `gradcheck.checker.numerical` (floats, arrays, Values, Tensors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import minigrad
from gradcheck.checker.numerical import FlatFunction
from gradcheck.graphs.registry import REGISTRY

try:  # the `check` extra; without it the oracle falls back to float64 Richardson
    import mpmath
except ImportError:  # pragma: no cover - mpmath is a declared dependency of the checker
    mpmath = None

#: First step, relative to max(1, |x|), of the Richardson tableau; each next step is half as long.
FIRST_STEP = 2.0**-6
#: Steps tried (the smallest is FIRST_STEP / 2**(LEVELS-1), about 1e-4 relative).
LEVELS = 8
MPMATH_DIGITS = 40


@dataclass(frozen=True)
class Estimate:
    """A numerical derivative and, per entry, an estimate of its absolute error."""

    value: np.ndarray
    error: np.ndarray


def ridders(difference: Callable[[float], np.ndarray], h0: float, levels: int = LEVELS) -> Estimate:
    """Extrapolate central differences `difference(h)` to h -> 0 (Ridders' method, entrywise).

    Row k holds the difference at h0/2^k and its Richardson extrapolations cancelling h^2, h^4, ...
    The estimate kept for each entry is the one whose neighbours in the tableau agree best; that
    disagreement is the error estimate. Stops once going deeper only makes every entry worse.
    """
    previous = [np.asarray(difference(h0), dtype=np.float64)]
    best = previous[0].copy()
    error = np.full(best.shape, np.inf)
    for k in range(1, levels):
        row = [np.asarray(difference(h0 / 2.0**k), dtype=np.float64)]
        factor = 4.0
        for j in range(1, k + 1):
            row.append(row[j - 1] + (row[j - 1] - previous[j - 1]) / (factor - 1.0))
            factor *= 4.0
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


def richardson_directional(func: FlatFunction, u: np.ndarray, levels: int = LEVELS) -> Estimate:
    """J·u (all outputs) to high accuracy, by differences along the direction u."""
    norm = float(np.max(np.abs(u))) if u.size else 0.0
    if norm == 0.0:
        return Estimate(np.zeros(func.m), np.zeros(func.m))
    scale = max(1.0, float(np.max(np.abs(func.x)))) / norm

    def difference(h: float) -> np.ndarray:
        return (func(func.x + h * u) - func(func.x - h * u)) / (2.0 * h)

    return ridders(difference, _first_step(difference, FIRST_STEP * scale), levels)


def accurate_vjp(f: Callable[..., Any], inputs: Sequence[Any], cotangent: Any) -> tuple[np.ndarray, ...]:
    """cotangentᵀ·J by Richardson extrapolation; same conventions as `numerical.numerical_vjp`."""
    func = FlatFunction(f, inputs)
    v = func.join_outputs(cotangent, "cotangent")
    flat = np.array([v @ richardson_column(func, i).value for i in range(func.n)])
    return func.split_inputs(flat)


# --- the plain-float oracle -------------------------------------------------------------------


def accurate_gradient(
    f: Callable[..., Any], x: Any, cotangent: Any = None, *, method: str = "auto"
) -> np.ndarray:
    """The gradient of sum(cotangent * f(*x)) at x (see the module docstring for the contract)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"accurate_gradient: x must be a 1-D array of inputs, got shape {x.shape}")
    if method not in ("auto", "richardson", "mpmath"):
        raise ValueError(
            f"accurate_gradient: method must be 'auto', 'richardson' or 'mpmath', got {method!r}"
        )
    flat_f = _FloatCallable(f)
    func = FlatFunction(flat_f, [x])
    if cotangent is None:
        if func.m != 1:
            raise ValueError(
                f"accurate_gradient: f returns {func.m} numbers; pass a cotangent of that length"
            )
        v = np.ones(1)
    else:
        v = np.asarray(cotangent, dtype=np.float64).ravel()
        if v.size != func.m:
            raise ValueError(f"accurate_gradient: cotangent has {v.size} entries, f returns {func.m}")
    if method == "richardson":
        return np.array([v @ richardson_column(func, i).value for i in range(func.n)])
    exact = mpmath_gradient(f, x, v)
    if exact is None:
        if method == "mpmath":
            raise TypeError(
                "accurate_gradient(method='mpmath'): f did not return mpmath numbers for mpmath inputs; "
                "write it with operators and Value-style methods (x.exp()) or mpmath functions"
            )
        return np.array([v @ richardson_column(func, i).value for i in range(func.n)])
    if method == "auto" and not agrees_with_float64(func, v, exact):
        return np.array([v @ richardson_column(func, i).value for i in range(func.n)])
    return exact


def agrees_with_float64(func: FlatFunction, v: np.ndarray, gradient: np.ndarray) -> bool:
    """Spot check: the mpmath gradient projected on a random direction matches float64 Richardson."""
    probe = np.random.default_rng(0).standard_normal(func.n)
    check = richardson_directional(func, probe)
    slack = 1e3 * float(np.abs(v) @ check.error) + 1e-9 * (1.0 + float(np.abs(gradient) @ np.abs(probe)))
    return abs(float(gradient @ probe) - float(v @ check.value)) <= slack


class _FloatCallable:
    """Adapts f(*floats) -> number(s) to the one-array input FlatFunction expects.

    A function written with Value's API (`x.exp()`) fails on floats; it is then called on fresh
    minigrad Values instead (with no graph recorded) and their `.data` read back.
    """

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f = f
        self.use_values = False

    def __call__(self, x: np.ndarray) -> np.ndarray:
        scalars = [float(v) for v in np.ravel(x)]
        if not self.use_values:
            try:
                return self._numbers(self.f(*scalars))
            except (AttributeError, TypeError):
                self.use_values = True
        with minigrad.no_grad():
            return self._numbers(self.f(*(minigrad.Value(v) for v in scalars)))

    @staticmethod
    def _numbers(out: Any) -> np.ndarray:
        items = out if isinstance(out, (list, tuple)) else [out]
        return np.array([float(getattr(o, "data", o)) for o in items], dtype=np.float64)


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _high_precision(out: Any) -> bool:
    return all(isinstance(o, (mpmath.mpf, MPValue)) for o in _outputs(out))


def mpmath_gradient(
    f: Callable[..., Any], x: np.ndarray, v: np.ndarray, coordinates: Sequence[int] | None = None
) -> np.ndarray | None:
    """The gradient of sum(v * f(*x)) by mpmath at 40 digits, or None if f is not generic.

    Only the given `coordinates` are computed (the others are NaN); default all.
    f gets `MPValue` arguments (mpmath numbers with Value's API); it is generic when every output
    comes back as an mpmath number. A function that silently drops to float somewhere inside still
    passes this test, so callers spot-check the result against float64 Richardson.
    """
    if mpmath is None:  # pragma: no cover - mpmath is a declared dependency of the checker
        return None
    with mpmath.workdps(MPMATH_DIGITS):
        point = [MPValue(float(value)) for value in x]
        try:
            if not _high_precision(f(*point)):
                return None
        except Exception:
            return None
        weights = [mpmath.mpf(float(w)) for w in v]
        count = len(_outputs(f(*point)))
        if count != len(weights):
            raise ValueError(f"accurate_gradient: cotangent has {len(weights)} entries, f returns {count}")
        gradient = np.full(x.size, np.nan)
        for i in range(x.size) if coordinates is None else coordinates:

            def along(t: Any, i: int = i) -> Any:
                args = list(point)
                args[i] = MPValue(t)
                outs = _outputs(f(*args))
                return mpmath.fsum(w * MPValue(o).data for w, o in zip(weights, outs))

            try:
                gradient[i] = float(mpmath.diff(along, point[i].data))
            except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
                gradient[i] = np.nan  # complex or undefined nearby: no exact derivative here
    return gradient


# --- mpmath numbers with Value's API ------------------------------------------------------------


class MPValue:
    """A 40-digit mpmath number that speaks `Value`'s API (operators, `.exp()`, `.relu()`, `.data`).

    Its methods are the registry's ops that have an mpmath spelling (`OpSpec.mpmath`), so a new
    op is known here as soon as its registry entry is.

    A function written against minigrad's Value API, without minigrad-only calls, runs unchanged on
    MPValues, so mpmath can differentiate it to full float64 accuracy. `_mpf_` lets mpmath's own
    functions accept it too.
    """

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        if isinstance(data, MPValue):
            data = data.data
        self.data = mpmath.nan if isinstance(data, mpmath.mpc) else mpmath.mpf(data)  # IEEE: no complex

    @property
    def _mpf_(self) -> Any:
        return self.data._mpf_

    def __repr__(self) -> str:
        return f"MPValue({self.data})"

    def __float__(self) -> float:
        return float(self.data)

    def item(self) -> float:
        return float(self.data)

    @staticmethod
    def _d(other: Any) -> Any:
        return other.data if isinstance(other, MPValue) else other

    def __add__(self, other: Any) -> MPValue:
        return MPValue(self.data + self._d(other))

    __radd__ = __add__

    def __sub__(self, other: Any) -> MPValue:
        return MPValue(self.data - self._d(other))

    def __rsub__(self, other: Any) -> MPValue:
        return MPValue(self._d(other) - self.data)

    def __mul__(self, other: Any) -> MPValue:
        return MPValue(self.data * self._d(other))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> MPValue:
        return MPValue(self.data / self._d(other))

    def __rtruediv__(self, other: Any) -> MPValue:
        return MPValue(self._d(other) / self.data)

    def __pow__(self, other: Any) -> MPValue:
        return MPValue(self.data ** self._d(other))

    def __rpow__(self, other: Any) -> MPValue:
        return MPValue(self._d(other) ** self.data)

    def __neg__(self) -> MPValue:
        return MPValue(-self.data)

    def __abs__(self) -> MPValue:
        return MPValue(abs(self.data))

    def __lt__(self, other: Any) -> bool:
        return bool(self.data < self._d(other))

    def __le__(self, other: Any) -> bool:
        return bool(self.data <= self._d(other))

    def __gt__(self, other: Any) -> bool:
        return bool(self.data > self._d(other))

    def __ge__(self, other: Any) -> bool:
        return bool(self.data >= self._d(other))

    def __getattr__(self, name: str) -> Callable[[], MPValue]:
        """The registry's unary ops as methods (`x.exp()`, `x.relu()`), by their mpmath spelling."""
        spec = REGISTRY.get(name)
        if spec is None or spec.mpmath is None:
            raise AttributeError(f"MPValue has no method {name!r} (no registry op with an mpmath spelling)")
        return lambda: MPValue(spec.mpmath(mpmath, self.data))
