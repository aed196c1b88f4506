"""Exact numbers: mpmath values that record how they were made, for exact gradients and
Hessian-vector products of a whole graph (`gradcheck.parity.exact`).

Every elementwise op of the registry acts on them through its entry alone (`exact_jets`: the value
by `OpSpec.mpmath`, the local derivatives, with torch's conventions at kinks and ties, by
`OpSpec.grads`, and theirs). A `Number` keeps its arguments and local derivatives on a `Tape`; one
reverse pass over the tape gives the cotangent-weighted gradient, and carried along a direction
(reverse mode over dual numbers: each adjoint has a tangent) its derivative along it, the
Hessian-vector product, in the same pass. `xp` is a numpy-like module over object arrays of
Numbers, so that the tensor ops' `array` spellings (or their `exact` ones) run on them unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker.oracle import mpmath
from gradcheck.graphs.opspec import OpSpec
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.exact_jets import (
    NUMPY_NAMES,
    Capture,
    Compared,
    Decision,
    along,
    as_mpf,
    elementwise_spec,
    jet,
    plus,
    times,
)

# --- the tape ---------------------------------------------------------------------------------


class Tape:
    """The Numbers made while it is current, in order (a topological order of their graph), and
    the comparisons their rules made. `derivatives`: record local derivatives (a reverse pass
    will run); `tangents`: carry tangents along a direction (a Hessian-vector product)."""

    current: Tape | None = None

    def __init__(self, derivatives: bool, tangents: bool) -> None:
        self.numbers: list[Number] = []
        self.decisions: list[Decision] = []
        self.derivatives = derivatives
        self.tangents = tangents and derivatives

    def __enter__(self) -> Tape:
        self._outer = Tape.current, Capture.tape
        Tape.current, Capture.tape = self, self.decisions
        return self

    def __exit__(self, *exc: Any) -> None:
        Tape.current, Capture.tape = self._outer

    def leaf(self, value: float, tangent: float = 0.0) -> Number:
        """An input: a float64 value (exact in mpmath) and its tangent along the direction."""
        return Number(as_mpf(value), as_mpf(tangent) if self.tangents else None, live=True)

    def backward(self, seeds: Sequence[tuple[Number, Any]]) -> None:
        """Accumulate d(sum of seed weight * seed) / d(each Number) into `adj` (and, with
        tangents, its derivative along the direction into `adj_t`), in reverse order. A Number
        the seeds do not reach keeps `adj` None; one reached with a zero adjoint still passes
        0 * its local derivatives on (0 * inf is nan, as in torch)."""
        for number, weight in seeds:
            number.adj = weight if number.adj is None else number.adj + weight
            if self.tangents and number.adj_t is None:
                number.adj_t = mpmath.mpf(0)
        if self.tangents:
            for n in reversed(self.numbers):
                g = n.adj
                if g is None or not n.args:
                    continue
                gt = n.adj_t
                for arg, d, dt in zip(n.args, n.d1, n.d1t):
                    c, ct = times(g, d), times(gt, d)
                    if dt is not None:
                        ct += g * dt
                    if arg.adj is None:
                        arg.adj, arg.adj_t = c, ct
                    else:
                        arg.adj += c
                        arg.adj_t += ct
            return
        for n in reversed(self.numbers):
            g = n.adj
            if g is None or not n.args:
                continue
            for arg, d in zip(n.args, n.d1):
                c = times(g, d)
                arg.adj = c if arg.adj is None else arg.adj + c


# --- numbers ------------------------------------------------------------------------------------


def _operator(op: str, reflected: bool = False) -> Callable[[Number, Any], Number]:
    """A binary operator of Numbers as registry op `op` (`reflected`: the Number on the right);
    an array on the other side is numpy's to broadcast (it calls back element by element)."""
    spec = REGISTRY[op]

    def method(self: Number, other: Any) -> Number:
        if isinstance(other, np.ndarray):
            return NotImplemented
        return apply(spec, [other, self] if reflected else [self, other], {})

    return method


class Number(Compared):
    """An exact value: its mpf value `v`, its tangent `t` along the direction (None without one),
    and when `live` (an input or an op result on a tape) the Numbers it was made of (`args`), its
    local derivatives with respect to them (`d1`) and those derivatives' tangents (`d1t`); `adj`
    and `adj_t` are filled by the reverse pass. A constant (not live) takes part in ops but gets
    no adjoint."""

    __slots__ = ("v", "t", "live", "args", "d1", "d1t", "adj", "adj_t")

    def __init__(self, v: Any, t: Any = None, live: bool = False) -> None:
        self.v = v
        self.t = t
        self.live = live
        self.args: tuple[Number, ...] = ()
        self.d1: tuple[Any, ...] = ()
        self.d1t: tuple[Any, ...] = ()
        self.adj: Any = None
        self.adj_t: Any = None

    def __repr__(self) -> str:
        return f"Number({mpmath.nstr(self.v, 20)})"

    def __float__(self) -> float:
        return float(self.v)

    __add__ = _operator("add")
    __radd__ = _operator("add", reflected=True)
    __sub__ = _operator("sub")
    __rsub__ = _operator("sub", reflected=True)
    __mul__ = _operator("mul")
    __rmul__ = _operator("mul", reflected=True)
    __truediv__ = _operator("div")
    __rtruediv__ = _operator("div", reflected=True)
    __rpow__ = _operator("pow", reflected=True)

    def __pow__(self, other: Any) -> Number:
        if isinstance(other, np.ndarray):
            return NotImplemented
        if isinstance(other, Number):
            return apply(REGISTRY["pow"], [self, other], {})
        return apply(REGISTRY["pow_const"], [self], {"exponent": float(other)})

    def __neg__(self) -> Number:
        return apply(REGISTRY["neg"], [self], {})

    def __abs__(self) -> Number:
        return apply(REGISTRY["abs"], [self], {})


def constant(x: Any) -> Number:
    """A number without a gradient (a graph's constant, a literal of a spelling) as a Number."""
    return x if isinstance(x, Number) else Number(as_mpf(x))


def apply(spec: OpSpec, args: Sequence[Any], attrs: dict[str, Any], in_range: bool = False) -> Number:
    """Elementwise op `spec` on Numbers (plain numbers are constants), recorded on the current
    tape with the local derivatives (and their tangents) the reverse pass needs; `in_range`: as
    a node of its own, its value held in float64's range (`jet`)."""
    tape = Tape.current
    numbers = [a if a.__class__ is Number else constant(a) for a in args]
    live = [i for i, n in enumerate(numbers) if n.live]
    if tape is None or not live or not tape.derivatives:
        return Number(jet(spec, [n.v for n in numbers], attrs, 0, in_range).value, live=bool(live))
    tangents = tape.tangents
    j = jet(spec, [n.v for n in numbers], attrs, 2 if tangents else 1, in_range)
    if j.decisions:
        tape.decisions.extend(j.decisions)
    d1 = j.d1
    out = Number(j.value, live=True)
    if len(live) == len(numbers):
        out.args, out.d1 = tuple(numbers), d1
    else:
        out.args, out.d1 = tuple(numbers[i] for i in live), tuple(d1[i] for i in live)
    if tangents:
        d2 = j.d2
        t = None
        for k in live:
            t = plus(t, times(numbers[k].t, d1[k]))
        out.t = t
        moving = [numbers[k].t for k in live]
        out.d1t = tuple([along(d2, moving, live, i) for i in live])
    tape.numbers.append(out)
    return out


# --- a numpy for object arrays of Numbers ----------------------------------------------------------


def elementwise(spec: OpSpec, args: Sequence[Any], attrs: dict[str, Any], in_range: bool = False) -> Any:
    """An elementwise op on Numbers or object arrays of them (broadcast as numpy does)."""
    if not any(isinstance(a, np.ndarray) for a in args):
        return apply(spec, args, attrs, in_range)
    return np.frompyfunc(lambda *xs: apply(spec, xs, attrs, in_range), len(args), 1)(*args)


class ExactArrays:
    """numpy for object arrays of Numbers, the `xp` the registry's `array` and `exact` spellings
    run on: the registry's elementwise ops by their names and numpy's (`exp`, `arctan`, `clip`,
    `maximum`, `relu`) apply their rules element by element; `logaddexp` is spelled with them;
    everything else (sums, products, reshapes, indexing, max over an axis) is numpy's own, whose
    loops over object arrays call the Numbers' operators and comparisons."""

    def __getattr__(self, name: str) -> Any:
        spec = elementwise_spec(name)
        if spec is not None:
            return lambda *args: elementwise(spec, args, {})
        return getattr(np, name)

    def clip(self, x: Any, low: float, high: float) -> Any:
        return elementwise(REGISTRY["clamp"], [x], {"low": float(low), "high": float(high)})

    def logaddexp(self, a: Any, b: Any) -> Any:
        """log(e^a + e^b): exact numbers need no shift against overflow."""
        return self.log(self.exp(a) + self.exp(b))


xp = ExactArrays()


def _number_methods() -> None:
    """The registry's elementwise ops without attributes as methods of Number, by their names and
    numpy's (numpy's `np.exp(x)` calls `x.exp()`), set on the class as `exact_jets` sets Dual's."""
    for name in [*REGISTRY, *NUMPY_NAMES]:
        spec = elementwise_spec(name)
        if spec is not None and not spec.attrs and not hasattr(Number, name):
            setattr(Number, name, lambda self, *others, spec=spec: apply(spec, [self, *others], {}))


_number_methods()
