"""The exact reference: a graph's outputs, cotangent-weighted gradients and Hessian-vector
products at K points, exact, each rounded correctly to float64 (shaped like the torch reference's
`TorchResult`: forward (F, K), grads (N, K), hvp (N, K)).

Each point is evaluated with exact numbers (every op's value and local derivatives from its
registry entry, `exact_jets`; one reverse pass over dual numbers for gradients and H·v: a scalar
graph's points all at once, `exact_lanes`, a tensor graph's number by number, `exact_numbers`)
twice, at `LOW` and at `HIGH` bits of mpmath precision. Rounding at p bits moves an
entry by at most B·2^-p, B fixed by the graph and the point (the sizes of the terms it is made of
and how much they are amplified on the way), so the two runs differ by about the low one's error,
and the high one errs at most 2^-(HIGH - LOW) times that: each entry's `radius` is the
difference times 2^(MARGIN - (HIGH - LOW)) (a margin of 2^MARGIN against a low run whose errors
happened to cancel) plus a few ulps of the high run's own last rounding. The float64 value is
**settled** when the whole interval value ± radius rounds to one float64: the correctly rounded
exact value. An entry whose exact value is 0 or far below its terms (x / x² - 1 / x: the terms
cancel) is known only to ± radius, 2^-(HIGH - MARGIN) of its terms: not settled, but closer to
the exact value than any float64 evaluation can come. A point whose rule took a branch (a kink,
a tie, the larger of two values) on a value the two runs do not determine is not settled at all
(`undecided`). Unsettled points other than these are evaluated again at twice the precision, up
to `MAX_PRECISION` bits.

Conventions: torch's at kinks and ties (the registry's `grads`: relu'(0) = 0, abs'(0) = 0,
maximum's ties half each, amax's tied maxima sharing evenly, max(dim)'s the first index). Where
the math has no finite value the result is IEEE's, as torch's: log(0) = -inf, 1 / 0 = inf,
sqrt(-1) = nan (mpmath's complex results count as nan), 0 * inf = nan, and a node whose exact
value overflows float64 holds inf from there on (and one that underflows it, 0), so nan and inf
arise where torch's do (an elementwise op's derivatives read the held value, as torch's backward
reads its result: exp's at 1000 is inf).
mpmath has no signed zero: -0.0 is 0 (1 / -0.0 is +inf here, -inf in torch).
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.oracle import mpmath
from gradcheck.graphs.ir import Constant, Graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity import exact_lanes
from gradcheck.parity.exact_jets import Decision, along, as_mpf, held, libmp, nearest_float_raw, plus, times
from gradcheck.parity.exact_numbers import Number, Tape, constant, elementwise, xp

# The two precisions each point is evaluated at (bits), and the most it is raised to.
LOW = 64
HIGH = 192
MAX_PRECISION = 1536
# The radius of an entry: the low and high runs' difference times 2^(MARGIN - (HIGH - LOW)), plus
# 2^(GUARD - HIGH) of the value (the high run's own last roundings).
MARGIN = 8
GUARD = 8


@dataclass
class Parts:
    """One array per part of a result: outputs (F, K), gradients (N, K), H·v (N, K) or None,
    J·v (F, K: each output's derivative along the direction, forward mode's answer) or None."""

    forward: np.ndarray
    grads: np.ndarray
    hvp: np.ndarray | None = None
    jvp: np.ndarray | None = None


@dataclass
class ExactResult:
    """The exact values at K points, shaped like `TorchResult`: `forward` (F, K), `grads` (N, K),
    `hvp` (N, K) or None, `jvp` (F, K: J·v along the direction) or None, each the float64
    nearest the high-precision value. `radius` (float64,
    rounded up): how far the exact value may lie from the high-precision one; `settled`: the
    float64 is the exact value correctly rounded (the whole interval rounds to it); `undecided`
    (K,): a branch at that point was taken on a value the evaluation could not determine (its
    entries are not settled); `precision`: the bits of each point's last run; `precise`, when
    asked: the high-precision values themselves (object arrays of mpmath numbers)."""

    forward: np.ndarray
    grads: np.ndarray
    hvp: np.ndarray | None
    radius: Parts
    settled: Parts
    undecided: np.ndarray
    precision: np.ndarray
    precise: Parts | None = None
    jvp: np.ndarray | None = None

    @property
    def all_settled(self) -> bool:
        parts = [self.settled.forward, self.settled.grads]
        if self.settled.hvp is not None:
            parts.append(self.settled.hvp)
        return all(bool(p.all()) for p in parts)


def run_exact_batch(
    graph: Graph,
    points: Sequence[np.ndarray],
    cotangent: np.ndarray,
    direction: np.ndarray | None = None,
    precise: bool = False,
    jvp: bool = False,
) -> ExactResult:
    """A scalar graph at K points, as `run_torch_batch`: points[i] is input i's (K,) values,
    cotangent (n_out, K), `direction` (n_in, K) asks for the Hessian-vector product too, and with
    `jvp` for the outputs' derivatives along it; `precise` keeps the high-precision values
    (`ExactResult.precise`)."""
    k = len(points[0])
    problems = [
        _Point(
            [float(p[j]) for p in points],
            [float(c) for c in np.asarray(cotangent)[:, j]],
            None if direction is None else [float(d) for d in np.asarray(direction)[:, j]],
        )
        for j in range(k)
    ]
    return _run(_Lanes(graph, jvp), problems, direction is not None, precise)


def run_exact_tensor_batch(
    graph: Graph,
    points: Sequence[np.ndarray],
    cotangent: Sequence[np.ndarray],
    direction: Sequence[np.ndarray] | None = None,
    precise: bool = False,
    jvp: bool = False,
) -> ExactResult:
    """A tensor graph at K points, as `run_torch_tensor_batch`: points[i] (K, *shape_i),
    cotangent[j] (K, *shape of output j), `direction` like points; flattened per point."""
    k = np.asarray(points[0]).shape[0]
    problems = [
        _Point(
            [np.asarray(p[j], dtype=np.float64) for p in points],
            [float(c) for cot in cotangent for c in np.ravel(np.asarray(cot)[j])],
            None if direction is None else [np.asarray(d[j], dtype=np.float64) for d in direction],
        )
        for j in range(k)
    ]
    return _run(_Tensor(graph, jvp), problems, direction is not None, precise)


def run_exact(
    graph: Graph,
    points: Sequence[np.ndarray],
    cotangent: Any,
    direction: Any = None,
    precise: bool = False,
    jvp: bool = False,
) -> ExactResult:
    """`run_exact_tensor_batch` for a tensor graph, `run_exact_batch` for a scalar one."""
    run = run_exact_tensor_batch if graph.is_tensor else run_exact_batch
    return run(graph, points, cotangent, direction, precise, jvp)


def exact_values(graph: Graph, points: Sequence[np.ndarray], precise: bool = False) -> ExactResult:
    """The outputs alone (no reverse pass: cheaper), as `torch_reference.forward_values`:
    points[i] (K,) or (K, *shape); `grads` is then (0, K)."""
    k = np.asarray(points[0]).shape[0]
    evaluator = _Tensor(graph) if graph.is_tensor else _Lanes(graph)
    problems = [_Point([np.asarray(p[j], dtype=np.float64) for p in points], None, None) for j in range(k)]
    return _run(evaluator, problems, False, precise)


# --- one point at one precision ------------------------------------------------------------------


@dataclass
class _Point:
    """One point's inputs, flat cotangent (None: no gradients) and direction."""

    inputs: list[Any]
    cotangent: list[float] | None
    direction: list[Any] | None


@dataclass
class _Values:
    """One point's entries at one precision: outputs, gradient, H·v (mpf lists) and decisions."""

    precision: int
    entries: list[Any]
    decisions: list[Decision]


def _numbers(graph: Graph, values: Sequence[Any], tape: Tape, direction: Sequence[Any] | None) -> list[Any]:
    """Each input as a live Number (or an object array of them), with its tangent."""
    leaves: list[Any] = []
    for i, value in enumerate(values):
        tangent = None if direction is None else direction[i]
        if np.ndim(value) == 0 and not graph.is_tensor:
            leaves.append(tape.leaf(float(value), 0.0 if tangent is None else float(tangent)))
            continue
        array = np.asarray(value, dtype=np.float64)
        dirs = np.zeros_like(array) if tangent is None else np.asarray(tangent, dtype=np.float64)
        out = np.empty(array.shape, dtype=object)
        for index in np.ndindex(array.shape):
            out[index] = tape.leaf(float(array[index]), float(dirs[index]))
        leaves.append(out)
    return leaves


def exact_rule(op: str) -> Any:
    """Registry op `op`'s exact form, on exact numbers (`rule(operands, attrs)`): an elementwise
    op's entry (`mpmath` with `grads`) element by element, else its `exact` spelling or its
    `array` one, on the exact numpy `xp`."""
    spec = REGISTRY[op]
    if spec.elementwise:
        return lambda args, attrs: elementwise(spec, args, attrs, in_range=True)
    form = spec.exact or spec.array
    if form is None:
        raise ValueError(f"exact reference: op {op!r} has neither an `exact` nor an `array` spelling")
    return lambda args, attrs: form(xp, args, attrs)


class _Graph:
    """A scalar graph compiled once for exact evaluation at many points and precisions."""

    def __init__(self, graph: Graph, jvp: bool = False) -> None:
        self.graph = graph
        self.jvp = jvp  # the outputs' tangents too, after the other entries
        self.steps = [(exact_rule(node.op), node, node.attr) for node in graph.nodes]

    def constant(self, c: Constant) -> Any:
        return constant(c.value)

    def node(self, value: Any, index: int) -> Any:
        return _in_range(value)

    def outputs(self, nodes: list[Any]) -> list[Number]:
        return [nodes[o] for o in self.graph.outputs]

    def evaluate_many(self, points: Sequence[_Point], precision: int) -> list[_Values]:
        return [self.evaluate(point, precision) for point in points]

    def evaluate(self, point: _Point, precision: int) -> _Values:
        derivatives = point.cotangent is not None
        with mpmath.workprec(precision), Tape(derivatives, point.direction is not None) as tape:
            leaves = _numbers(self.graph, point.inputs, tape, point.direction)
            nodes = list(leaves)
            for index, (rule, node, attrs) in enumerate(self.steps):
                nodes.append(self.node(rule(node.operands(nodes, self.constant), attrs), index))
            outputs = self.outputs(nodes)
            entries = [o.v for o in outputs]
            if derivatives:
                assert point.cotangent is not None
                weights = [mpmath.mpf(c) for c in point.cotangent]
                tape.backward([(o, w) for o, w in zip(outputs, weights) if o.live])
                flat = [x for leaf in leaves for x in np.ravel(np.asarray(leaf, dtype=object))]
                zero = mpmath.mpf(0)
                entries += [zero if x.adj is None else x.adj for x in flat]
                if tape.tangents:
                    entries += [zero if x.adj_t is None else x.adj_t for x in flat]
            if self.jvp and tape.tangents:
                entries += [mpmath.mpf(0) if o.t is None else o.t for o in outputs]
            return _Values(precision, entries, tape.decisions)


class _Lanes:
    """A scalar graph compiled once, evaluated at many points at once (`exact_lanes`)."""

    def __init__(self, graph: Graph, jvp: bool = False) -> None:
        self.graph = graph
        self.jvp = jvp  # the outputs' tangents too, after the other entries
        ids = list(range(graph.n_inputs + len(graph.nodes)))
        self.steps = [(REGISTRY[node.op], node.attr, node.operands(ids, lambda c: c)) for node in graph.nodes]

    def evaluate_many(self, points: Sequence[_Point], precision: int) -> list[_Values]:
        """Every point's entries and decisions at `precision`: the outputs, and with cotangents
        the gradient (and with a direction H·v), each node's values a lane per point."""
        graph, n_in = self.graph, self.graph.n_inputs
        derivatives = points[0].cotangent is not None
        tangents = derivatives and points[0].direction is not None
        order = 2 if tangents else 1 if derivatives else 0
        column = lambda values: np.array([as_mpf(v) for v in values], dtype=object)
        with mpmath.workprec(precision), Tape(derivatives=False, tangents=False) as log:
            values = [column(p.inputs[i] for p in points) for i in range(n_in)]
            moving = [column(p.direction[i] for p in points) for i in range(n_in)] if tangents else []
            records = []
            for spec, attrs, operands in self.steps:
                # constants as full lanes: an mpf meeting an array on its left is slow in mpmath
                args = [
                    values[o] if isinstance(o, int) else column([o.value] * len(points)) for o in operands
                ]
                jet = exact_lanes.node_jet(spec, args, attrs, order)
                log.decisions.extend(jet.decisions)
                values.append(jet.value)
                if derivatives:
                    live = [k for k, o in enumerate(operands) if isinstance(o, int)]
                    ids = [operands[k] for k in live]
                    d1t = None
                    if tangents:
                        t = None
                        for k in live:
                            t = plus(t, times(moving[operands[k]], jet.d1[k]))
                        moving.append(t)
                        d1t = [along(jet.d2, [moving[operands[k]] for k in live], live, i) for i in live]
                    records.append((ids, [jet.d1[k] for k in live], d1t))
            entries = [values[o] for o in graph.outputs]
            if derivatives:
                entries += self._backward(points, records, tangents)
            if self.jvp and tangents:
                zeros = np.array([mpmath.mpf(0)] * len(points), dtype=object)
                entries += [zeros if moving[o] is None else moving[o] for o in graph.outputs]
            decisions = log.decisions
        return [
            _Values(precision, [e[j] for e in entries], exact_lanes.lane_decisions(decisions, j))
            for j in range(len(points))
        ]

    def _backward(self, points: Sequence[_Point], records: list[Any], tangents: bool) -> list[Any]:
        """The reverse pass over the nodes, lane by lane: each input's adjoint (and its tangent)."""
        graph, n_in = self.graph, self.graph.n_inputs
        adj: list[Any] = [None] * (n_in + len(graph.nodes))
        adj_t: list[Any] = [None] * len(adj)
        zero = mpmath.mpf(0)
        for o, out in enumerate(graph.outputs):
            weight = np.array([as_mpf(p.cotangent[o]) for p in points], dtype=object)
            adj[out] = weight if adj[out] is None else adj[out] + weight
            if tangents and adj_t[out] is None:
                adj_t[out] = np.array([zero] * len(points), dtype=object)
        for i in reversed(range(len(records))):
            g = adj[n_in + i]
            if g is None:
                continue
            ids, d1, d1t = records[i]
            gt = adj_t[n_in + i]
            for k, (arg, d) in enumerate(zip(ids, d1)):
                c = times(g, d)
                adj[arg] = c if adj[arg] is None else adj[arg] + c
                if tangents:
                    ct = times(gt, d)
                    if d1t[k] is not None:
                        ct = ct + g * d1t[k]
                    adj_t[arg] = ct if adj_t[arg] is None else adj_t[arg] + ct
        k = len(points)
        zeros = np.array([zero] * k, dtype=object)
        out = [zeros if a is None else np.broadcast_to(a, (k,)) for a in adj[:n_in]]
        if tangents:
            out += [zeros if a is None else np.broadcast_to(a, (k,)) for a in adj_t[:n_in]]
        return out


class _Tensor(_Graph):
    """A tensor graph: each node an object array of its shape (one point, no batch axis)."""

    def __init__(self, graph: Graph, jvp: bool = False) -> None:
        super().__init__(graph, jvp)
        self.shapes = graph_shapes(graph)

    def constant(self, c: Constant) -> Any:
        return np.array(constant(c.value), dtype=object) if c.tensor else constant(c.value)

    def node(self, value: Any, index: int) -> Any:
        shape = self.shapes[self.graph.n_inputs + index]
        array = np.asarray(value, dtype=object)
        if array.shape != shape:
            array = array.reshape(shape)
        out = np.empty(shape, dtype=object)
        for i in np.ndindex(shape):
            out[i] = _in_range(array[i])
        return out

    def outputs(self, nodes: list[Any]) -> list[Number]:
        return [x for o in self.graph.outputs for x in np.ravel(nodes[o])]


def _in_range(x: Any) -> Number:
    """A node's element as a Number whose value float64 can hold (`exact_numbers.held`: +-inf
    for a value that overflows float64, 0 for one that underflows it, as torch's node holds),
    the gradient passing through unchanged. An elementwise op's node is held already (its local
    derivatives read the held value, as torch's do); this holds a tensor op's result."""
    n = x if isinstance(x, Number) else constant(x)
    value = held(n.v)
    if value is n.v:
        return n
    out = Number(value, n.t, n.live)
    if n.live:
        out.args, out.d1 = (n,), (mpmath.mpf(1),)
        out.d1t = (None,)
        if Tape.current is not None and Tape.current.derivatives:
            Tape.current.numbers.append(out)
    return out


# --- precision, rounding, the result ------------------------------------------------------------


def _entry(lo: Any, hi: Any, delta: int, high: int) -> tuple[float, float, bool, bool]:
    """An entry's float64, radius, whether settled and whether noise (below the low run's
    resolution), from its values at two precisions `delta` bits apart, the higher `high`. Runs
    that agree to the last bit saw no rounding: the radius is 0 (an exact sum of float64s may
    sit on a float64 midpoint, which ties to even)."""
    a, b = lo._mpf_, hi._mpf_
    if not (b[1] and a[1]) and (b == libmp.fnan or b in _INFINITIES or a == libmp.fnan or a in _INFINITIES):
        same = a == b
        return nearest_float_raw(b), 0.0 if same else math.inf, same, False
    if a == b:
        return nearest_float_raw(b), 0.0, True, False
    gap = libmp.mpf_abs(libmp.mpf_sub(a, b))  # exact
    radius = libmp.mpf_add(
        libmp.mpf_shift(gap, MARGIN - delta), libmp.mpf_shift(libmp.mpf_abs(b), GUARD - high), 64, "u"
    )
    value = nearest_float_raw(b)
    settled = nearest_float_raw(libmp.mpf_sub(b, radius)) == nearest_float_raw(libmp.mpf_add(b, radius))
    noise = not settled and libmp.mpf_cmp(libmp.mpf_abs(b), gap) <= 0
    bound = nearest_float_raw(radius)
    if libmp.mpf_cmp(libmp.from_float(bound), radius) < 0:
        bound = math.nextafter(bound, math.inf)
    return value, bound, settled, noise


_INFINITIES = (libmp.finf, libmp.fninf)


def _undecided(lo: Sequence[Decision], hi: Sequence[Decision]) -> bool:
    """Whether a branch was taken on a value the two runs do not determine: the runs compared
    differently, or a compared difference is not known to one bit (an exact tie, the same at both
    precisions, is decided)."""
    if len(lo) != len(hi):
        return True
    for (a1, b1, o1), (a2, b2, o2) in zip(lo, hi):
        if o1 != o2:
            return True
        d1, d2 = libmp.mpf_sub(a1._mpf_, b1._mpf_), libmp.mpf_sub(a2._mpf_, b2._mpf_)
        if d1 == d2:
            continue  # the same difference at both precisions (an exact tie among them)
        if libmp.mpf_cmp(libmp.mpf_abs(d2), libmp.mpf_shift(libmp.mpf_abs(libmp.mpf_sub(d1, d2)), 1)) <= 0:
            return True
    return False


def _settle(evaluator: _Graph | _Lanes, points: list[_Point]) -> list[tuple[list[Any], bool, _Values]]:
    """Each point's entries (float64, radius, settled), whether undecided, and its last run: at
    LOW and HIGH bits, then at twice the last precision while an entry is neither settled nor
    noise or the point is undecided, up to MAX_PRECISION (the points still pending together)."""
    done: list[Any] = [None] * len(points)
    pending = list(range(len(points)))
    lo, hi = evaluator.evaluate_many(points, LOW), evaluator.evaluate_many(points, HIGH)
    while True:
        retry = []
        for index, j in enumerate(pending):
            undecided = _undecided(lo[index].decisions, hi[index].decisions)
            delta, high = hi[index].precision - lo[index].precision, hi[index].precision
            judged = [_entry(a, b, delta, high) for a, b in zip(lo[index].entries, hi[index].entries)]
            waiting = undecided or any(not settled and not noise for _, _, settled, noise in judged)
            if waiting and 2 * high <= MAX_PRECISION:
                retry.append(index)
            else:
                entries = [(value, radius, settled and not undecided) for value, radius, settled, _ in judged]
                done[j] = entries, undecided, hi[index]
        if not retry:
            return done
        pending = [pending[index] for index in retry]
        lo = [hi[index] for index in retry]
        hi = evaluator.evaluate_many([points[j] for j in pending], 2 * lo[0].precision)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while points are evaluated: exact numbers are
    millions of small objects that form no cycles, and the collector's passes over them cost a
    quarter of the time (`benchmarks/bench_exact.py`)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _run(evaluator: _Graph | _Lanes, problems: list[_Point], hvp: bool, precise: bool) -> ExactResult:
    k = len(problems)
    columns, undecided, precision, values = [], np.zeros(k, dtype=bool), np.zeros(k, dtype=np.int64), []
    with _collector_paused():
        for j, (entries, undecided[j], last) in enumerate(_settle(evaluator, problems)):
            columns.append(entries)
            precision[j] = last.precision
            values.append(last.entries)
    table = np.array([[e[0] for e in col] for col in columns], dtype=np.float64).T
    radius = np.array([[e[1] for e in col] for col in columns], dtype=np.float64).T
    settled = np.array([[e[2] for e in col] for col in columns], dtype=bool).T
    exact = np.empty((len(values[0]), k), dtype=object)
    for j, column in enumerate(values):
        exact[:, j] = column
    f = _forward_size(evaluator)
    tangents = f if evaluator.jvp and hvp else 0
    n = 0 if problems[0].cotangent is None else (table.shape[0] - f - tangents) // (2 if hvp else 1)

    def parts(a: np.ndarray) -> Parts:
        end = f + n * (2 if hvp else 1)
        return Parts(a[:f], a[f : f + n], a[f + n : end] if hvp else None, a[end:] if tangents else None)

    result = parts(table)
    return ExactResult(
        result.forward,
        result.grads,
        result.hvp,
        parts(radius),
        parts(settled),
        undecided,
        precision,
        parts(exact) if precise else None,
        result.jvp,
    )


def _forward_size(evaluator: _Graph | _Lanes) -> int:
    if isinstance(evaluator, _Tensor):
        return sum(int(np.prod(evaluator.shapes[o])) for o in evaluator.graph.outputs)
    return len(evaluator.graph.outputs)
