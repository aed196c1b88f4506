"""Jets: an elementwise op's exact value and local derivatives at exact arguments, from its
registry entry alone (`gradcheck.parity.exact_numbers` builds the exact reference on them).

The value is the entry's `OpSpec.mpmath`; the first derivatives, with torch's conventions at
kinks and ties, its `OpSpec.grads` run on constants; the second ones `grads` run on dual numbers
(`Dual`: a value and its derivative along one direction, on which `grads`' operators and numpy
functions give the derivatives' own derivatives). The arithmetic operators' jets are written out
(`ARITHMETIC`, checked against the registry by the tests). A jet is kept (cached) by the op, its
attributes, the working precision and the arguments, with the comparisons its rules made (which
side of a kink, a tie), which are logged (`decide`) so that a caller can tell a branch taken on a
value the working precision does not determine.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.oracle import mpmath
from gradcheck.graphs.opspec import OpSpec
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.scalar_ops import mp_divide

if mpmath is None:  # pragma: no cover - mpmath comes with the `check` extra
    raise ImportError("the exact reference needs mpmath: pip install 'minigrad[check]'")
libmp = mpmath.libmp  # mpmath's functions on raw (sign, mantissa, exponent, bits) tuples

# The jets kept at once, counted per point (a scalar graph's jet of 16 points counts 16; each point's
# about a kilobyte); the cache is emptied when it is full. Also the floats whose mpf are kept.
CACHE_SIZE = 50_000
# numpy's names for the registry's elementwise ops, where they differ (np.arctan calls `arctan`).
NUMPY_NAMES = {"arctan": "atan", "arctan2": "atan2", "absolute": "abs", "clip": "clamp"}

# (a, b, outcome) of a comparison: a rule asked whether a > b (or <, ==, ...) and got `outcome`
Decision = tuple[Any, Any, bool]


def _is_complex(x: Any) -> bool:
    return isinstance(x, mpmath.mpc)


def real(x: Any) -> Any:
    """An op's mpmath result as a real number: complex results stand for nan (IEEE: no value)."""
    return mpmath.nan if _is_complex(x) else x


_ONE = mpmath.mpf(1)
_MINUS_ONE = mpmath.mpf(-1)
_ZERO = mpmath.mpf(0)
_COMMON = {1.0: _ONE, -1.0: _MINUS_ONE, 0.0: _ZERO}
_FLOATS: dict[float, Any] = dict(_COMMON)  # the mpf of each float met (exact, immutable)


def as_mpf(x: Any) -> Any:
    """A plain number (float, int, bool, numpy scalar, mpf) as an mpf; floats convert exactly."""
    if isinstance(x, mpmath.mpf):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return mpmath.mpf(int(x))
    f = float(x)
    out = _FLOATS.get(f)
    if out is None:
        if len(_FLOATS) >= CACHE_SIZE:
            _FLOATS.clear()
            _FLOATS.update(_COMMON)
        out = _FLOATS[f] = mpmath.mpf(f)
    return out


def nearest_float(x: Any) -> float:
    """The float64 nearest mpf `x` (ties to even, subnormals and overflow as IEEE rounds them);
    mpmath's own float() truncates."""
    return nearest_float_raw(x._mpf_)


def nearest_float_raw(t: tuple[int, int, int, int]) -> float:
    """`nearest_float` of an mpf's tuple (sign, mantissa, exponent, bits)."""
    sign, man, exp, bc = t
    if not man:
        return 0.0 if t == libmp.fzero else libmp.to_float(t)  # +-inf, nan
    top = exp + bc  # 2^(top - 1) <= |x| < 2^top
    if top > 1026:
        f = math.inf
    elif top < -1077:
        f = 0.0
    else:
        try:  # Python's int conversion and int / int round correctly, subnormals included
            f = float(man << exp) if exp >= 0 else man / (1 << -exp)
        except OverflowError:
            f = math.inf
    return -f if sign else f


def held(x: Any) -> Any:
    """`x` as a float64 evaluation holds it: +-inf where it overflows float64, 0 where it
    underflows it (below half the smallest subnormal), else itself (exact, unrounded)."""
    _, man, exp, bc = x._mpf_
    if not man or -1074 <= exp + bc <= 1023:
        return x
    f = nearest_float_raw(x._mpf_)
    if f == 0.0:
        return _ZERO
    return mpmath.mpf(f) if math.isinf(f) else x


class Capture:
    """Where comparisons go: the jet being derived (kept with it, replayed on a hit), else the
    current tape's log; and the values computed while a jet is derived."""

    jet: list[Decision] | None = None
    tape: list[Decision] | None = None
    values: dict[tuple[Any, ...], Any] | None = None


def decide(a: Any, b: Any, outcome: bool) -> bool:
    """Log a comparison of a and b (mpf) and pass its outcome on."""
    log = Capture.jet if Capture.jet is not None else Capture.tape
    if log is not None:
        log.append((a, b, outcome))
    return outcome


class Compared:
    """Comparisons of exact values (`v`) with each other and with plain numbers, each logged."""

    __slots__ = ()
    v: Any

    def _compare(self, other: Any, test: Callable[[Any, Any], bool]) -> bool:
        b = other.v if isinstance(other, Compared) else as_mpf(other)
        return decide(self.v, b, bool(test(self.v, b)))

    def __gt__(self, other: Any) -> bool:
        return self._compare(other, operator.gt)

    def __ge__(self, other: Any) -> bool:
        return self._compare(other, operator.ge)

    def __lt__(self, other: Any) -> bool:
        return self._compare(other, operator.lt)

    def __le__(self, other: Any) -> bool:
        return self._compare(other, operator.le)

    def __eq__(self, other: object) -> bool:
        return self._compare(other, operator.eq)

    def __ne__(self, other: object) -> bool:
        return not self._compare(other, operator.eq)

    __hash__ = None  # type: ignore[assignment]


# --- jets ---------------------------------------------------------------------------------------


class Jet:
    """An elementwise op at exact arguments: its value, its first derivatives `d1[i]` (d out / d
    arg i) and, when asked, second ones `d2[j][i]` (d d1[i] / d arg j); the comparisons made."""

    __slots__ = ("value", "d1", "d2", "decisions")

    def __init__(
        self,
        value: Any,
        d1: tuple[Any, ...] | None = None,
        d2: tuple[tuple[Any, ...], ...] | None = None,
        decisions: tuple[Decision, ...] = (),
    ) -> None:
        self.value = value
        self.d1 = d1
        self.d2 = d2
        self.decisions = decisions


# The jets kept, by op, attributes, precision and arguments (one point's, or every lane's), and
# how many points' jets they are.
_JETS: dict[tuple[Any, ...], Any] = {}
_KEPT = [0]


def recall(key: tuple[Any, ...]) -> Any:
    """The jet kept under `key`, or None."""
    return _JETS.get(key)


def remember(key: tuple[Any, ...], found: Any, points: int = 1) -> None:
    """Keep a jet of `points` points under `key` (every jet forgotten when CACHE_SIZE are kept)."""
    if _KEPT[0] + points > CACHE_SIZE:
        clear_cache()
    _JETS[key] = found
    _KEPT[0] += points


def clear_cache() -> None:
    """Forget every jet kept (`CACHE_SIZE` bounds them anyway)."""
    _JETS.clear()
    _KEPT[0] = 0


def cache_size() -> int:
    """How many jets are kept."""
    return len(_JETS)


def value_of(spec: OpSpec, values: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Elementwise op `spec`'s exact value at `values` (mpf), by its entry's `mpmath` (kept
    while a jet is derived: sin's second derivative asks for sin and cos again)."""
    assert spec.mpmath is not None
    memo = Capture.values
    if memo is None:
        return real(spec.mpmath(mpmath, *values, **attrs))
    key = (spec.name, tuple(attrs.items()) if attrs else (), *[v._mpf_ for v in values])
    found = memo.get(key)
    if found is None:
        found = memo[key] = real(spec.mpmath(mpmath, *values, **attrs))
    return found


def jet(
    spec: OpSpec, values: Sequence[Any], attrs: dict[str, Any], order: int, in_range: bool = False
) -> Jet:
    """`spec`'s value at `values` (mpf) and its derivatives up to `order` (0, 1 or 2): the
    arithmetic operators' by `ARITHMETIC`, every other op's by `derive`, kept by the op, its
    attributes, the working precision and the values. `in_range`: the value as float64 holds
    it (`held`), and the derivatives that read it read that (exp's at 1000 is inf, as torch's)."""
    arithmetic = ARITHMETIC.get(spec.name)
    if arithmetic is not None:
        found = arithmetic(*values, order=order)
        if in_range and held(found.value) is not found.value:
            found = Jet(held(found.value), found.d1, found.d2)
        return found
    # keyed by the raw tuples: hashing an mpf itself costs more than most of its arithmetic
    key = (spec.name, tuple(attrs.items()) if attrs else (), mpmath.mp.prec, in_range)
    key += tuple(v._mpf_ for v in values)

    def fresh() -> Jet:
        value = value_of(spec, values, attrs)
        return Jet(held(value) if in_range else value)

    return kept(key, order, fresh, lambda known: derive(spec, values, attrs, order, known))


def kept(
    key: tuple[Any, ...], order: int, fresh: Callable[[], Jet], extend: Callable[[Jet], Jet], points: int = 1
) -> Jet:
    """The jet kept under `key` (else `fresh()`, kept), extended by `extend` to `order` if short;
    `points`: how many points' jets it holds (a scalar graph's node: all of them)."""
    found = recall(key)
    if found is None:
        found = fresh()
        remember(key, found, points)
    if (order >= 1 and found.d1 is None) or (order >= 2 and found.d2 is None):
        found = extend(found)  # in place: the kept jet has them too
    return found


def derive(
    spec: OpSpec, values: Sequence[Any], attrs: dict[str, Any], order: int, known: Jet | None = None
) -> Jet:
    """`spec`'s jet from its registry entry: the value by `mpmath`, the first derivatives by
    `grads` on constants, the second ones by `grads` on dual numbers moving along each argument
    in turn (the derivatives' own derivatives); `known`: a lower-order jet to extend."""
    outermost = Capture.values is None
    if outermost:
        Capture.values = {}
    try:
        return _derive(spec, values, attrs, order, known)
    finally:
        if outermost:
            Capture.values = None


def _derive(spec: OpSpec, values: Sequence[Any], attrs: dict[str, Any], order: int, known: Jet | None) -> Jet:
    found = known or Jet(value_of(spec, values, attrs))
    return derivatives_of(spec, values, attrs, order, found, Dual, _value, _tangent)


def derivatives_of(
    spec: OpSpec,
    values: Sequence[Any],
    attrs: dict[str, Any],
    order: int,
    found: Jet,
    dual: Callable[..., Any],
    value: Callable[[Any], Any],
    tangent: Callable[[Any], Any],
) -> Jet:
    """`found` with its derivatives up to `order`, by `grads` run on `dual(value, tangent)`
    numbers (Dual, or exact_lanes' Lanes): on constants for the first, moving along each argument
    in turn for the second (`value` and `tangent` read what `grads` returned)."""
    if order >= 1 and found.d1 is None:
        consts = [dual(v) for v in values]
        Capture.jet, outer = [], Capture.jet
        try:
            found.d1 = tuple(value(d) for d in _derivatives(spec, consts, attrs, dual(found.value)))
            found.decisions = tuple(Capture.jet)
        finally:
            Capture.jet = outer
    if order >= 2 and found.d2 is None:
        assert found.d1 is not None
        rows = []
        Capture.jet, outer = [], Capture.jet  # the same comparisons again: not kept
        try:
            for j in range(len(values)):
                unit = [dual(v, _ONE if i == j else None) for i, v in enumerate(values)]
                out = dual(found.value, found.d1[j])
                rows.append(tuple(tangent(d) for d in _derivatives(spec, unit, attrs, out)))
        finally:
            Capture.jet = outer
        found.d2 = tuple(rows)
    return found


# The arithmetic operators' jets, written out: they are most of a tensor graph's element ops
# (sums, products), and `derive` would cost ten times their arithmetic. A second derivative that
# is 0 whatever the arguments is None (no term at all). `test_exact_numbers` checks each against
# `derive` from the registry's entry.


def _add_jet(a: Any, b: Any, order: int) -> Jet:
    return Jet(a + b, (_ONE, _ONE), ((None, None), (None, None)) if order >= 2 else None)


def _sub_jet(a: Any, b: Any, order: int) -> Jet:
    return Jet(a - b, (_ONE, _MINUS_ONE), ((None, None), (None, None)) if order >= 2 else None)


def _mul_jet(a: Any, b: Any, order: int) -> Jet:
    return Jet(a * b, (b, a), ((None, _ONE), (_ONE, None)) if order >= 2 else None)


def _neg_jet(a: Any, order: int) -> Jet:
    return Jet(-a, (_MINUS_ONE,), ((None,),) if order >= 2 else None)


def _div_jet(a: Any, b: Any, order: int) -> Jet:
    value = divide(a, b)
    if order == 0:
        return Jet(value)
    square = b * b
    d1 = (divide(_ONE, b), divide(-a, square))
    if order < 2:
        return Jet(value, d1)
    inverse_square = divide(_MINUS_ONE, square)
    return Jet(value, d1, ((None, inverse_square), (inverse_square, divide(2 * a, square * b))))


def divide(a: Any, b: Any) -> Any:
    """a / b of mpf values or object arrays of them (`exact_lanes`), with the registry's IEEE
    results where a divisor is 0 (`mp_divide`); mpmath raises there."""
    try:
        return np.true_divide(a, b) if isinstance(b, np.ndarray) else a / b
    except ZeroDivisionError:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return np.frompyfunc(lambda x, y: mp_divide(mpmath, x, y), 2, 1)(a, b)
        return mp_divide(mpmath, a, b)


def plus(total: Any, term: Any) -> Any:
    """A sum of terms, None standing for no term (a tangent of 0, no term yet)."""
    if total is None:
        return term
    if term is None:
        return total
    return np.add(total, term) if isinstance(term, np.ndarray) else total + term


def along(d2: tuple[tuple[Any, ...], ...], tangents: Sequence[Any], live: Sequence[int], i: int) -> Any:
    """d(d1[i]) along the tangents: the sum over the live arguments k (tangents[m] is live[m]'s)
    of d2[k][i] * t_k; None: no term, the derivative does not move."""
    total = None
    for k, t in zip(live, tangents):
        slope = d2[k][i]
        if slope is not None:
            total = plus(total, times(t, slope))
    return total


def times(a: Any, b: Any) -> Any:
    """a * b, for free when either is exactly 1 or -1 (most local derivatives of sums, unit
    tangents); numpy's multiply where an array meets an mpf (mpmath's own operator would first
    try to read the array as a number, printing it)."""
    if b is _ONE:
        return a
    if b is _MINUS_ONE:
        return -a
    if a is _ONE:
        return b
    if isinstance(b, np.ndarray) and not isinstance(a, np.ndarray):
        return np.multiply(a, b)
    return a * b


ARITHMETIC: dict[str, Callable[..., Jet]] = {
    "add": _add_jet,
    "sub": _sub_jet,
    "mul": _mul_jet,
    "neg": _neg_jet,
    "div": _div_jet,
}


def _derivatives(spec: OpSpec, args: list[Any], attrs: dict[str, Any], out: Any) -> tuple[Any, ...]:
    assert spec.grads is not None
    return tuple(spec.grads(args, attrs, out))


def _unwrap(d: Any) -> Any:
    return d.item() if isinstance(d, np.ndarray) else d


def _value(d: Any) -> Any:
    """A derivative `grads` returned (a Dual, a number, a 0-d array) as an mpf."""
    d = _unwrap(d)
    return d.v if isinstance(d, Dual) else as_mpf(d)


def _tangent(d: Any) -> Any:
    d = _unwrap(d)
    return d.t if isinstance(d, Dual) and d.t is not None else _ZERO


# --- dual numbers: what `grads` runs on ---------------------------------------------------------


def _dual(x: Any) -> Dual:
    return x if x.__class__ is Dual else Dual(as_mpf(x))


class Dual(Compared):
    """v + t·ε (ε² = 0): an mpf and its derivative along one direction. The registry's `grads`
    run on them: operators and numpy's functions (by the elementwise ops' names) give the
    derivatives' own derivatives. Division by 0 gives IEEE's inf and nan, as everywhere here."""

    __slots__ = ("v", "t")

    def __init__(self, v: Any, t: Any = None) -> None:
        self.v = v
        self.t = t  # None: 0, the derivative of a constant

    def __repr__(self) -> str:
        return f"Dual({self.v}, {self.t})"

    def __add__(self, other: Any) -> Dual:
        o = _dual(other)
        return Dual(self.v + o.v, plus(self.t, o.t))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Dual:
        o = _dual(other)
        return Dual(self.v - o.v, plus(self.t, None if o.t is None else -o.t))

    def __rsub__(self, other: Any) -> Dual:
        return _dual(other) - self

    def __mul__(self, other: Any) -> Dual:
        o = _dual(other)
        t = plus(None if self.t is None else self.t * o.v, None if o.t is None else self.v * o.t)
        return Dual(self.v * o.v, t)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Dual:
        o = _dual(other)
        value = divide(self.v, o.v)
        slope = plus(self.t, None if o.t is None else -value * o.t)
        return Dual(value, None if slope is None else divide(slope, o.v))

    def __rtruediv__(self, other: Any) -> Dual:
        return _dual(other) / self

    def __neg__(self) -> Dual:
        return Dual(-self.v, None if self.t is None else -self.t)

    def __pow__(self, other: Any) -> Dual:
        if isinstance(other, Dual):
            return _apply_dual(REGISTRY["pow"], [self, other], {})
        return _apply_dual(REGISTRY["pow_const"], [self], {"exponent": float(other)})

    def __rpow__(self, other: Any) -> Dual:
        return _apply_dual(REGISTRY["pow"], [other, self], {})

    def __abs__(self) -> Dual:
        return _apply_dual(REGISTRY["abs"], [self], {})


def _apply_dual(spec: OpSpec, args: Sequence[Any], attrs: dict[str, Any]) -> Dual:
    """An elementwise op on dual numbers: its value, and the first-order jet along the tangents."""
    duals = [_dual(a) for a in args]
    values = [d.v for d in duals]
    if all(d.t is None for d in duals):
        return Dual(value_of(spec, values, attrs))
    j = derive(spec, values, attrs, 1)
    assert j.d1 is not None
    t = None
    for d, slope in zip(duals, j.d1):
        if d.t is not None:
            t = plus(t, slope * d.t)
    return Dual(j.value, t)


def elementwise_spec(name: str) -> OpSpec | None:
    """The registry's elementwise op called `name` (or numpy's name for it: `arctan`), if any."""
    spec = REGISTRY.get(NUMPY_NAMES.get(name, name))
    return spec if spec is not None and spec.elementwise else None


def _dual_methods() -> None:
    """The registry's elementwise ops without attributes as methods of Dual, by their names and
    numpy's (numpy's `np.cos(d)` calls `d.cos()`). Set on the class, not found by a
    `__getattr__`: numpy probes each object for its array protocols, and a probe that reaches
    Python code costs more than the arithmetic."""
    for name in [*REGISTRY, *NUMPY_NAMES]:
        spec = elementwise_spec(name)
        if spec is not None and not spec.attrs and not hasattr(Dual, name):
            setattr(Dual, name, lambda self, *others, spec=spec: _apply_dual(spec, [self, *others], {}))


_dual_methods()
