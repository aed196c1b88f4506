"""An accurate numerical oracle: derivatives to ~3e-13 where central differences give ~3e-10.

Stable public entry point (the parity harness relies on it)::

    accurate_gradient(f, x, cotangent=None, *, method="auto") -> np.ndarray

* ``f`` is called as ``f(*xs)`` with one Python float per entry of the 1-D array ``x`` and returns
  a number or a sequence of numbers (a flat output vector). A function written with Value's API
  (``x.exp()``), which fails on floats, is called on the engine's values instead (minigrad Values
  by default).
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
structured inputs of `gradcheck.checker.flat` (floats, arrays, engine values); the differencing
itself lives in `gradcheck.checker.numerical`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.flat import FlatFunction
from gradcheck.checker.numerical import richardson_column, richardson_directional
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.registry import REGISTRY

try:  # the `check` extra; without it the oracle falls back to float64 Richardson
    import mpmath
except ImportError:  # pragma: no cover - mpmath is a declared dependency of the checker
    mpmath = None

MPMATH_DIGITS = 40


def accurate_vjp(
    f: Callable[..., Any], inputs: Sequence[Any], cotangent: Any, engine: str | EngineAdapter = "minigrad"
) -> tuple[np.ndarray, ...]:
    """cotangentᵀ·J by Richardson extrapolation; same conventions as `numerical.numerical_vjp`."""
    func = FlatFunction(f, inputs, load_engine(engine))
    v = func.join_outputs(cotangent, "cotangent")
    flat = np.array([v @ richardson_column(func, i).value for i in range(func.n)])
    return func.split_inputs(flat)


# --- the plain-float oracle -------------------------------------------------------------------


def accurate_gradient(
    f: Callable[..., Any],
    x: Any,
    cotangent: Any = None,
    *,
    method: str = "auto",
    engine: str | EngineAdapter = "minigrad",
) -> np.ndarray:
    """The gradient of sum(cotangent * f(*x)) at x (see the module docstring for the contract)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"accurate_gradient: x must be a 1-D array of inputs, got shape {x.shape}")
    if method not in ("auto", "richardson", "mpmath"):
        raise ValueError(
            f"accurate_gradient: method must be 'auto', 'richardson' or 'mpmath', got {method!r}"
        )
    adapter = load_engine(engine)
    func = FlatFunction(_FloatCallable(f, adapter), [x], adapter)
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
    leaves of the engine (minigrad Values by default, with no graph recorded) and their values read
    back.
    """

    def __init__(self, f: Callable[..., Any], engine: EngineAdapter) -> None:
        self.f = f
        self.engine = engine
        self.use_values = False

    def __call__(self, x: np.ndarray) -> np.ndarray:
        scalars = [float(v) for v in np.ravel(x)]
        if not self.use_values:
            try:
                return self._numbers(self.f(*scalars))
            except (AttributeError, TypeError):
                self.use_values = True
        with self.engine.no_grad():
            return self._numbers(self.f(*(self.engine.as_leaf(v) for v in scalars)))

    def _numbers(self, out: Any) -> np.ndarray:
        items = out if isinstance(out, (list, tuple)) else [out]
        return np.array(
            [float(self.engine.value(o)) if self.engine.is_node(o) else float(o) for o in items],
            dtype=np.float64,
        )


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
        """The registry's ops as methods (`x.exp()`, `y.atan2(x)`), by their mpmath spelling."""
        spec = REGISTRY.get(name)
        if spec is None or spec.mpmath is None:
            raise AttributeError(f"MPValue has no method {name!r} (no registry op with an mpmath spelling)")
        return lambda *others: MPValue(spec.mpmath(mpmath, self.data, *map(self._d, others)))
