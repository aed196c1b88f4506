"""A scalar graph's K points at once: each node's exact values, local derivatives, tangents and
adjoints as object arrays of mpmath numbers, one lane per point (`gradcheck.parity.exact`
evaluates scalar graphs this way; tensor graphs, whose ops' spellings take one point, number by
number with `exact_numbers`).

The arithmetic is `exact_jets`' to the bit, lane by lane: an op's value by its entry's `mpmath`,
its local derivatives by its `grads` run on `Lanes` (dual numbers whose value and tangent hold
every lane; numpy's loops over object arrays call mpmath's operators), the arithmetic operators'
jets written out. Only the Python work around each op is paid once per node rather than once per
point, which is most of it. Every comparison a rule makes is logged with its lanes, so that each
point's branches can be compared between precisions as the number-by-number path's are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.oracle import mpmath
from gradcheck.graphs.opspec import OpSpec
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.exact_jets import (
    ARITHMETIC,
    Capture,
    Decision,
    Jet,
    as_mpf,
    derivatives_of,
    divide,
    elementwise_spec,
    held,
    kept,
    plus,
    real,
    times,
)

# A lane's values: one mpf for every lane (a constant), or an object array of them (one a lane).
Values = Any

_ONE = as_mpf(1.0)
_ZERO = as_mpf(0.0)


def _per_lane(function: Callable[..., Any], *values: Values) -> Values:
    """`function` of mpf arguments lane by lane (once, for constants)."""
    if not any(isinstance(v, np.ndarray) for v in values):
        return function(*values)
    return np.frompyfunc(function, len(values), 1)(*values)


def _mpf_values(x: Any) -> Values:
    """What `grads` returned (numbers, float arrays, object arrays) as mpf values."""
    if not isinstance(x, np.ndarray):
        return as_mpf(x)
    if not x.ndim:
        return as_mpf(x.item())
    return _per_lane(as_mpf, x.astype(object))


_MEMO: dict[tuple[Any, ...], tuple[tuple[Any, ...], Values]] | None = None  # while a jet is derived


def _value_of(spec: OpSpec, values: Sequence[Values], attrs: dict[str, Any]) -> Values:
    """The op's values lane by lane by its entry's `mpmath` (kept while a jet is derived, by the
    identity of its arguments: sin's second derivative asks for sin and cos again)."""
    assert spec.mpmath is not None
    if _MEMO is not None:
        key = (spec.name, tuple(attrs.items()), *map(id, values))
        found = _MEMO.get(key)
        if found is not None and all(a is b for a, b in zip(found[0], values)):
            return found[1]
    out = _per_lane(lambda *xs: real(spec.mpmath(mpmath, *xs, **attrs)), *values)
    if _MEMO is not None:
        _MEMO[key] = (tuple(values), out)
    return out


def _key(values: Sequence[Values]) -> tuple[Any, ...]:
    return tuple(tuple(x._mpf_ for x in v) if isinstance(v, np.ndarray) else v._mpf_ for v in values)


def node_jet(spec: OpSpec, values: Sequence[Values], attrs: dict[str, Any], order: int) -> Jet:
    """A node's jet at K points (its values held in float64's range, as `exact_jets.jet` with
    `in_range`), kept by the op, its attributes, the precision and every lane's arguments."""
    arithmetic = ARITHMETIC.get(spec.name)
    if arithmetic is not None:
        j = arithmetic(*values, order=order)
        value = _per_lane(held, j.value)
        return Jet(value, j.d1, j.d2)
    key = ("lanes", spec.name, tuple(attrs.items()), mpmath.mp.prec, _key(values))
    return kept(
        key,
        order,
        lambda: Jet(_per_lane(held, _value_of(spec, values, attrs))),
        lambda known: derive(spec, values, attrs, order, known),
        max((len(v) for v in values if isinstance(v, np.ndarray)), default=1),
    )


def derive(
    spec: OpSpec, values: Sequence[Values], attrs: dict[str, Any], order: int, known: Jet | None = None
) -> Jet:
    """`exact_jets.derive` lane by lane: the first derivatives by `grads` on constant Lanes, the
    second by `grads` on Lanes moving along each argument in turn."""
    global _MEMO
    outermost = _MEMO is None
    if outermost:
        _MEMO = {}
    try:
        found = known or Jet(_value_of(spec, values, attrs))
        value = lambda d: _mpf_values(_unwrap(d, "v"))
        return derivatives_of(
            spec, values, attrs, order, found, Lanes, value, lambda d: _mpf_values(_unwrap(d, "t"))
        )
    finally:
        if outermost:
            _MEMO = None


def _unwrap(d: Any, part: str) -> Any:
    """The value ("v") or tangent ("t") of what `grads` returned (Lanes, numbers, arrays)."""
    if isinstance(d, Lanes):
        got = getattr(d, part)
        return _ZERO if got is None else got
    return d if part == "v" else _ZERO


# --- dual numbers over lanes ----------------------------------------------------------------------


def _lanes(x: Any) -> Lanes:
    return (
        x
        if isinstance(x, Lanes)
        else Lanes(_mpf_values(np.asarray(x)) if isinstance(x, np.ndarray) else as_mpf(x))
    )


def _scaled(t: Any, v: Values) -> Any:
    return None if t is None else times(t, v)


def _negated(t: Any) -> Any:
    return None if t is None else np.negative(t)


def _compare(test: Callable[[Any, Any], Any]) -> Callable[[Lanes, Lanes], Any]:
    def compare(a: Lanes, b: Lanes) -> Any:
        outcome = test(a.v, b.v)
        outcome = outcome.astype(bool) if isinstance(outcome, np.ndarray) else bool(outcome)
        log = Capture.jet if Capture.jet is not None else Capture.tape
        if log is not None:
            log.append((a.v, b.v, outcome))
        return outcome

    return compare


def _divided(a: Lanes, b: Lanes) -> Lanes:
    value = divide(a.v, b.v)
    slope = plus(a.t, None if b.t is None else np.negative(times(b.t, value)))
    return Lanes(value, None if slope is None else divide(slope, b.v))


def _power(a: Lanes, b: Lanes) -> Lanes:
    if b.t is None and not isinstance(b.v, np.ndarray):  # a constant exponent: x ** c
        return _apply(REGISTRY["pow_const"], [a], {"exponent": float(b.v)})
    return _apply(REGISTRY["pow"], [a, b], {})


def _sign(a: Lanes) -> Any:
    """sign(a), piecewise constant (no tangent), its comparisons with 0 logged."""
    zero = Lanes(_ZERO)
    above, below = _compare(np.greater)(a, zero), _compare(np.less)(a, zero)
    if isinstance(above, np.ndarray):
        return np.subtract(above, below, dtype=float)
    return float(above) - float(below)


_UFUNCS: dict[Any, Callable[..., Any]] = {
    # numpy's own functions on the values: an mpf on the left of an operator with an array on
    # the right would first try to read the array as a number (mpmath prints it to parse it)
    np.add: lambda a, b: Lanes(np.add(a.v, b.v), plus(a.t, b.t)),
    np.subtract: lambda a, b: Lanes(np.subtract(a.v, b.v), plus(a.t, _negated(b.t))),
    np.multiply: lambda a, b: Lanes(np.multiply(a.v, b.v), plus(_scaled(a.t, b.v), _scaled(b.t, a.v))),
    np.negative: lambda a: Lanes(np.negative(a.v), _negated(a.t)),
    np.true_divide: _divided,
    np.power: _power,
    np.sign: _sign,
    np.greater: _compare(np.greater),
    np.greater_equal: _compare(np.greater_equal),
    np.less: _compare(np.less),
    np.less_equal: _compare(np.less_equal),
    np.equal: _compare(np.equal),
    np.not_equal: _compare(np.not_equal),
}


class Lanes(np.lib.mixins.NDArrayOperatorsMixin):
    """v + t·ε over lanes: values (an mpf, or an object array with one a lane) and tangents (None:
    0). The registry's `grads` run on them: numpy's operators and functions reach
    `__array_ufunc__` and `np.where` `__array_function__`."""

    __slots__ = ("v", "t")

    def __init__(self, v: Values, t: Values = None) -> None:
        self.v = v
        self.t = t

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method != "__call__" or kwargs:
            return NotImplemented
        args = [_lanes(x) for x in inputs]
        handler = _UFUNCS.get(ufunc)
        if handler is not None:
            return handler(*args)
        spec = elementwise_spec(ufunc.__name__)
        return NotImplemented if spec is None else _apply(spec, args, {})

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is not np.where or kwargs:
            return NotImplemented
        cond, x, y = args
        x, y = _lanes(x), _lanes(y)
        t = None if x.t is None and y.t is None else np.where(cond, _zero(x.t), _zero(y.t))
        return Lanes(np.where(cond, x.v, y.v), t)


def _zero(t: Any) -> Any:
    return _ZERO if t is None else t


def _apply(spec: OpSpec, args: Sequence[Lanes], attrs: dict[str, Any]) -> Lanes:
    """An elementwise op on Lanes: its values, and the first-order jet along the tangents."""
    values = [a.v for a in args]
    if all(a.t is None for a in args):
        return Lanes(_value_of(spec, values, attrs))
    arithmetic = ARITHMETIC.get(spec.name)
    j = arithmetic(*values, order=1) if arithmetic is not None else derive(spec, values, attrs, 1)
    t = None
    for a, slope in zip(args, j.d1):
        if a.t is not None:
            t = plus(t, times(a.t, slope))
    return Lanes(j.value, t)


def lane_decisions(decisions: Sequence[Decision], j: int) -> list[Decision]:
    """Point j's comparisons out of comparisons over lanes."""
    return [
        (_lane(a, j), _lane(b, j), bool(o[j]) if isinstance(o, np.ndarray) else o) for a, b, o in decisions
    ]


def _lane(x: Values, j: int) -> Any:
    return x[j] if isinstance(x, np.ndarray) else x
