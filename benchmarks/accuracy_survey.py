"""The accuracy survey: torch, JAX, HIPS autograd and minigrad judged against the exact values.

Each engine is the engine under test; the judge is the exact value (`gradcheck.parity.exact`,
mpmath, rounded once) with the rounding bound of any correct evaluation (`parity.any_order`, in
float64 or float32): an entry is a difference when |engine - exact| > BOUND_SAFETY x that bound
(plus a few of the precision's smallest subnormals: the bound does not model underflow). Forward
values and cotangent-weighted gradients are judged so; Hessian-vector products (each engine's own
second derivatives: torch's double backward, JAX's forward over reverse, HIPS autograd's and
minigrad's reverse over reverse) by BOUND_SAFETY x HVP_SAFETY x the H·v rounding bound of
`parity.bound` (the running error analysis of torch's second backward pass, the allowance the
parity check already gives H·v against torch, here against the exact value; docs/accuracy.md says
why that is the allowance and where it is weaker than the first-order bound).

What is checked: every registry op alone in every region of its domain (ordinary, tiny, large,
huge, near its poles, near its kinks and ties, exactly at its kinks, near the zeros where its
result cancels), and random multi-op graphs as campaigns draw them, scalar and tensor, each engine
in float64 and (torch, minigrad's Tensor) float32 at float32-rounded inputs. Besides the verdicts it
measures, on one-op graphs, each engine's worst relative error of the value and of the derivative
in ulps: a derivative that loses accuracy against its own forward (tanh' as 1 - tanh(x)^2, which
is 0 where the exact value is 4 e^(-2|x|)) shows as a derivative far worse than its value, inside
the bound (which allows the rounding of a result a derivative reads) but not inside a few ulps.

Not a pytest-benchmark benchmark: it times nothing. Why a script and not a test: it measures other
people's frameworks (their versions decide the
numbers, and the answer is a table for docs/accuracy.md, not a pass or fail), and it takes minutes.
`benchmarks/tests/test_accuracy_survey.py` checks that it judges as it says on a small run.

    python benchmarks/accuracy_survey.py                        # everything (about 15-30 min)
    python benchmarks/accuracy_survey.py --subjects torch --graphs 2 --out out/survey.json
"""

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.bound import RoundingBounds
from gradcheck.parity.errors import BOUND_SAFETY, HVP_SAFETY
from gradcheck.parity.exact import run_exact
from gradcheck.parity.runs import random_cotangent
from gradcheck.testing.accuracy import tensor_graphs

TORCH = "gradcheck.engines.torch_engine:TorchAdapter"
F32 = np.finfo(np.float32)
# Subnormals the bound does not model: this many of the precision's smallest per node, absolute.
SUBNORMALS = {"float64": 2.0**-1074, "float32": 2.0**-149}
UNIT = {"float64": float(np.finfo(np.float64).eps), "float32": float(F32.eps)}
# An entry this many ulps of the exact value from it agrees whatever its bound (as
# `errors.AGREEING_ULPS` lets an entry that close to torch's pass unexamined).
AGREEING_ULPS = 2.0


@dataclass(frozen=True)
class Subject:
    """An engine under test, in one precision, on scalar or tensor graphs."""

    label: str
    spec: str
    dtype: str
    tensor: bool

    @property
    def name(self) -> str:
        return f"{self.label} {self.dtype} {'tensor' if self.tensor else 'scalar'}"


SUBJECTS = (
    Subject("torch", TORCH, "float64", False),
    Subject("torch", TORCH, "float64", True),
    Subject("torch", TORCH, "float32", False),
    Subject("torch", TORCH, "float32", True),
    Subject("jax", "jax", "float64", False),
    Subject("jax", "jax-tensor", "float64", True),
    Subject("autograd", "autograd", "float64", False),
    Subject("autograd", "autograd-tensor", "float64", True),
    Subject("minigrad", "minigrad", "float64", False),
    Subject("minigrad", "minigrad-tensor", "float64", True),
    Subject("minigrad", "minigrad-tensor", "float32", True),
)

# --- regions: where on an op's domain the points of a one-op graph lie ------------------------------

Sampler = Callable[[np.random.Generator, int, int, str], list[np.ndarray]]


def _magnitudes(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    signs = np.where(rng.integers(0, 2, size=n) == 0, -1.0, 1.0)
    return signs * 10.0 ** rng.uniform(lo, hi, size=n)


def _band(lo: float, hi: float, lo32: float | None = None, hi32: float | None = None) -> Sampler:
    def sample(rng: np.random.Generator, arity: int, n: int, dtype: str) -> list[np.ndarray]:
        a, b = (lo, hi) if dtype == "float64" else (lo32 if lo32 is not None else lo, hi32 or hi)
        return [_magnitudes(rng, n, a, b) for _ in range(arity)]

    return sample


def _near(position_of: Callable[[str], int | None], at: Callable[[str], float], op: str) -> Sampler:
    """Ordinary operands, the one at position `position_of(op)` at `at(op)` plus a tiny offset."""

    def sample(rng: np.random.Generator, arity: int, n: int, dtype: str) -> list[np.ndarray]:
        values = [_magnitudes(rng, n, -1.0, 1.0) for _ in range(arity)]
        p = position_of(op)
        if p is None:
            return []
        low = -300.0 if dtype == "float64" else -37.0
        centre = at(op)
        offset = _magnitudes(rng, n, low, -3.0)
        values[p] = centre + offset * max(abs(centre), 1.0)
        return values

    return sample


# Where each op has a pole or a kink (operand position), and where its result is 0 with a nonzero
# argument (it cancels there: relative accuracy is hardest).
POLES = {"div": 1, "log": 0, "sqrt": 0, "pow_const": 0, "atan2": 1, "pow": 0}
KINKS = {"relu": 0, "abs": 0}
ZEROS: dict[str, tuple[int, float]] = {
    "log": (0, 1.0),
    "sin": (0, math.pi),
    "cos": (0, math.pi / 2),
    "pow": (0, 1.0),
    "sub": (1, 0.0),  # b near a: filled in by `_cancelling`
    "add": (1, 0.0),
    "atan2": (0, 0.0),
}


def _cancelling(op: str) -> Sampler:
    """add and sub with operands that nearly cancel; the others near their zero `ZEROS[op]`."""

    def sample(rng: np.random.Generator, arity: int, n: int, dtype: str) -> list[np.ndarray]:
        a = _magnitudes(rng, n, -1.0, 1.0)
        delta = _magnitudes(rng, n, -15.0 if dtype == "float64" else -7.0, -3.0)
        if op in ("add", "sub"):
            b = a * (1.0 + delta)
            return [a, -b if op == "add" else b]
        position, centre = ZEROS[op]
        values = [_magnitudes(rng, n, -1.0, 1.0) for _ in range(arity)]
        if op in ("sin", "cos"):  # near a multiple of pi (the zero of the rounded argument)
            k = rng.integers(-20, 21, size=n)
            values[position] = centre + k * math.pi + delta
        else:
            values[position] = centre + delta
        return values

    return sample


def scalar_regions(op: str) -> dict[str, Sampler]:
    """The regions a scalar op is surveyed in, each a sampler of its operands."""
    regions: dict[str, Sampler] = {
        "ordinary": _band(-1.0, 1.0),
        "tiny": _band(-300.0, -6.0, -37.0),
        "large": _band(1.0, 4.0),
        "huge": _band(4.0, 300.0, 4.0, 37.5),
    }
    if op in POLES:
        regions["near a pole"] = _near(POLES.get, lambda _: 0.0, op)
    if op in KINKS:
        regions["near a kink"] = _near(KINKS.get, lambda _: 0.0, op)
    if op in ZEROS:
        regions["near a zero"] = _cancelling(op)
    return regions


def _attr_sets(op: str) -> list[dict[str, Any]]:
    spec = REGISTRY[op]
    sets: list[dict[str, Any]] = [{}]
    for name, options in spec.attrs.items():
        sets = [{**s, name: v} for s in sets for v in options]
    return sets


def scalar_case_graphs(
    op: str, region: str, rng: np.random.Generator, points: int, dtype: str
) -> list[Graph]:
    """One-op graphs of scalar op `op` with `points` points in `region` (per attribute set),
    whose reference value and derivatives are finite (and, in float32, within float32's range)."""
    spec = REGISTRY[op]
    sampler = scalar_regions(op)[region]
    graphs = []
    for attrs in _attr_sets(op):
        kept: list[np.ndarray] = [np.zeros(0)] * spec.arity
        for _ in range(40):
            draw = sampler(rng, spec.arity, 8 * points, dtype)
            if not draw:
                break
            if op == "pow":  # its domain: a positive base
                draw[0] = np.abs(draw[0])
            if dtype == "float32":
                draw = [d.astype(np.float32).astype(np.float64) for d in draw]
            ok = _finite(spec, draw, attrs, dtype)
            kept = [np.concatenate([k, d[ok]]) for k, d in zip(kept, draw)]
            if kept[0].size >= points:
                break
        if kept[0].size == 0:
            continue
        values = [k[:points] for k in kept]
        inputs = [Input(f"x{i}", float(v[0])) for i, v in enumerate(values)]
        node = OpNode(op, tuple(range(spec.arity)), tuple(sorted(attrs.items())))
        graphs.append(Graph(inputs, [node], [spec.arity], points=values, meta={"region": region}))
    return graphs


def _finite(spec: Any, args: list[np.ndarray], attrs: dict[str, Any], dtype: str) -> np.ndarray:
    """Per point: the reference value and local derivatives finite, not nan (and in float32's range)."""
    with np.errstate(all="ignore"):
        out = np.asarray(spec.numpy(args, attrs), dtype=np.float64)
        ok = np.isfinite(out)
        for d in spec.grads(args, attrs, out):
            ok &= np.isfinite(np.broadcast_to(np.asarray(d, dtype=np.float64), out.shape))
        if dtype == "float32":
            ok &= np.abs(out) < F32.max / 4
            for a in args:
                ok &= (a == 0) | (np.abs(a) > F32.tiny)
    return ok


def kink_graphs(ops: Sequence[str], tensor: bool) -> list[Graph]:
    """Each registry kink case of `ops` as a one-op graph (one point): torch's conventions."""
    graphs = []
    for op in ops:
        for values, attrs in REGISTRY[op].kink_cases:
            if tensor != any(np.ndim(v) for v in values):
                continue
            inputs = [
                Input(f"x{i}", np.asarray(v, dtype=np.float64), np.shape(v))
                if np.ndim(v)
                else Input(f"x{i}", float(v))
                for i, v in enumerate(values)
            ]
            points = [np.asarray(v, dtype=np.float64)[None] for v in values]
            node = OpNode(op, tuple(range(len(values))), tuple(sorted(attrs.items())))
            meta = {"region": "at a kink", **({"kind": "tensor"} if tensor else {})}
            graphs.append(Graph(inputs, [node], [len(values)], points=points, meta=meta))
    return graphs


# Tensor ops: the generator's one-op graphs, their inputs scaled into a region (or brought near a tie).
TENSOR_SCALES = {"tiny": (-300.0, -6.0, -30.0), "large": (1.0, 4.0, 4.0), "huge": (4.0, 300.0, 30.0)}
TIES = ("amax", "amin", "max_dim", "min_dim", "maximum", "minimum", "clamp")


def tensor_case_graphs(op: str, rng: np.random.Generator, graphs: int, dtype: str) -> list[Graph]:
    """One-op graphs of tensor op `op` in each region (4 points each), in `meta["region"]`."""
    base = tensor_graphs(op, rng, 4 * graphs)
    out = []
    for g in base:
        out.append(_with_points(g, [np.asarray(p) for p in g.points], "ordinary", dtype))
        for region, (lo, hi, hi32) in TENSOR_SCALES.items():
            top = hi if dtype == "float64" else hi32
            bottom = lo if dtype == "float64" or lo > 0 else -30.0
            scale = 10.0 ** rng.uniform(bottom, top)
            out.append(_with_points(g, [np.asarray(p) * scale for p in g.points], region, dtype))
        if op in TIES:
            out.append(_with_points(g, _near_ties(g, rng, op, dtype), "near a tie", dtype))
    return [g for g in out if g is not None]


def _near_ties(g: Graph, rng: np.random.Generator, op: str, dtype: str) -> list[np.ndarray]:
    """Every input element near one value (a clamp's near its bound), nudged by 1e-15 to 1e-3
    relative (1e-7 to 1e-3 in float32)."""
    points = [np.asarray(p, dtype=np.float64) for p in g.points]
    attrs = g.nodes[0].attr
    centre = attrs.get("low", 0.5) if op == "clamp" else float(np.ravel(points[0])[0])
    lowest = -15.0 if dtype == "float64" else -7.0
    return [
        centre * (1.0 + _magnitudes(rng, p.size, lowest, -3.0).reshape(p.shape)) + (centre == 0) * 1e-9
        for p in points
    ]


def _with_points(g: Graph, points: list[np.ndarray], region: str, dtype: str) -> Graph | None:
    if dtype == "float32":
        points = [p.astype(np.float32).astype(np.float64) for p in points]
    if not all(np.isfinite(p).all() for p in points):
        return None
    inputs = [Input(i.name, np.asarray(p[0]), i.shape) for i, p in zip(g.inputs, points)]
    return Graph(
        inputs, g.nodes, g.outputs, points=points, meta={**g.meta, "kind": "tensor", "region": region}
    )


# --- judging one graph ------------------------------------------------------------------------------


@dataclass
class Reference:
    """A graph's points, cotangents, direction, exact values and allowances, in one precision."""

    graph: Graph
    dtype: str
    batch: list[np.ndarray]
    cot: Any
    direction: Any
    exact: Any
    forward_allowed: np.ndarray  # (F, K)
    grads_allowed: np.ndarray  # (N, K)
    hvp_allowed: np.ndarray | None  # (N, K)


def reference(graph: Graph, dtype: str, rng: np.random.Generator, hvp: bool) -> Reference:
    """The exact values and each entry's allowance at the graph's points (already in `dtype`)."""
    k = graph.n_points
    batch = [np.asarray(p, dtype=np.float64) for p in graph.points]
    shapes = graph_shapes(graph) if graph.is_tensor else None
    float32 = dtype == "float32"
    round32 = (lambda x: x.astype(np.float32).astype(np.float64)) if float32 else (lambda x: x)
    if graph.is_tensor:
        cot: Any = [round32(random_cotangent(rng, (k, *shapes[o]))) for o in graph.outputs]
        direction: Any = [round32(rng.normal(size=(k, *i.shape))) for i in graph.inputs] if hvp else None
    else:
        cot = round32(random_cotangent(rng, (len(graph.outputs), k)))
        direction = round32(rng.normal(size=(graph.n_inputs, k))) if hvp else None
    exact = run_exact(graph, batch, cot, direction)
    with np.errstate(all="ignore"):
        bounds = any_order_bounds(graph, batch, cot, float32=float32)
        floor = SUBNORMALS[dtype] * 4 * (len(graph.nodes) + 1)
        hvp_allowed = None
        if hvp:
            second = RoundingBounds(graph, batch, cot, direction, full=True).full(float32).grads
            hvp_allowed = BOUND_SAFETY * HVP_SAFETY * second + floor
    return Reference(
        graph,
        dtype,
        batch,
        cot,
        direction,
        exact,
        BOUND_SAFETY * bounds.forward + floor,
        BOUND_SAFETY * bounds.grads + floor,
        hvp_allowed,
    )


def _pattern(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), 2, np.where(np.isinf(x), np.sign(x), 0)).astype(int)


def judge(
    engine: np.ndarray, exact: np.ndarray, allowed: np.ndarray, dtype: str
) -> tuple[np.ndarray, np.ndarray]:
    """Which entries differ, and which the bound cannot judge. Where both are finite: within
    AGREEING_ULPS of the exact value, or within the allowance; an allowance that is not a number
    (the bound's own arithmetic overflowed: second derivatives at 1e-300) leaves an entry further
    off unjudged. Otherwise the pattern of nan and inf decides (in float32, an inf where the exact
    value is beyond float32's range is float32's overflow, no difference)."""
    with np.errstate(all="ignore"):
        beyond = (dtype == "float32") & np.isfinite(exact) & (np.abs(exact) > F32.max)
        exact_as = np.where(beyond, np.sign(exact) * np.inf, exact)
        same = _pattern(engine) == _pattern(exact_as)
        finite = np.isfinite(engine) & np.isfinite(exact_as)
        error = np.abs(engine - exact_as)
        agree = error <= AGREEING_ULPS * UNIT[dtype] * np.abs(exact_as)
        close = agree | (error <= allowed)
        unjudged = finite & ~agree & ~np.isfinite(allowed)
        return ~np.where(finite, close, same) & ~unjudged, unjudged


@dataclass
class Tally:
    """Entries checked and differences, per (subject, kind, op, region, part); the differences
    themselves; each one-op case's worst relative errors in ulps (value, derivative)."""

    counts: dict[tuple[str, ...], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    differences: list[dict[str, Any]] = field(default_factory=list)
    ulps: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)

    def add(self, key: tuple[str, ...], bad: np.ndarray, unjudged: np.ndarray, checked: np.ndarray) -> None:
        counts = self.counts[key]
        counts[0] += int(checked.sum())
        counts[1] += int((bad & checked).sum())
        counts[2] += int((unjudged & checked).sum())


def engine_answers(
    adapter: EngineAdapter, ref: Reference
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, str | None]:
    """The engine's forward (F, K), gradients (N, K) and H·v (N, K) at the reference's points, or
    the exception it raised, in words."""
    g, k = ref.graph, ref.graph.n_points
    tensor = g.is_tensor
    cast = np.float32 if ref.dtype == "float32" else np.float64
    points = [[np.asarray(b[p], dtype=cast) if tensor else float(b[p]) for b in ref.batch] for p in range(k)]
    if tensor:
        cots = [[np.asarray(c[p], dtype=cast) for c in ref.cot] for p in range(k)]
    else:
        cots = [[float(c) for c in ref.cot[:, p]] for p in range(k)]
    try:
        with np.errstate(all="ignore"):
            results = list(adapter.run_points(g, points, cots))
        forward = np.stack([_flat(f) for f, _ in results], axis=1)
        grads = np.stack([_flat(gr) for _, gr in results], axis=1)
    except Exception as e:  # an engine that raises is a difference where the exact value is a number
        return None, None, None, f"{type(e).__name__}: {e}"
    hvp = None
    if ref.direction is not None and adapter.create_graph:
        try:
            columns = []
            for p in range(k):
                direction = (
                    [np.asarray(d[p], dtype=cast) for d in ref.direction]
                    if tensor
                    else [float(d) for d in ref.direction[:, p]]
                )
                with np.errstate(all="ignore"):
                    columns.append(_flat(adapter.run_hvp(g, points[p], cots[p], direction)))
            hvp = np.stack(columns, axis=1)
        except Exception:
            hvp = None
    return forward, grads, hvp, None


def _flat(values: Sequence[Any]) -> np.ndarray:
    if not len(values):
        return np.zeros(0)
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in values])


def survey_graph(
    subject: Subject, adapter: EngineAdapter, ref: Reference, op: str, region: str, tally: Tally, one_op: bool
) -> None:
    """Judge the subject's answers on one graph and add them to `tally`."""
    kind = "tensor" if ref.graph.is_tensor else "scalar"
    forward, grads, hvp, raised = engine_answers(adapter, ref)
    exact = ref.exact
    decided = ~exact.undecided
    parts = [("forward", forward, exact.forward, ref.forward_allowed)]
    parts.append(("gradient", grads, exact.grads, ref.grads_allowed))
    if hvp is not None and exact.hvp is not None and ref.hvp_allowed is not None:
        parts.append(("hvp", hvp, exact.hvp, ref.hvp_allowed))
    for part, answer, truth, allowed in parts:
        key = (subject.name, kind, op, region, part)
        checked = np.broadcast_to(decided, truth.shape)
        if answer is None or answer.shape != truth.shape:
            bad, unjudged = np.ones(truth.shape, dtype=bool), np.zeros(truth.shape, dtype=bool)
        else:
            bad, unjudged = judge(answer, truth, allowed, ref.dtype)
        tally.add(key, bad, unjudged, checked)
        for verdict, flagged in (("differs", bad), ("unjudged", unjudged)):
            for e, p in list(zip(*np.nonzero(flagged & checked)))[:3]:
                record = _difference(key, ref, part, int(e), int(p), answer, truth, allowed, raised)
                tally.differences.append({**record, "verdict": verdict})
    if one_op and forward is not None and grads is not None:
        _track_ulps(tally, (subject.name, kind, op, region), ref, forward, grads)


def _difference(
    key: tuple[str, ...],
    ref: Reference,
    part: str,
    e: int,
    p: int,
    answer: np.ndarray | None,
    truth: np.ndarray,
    allowed: np.ndarray,
    raised: str | None,
) -> dict[str, Any]:
    g = ref.graph
    instance = g.instance(p)
    record = {
        "key": list(key),
        "part": part,
        "entry": e,
        "point": p,
        "engine": None if answer is None or answer.shape != truth.shape else float(answer[e, p]),
        "exact": float(truth[e, p]),
        "allowed": float(allowed[e, p]),
        "raised": raised,
        "graph": json.loads(instance.to_json()),
        "cotangent": _column(ref.cot, p, g.is_tensor),
        "direction": None if ref.direction is None else _column(ref.direction, p, g.is_tensor),
    }
    return record


def _column(x: Any, p: int, tensor: bool) -> list[Any]:
    if tensor:
        return [np.asarray(a[p]).tolist() for a in x]
    return [float(v) for v in np.asarray(x)[:, p]]


def _track_ulps(
    tally: Tally, key: tuple[str, ...], ref: Reference, forward: np.ndarray, grads: np.ndarray
) -> None:
    """The worst relative error in ulps of the value and of the gradient (where the exact value is
    finite and nonzero), and the point of the worst gradient."""
    unit = UNIT[ref.dtype]
    found = tally.ulps.setdefault(key, {"value": 0.0, "gradient": 0.0, "example": None})
    decided = ~ref.exact.undecided
    for part, answer, truth in (("value", forward, ref.exact.forward), ("gradient", grads, ref.exact.grads)):
        with np.errstate(all="ignore"):
            tiny = 2.0**-1022 if ref.dtype == "float64" else float(F32.tiny)
            usable = np.isfinite(truth) & (np.abs(truth) >= tiny) & decided & np.isfinite(answer)
            if ref.dtype == "float32":
                usable &= np.abs(truth) <= F32.max
            ulps = np.where(usable, np.abs(answer - truth) / (unit * np.abs(truth)), 0.0)
        if ulps.size and ulps.max() > found[part]:
            found[part] = float(ulps.max())
            if part == "gradient":
                e, p = np.unravel_index(int(np.argmax(ulps)), ulps.shape)
                found["example"] = {
                    "inputs": [np.asarray(b[p]).tolist() for b in ref.batch],
                    "attrs": ref.graph.nodes[0].attr,
                    "engine": float(answer[e, p]),
                    "exact": float(truth[e, p]),
                }


# --- the cases ----------------------------------------------------------------------------------------


@dataclass
class Case:
    """A graph and what it is counted as."""

    graph: Graph
    op: str
    region: str
    one_op: bool


def cases(kind: str, dtype: str, graphs: int, random_graphs: int, seed: int) -> list[Case]:
    rng = np.random.default_rng([seed, 0 if kind == "scalar" else 1, 0 if dtype == "float64" else 1])
    found: list[Case] = []
    if kind == "scalar":
        for op in SCALAR_OPS:
            for region in scalar_regions(op):
                for g in scalar_case_graphs(op, region, rng, 16 * graphs, dtype):
                    found.append(Case(g, op, region, True))
        for g in kink_graphs(SCALAR_OPS, tensor=False):
            found.append(Case(g, g.nodes[0].op, "at a kink", True))
        sizes = Sizes(nodes=(30, 30), deep_every=0)
    else:
        for op in TENSOR_OPS:
            if op in SCALAR_OPS:
                continue
            for g in tensor_case_graphs(op, rng, graphs, dtype):
                found.append(Case(g, op, g.meta["region"], True))
        for g in kink_graphs(TENSOR_OPS, tensor=True):
            found.append(Case(g, g.nodes[0].op, "at a kink", True))
        sizes = Sizes()
    for _ in range(random_graphs):
        g = random_graph(rng, tensor=kind == "tensor", points=16 if kind == "scalar" else 4, sizes=sizes)
        if dtype == "float32":
            g = _with_points(g, [np.asarray(p) for p in g.points], "ordinary", dtype) or g
            g.meta.pop("kind", None) if kind == "scalar" else None
        found.append(Case(g, "random graphs", "ordinary", False))
    return found


def survey(
    subjects: Sequence[Subject], graphs: int, random_graphs: int, seed: int, log: Callable[[str], None]
) -> Tally:
    tally = Tally()
    groups: dict[tuple[str, str], list[Subject]] = defaultdict(list)
    for s in subjects:
        groups["tensor" if s.tensor else "scalar", s.dtype].append(s)
    for (kind, dtype), members in groups.items():
        adapters = {s: load_engine(s.spec) for s in members}
        adapters = {s: a.in_dtype(dtype) if dtype != "float64" else a for s, a in adapters.items()}
        found = cases(kind, dtype, graphs, random_graphs, seed)
        start = time.perf_counter()
        rng = np.random.default_rng([seed, 7])
        for n, case in enumerate(found):
            users = [s for s in members if set(case.graph.ops()) <= set(adapters[s].ops)]
            if not users:
                continue
            hvp = any(adapters[s].create_graph for s in users)
            try:
                ref = reference(case.graph, dtype, rng, hvp)
            except Exception as e:  # a graph the references cannot take is reported
                log(f"  reference failed on {case.op} {case.region}: {type(e).__name__}: {e}")
                continue
            for s in users:
                survey_graph(s, adapters[s], ref, case.op, case.region, tally, case.one_op)
            if (n + 1) % 200 == 0:
                log(f"  {kind} {dtype}: {n + 1}/{len(found)} graphs, {time.perf_counter() - start:.0f} s")
        log(f"{kind} {dtype}: {len(found)} graphs in {time.perf_counter() - start:.0f} s")
    return tally


def table(tally: Tally) -> str:
    """Per subject, kind, op and region: entries checked and differences (forward, gradient, H·v)."""
    rows: dict[tuple[str, ...], dict[str, list[int]]] = defaultdict(dict)
    for (subject, kind, op, region, part), counts in sorted(tally.counts.items()):
        rows[subject, kind, op, region][part] = counts
    lines = [f"{'subject':<26}{'op':<34}{'region':<13}{'forward':>14}{'gradient':>14}{'H·v':>14}"]
    for (subject, _, op, region), parts in rows.items():
        cells = []
        for part in ("forward", "gradient", "hvp"):
            checked, bad, unjudged = parts.get(part, [0, 0, 0])
            cells.append(f"{bad:>5}/{checked:<6}" + (f"?{unjudged}" if unjudged else ""))
        lines.append(f"{subject:<26}{op:<34}{region:<13}" + "".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)


def summary(tally: Tally) -> str:
    """Per subject: entries checked and differences over everything."""
    totals: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    for (subject, _, _, _, part), counts in tally.counts.items():
        for j, n in enumerate(counts):
            totals[subject][part][j] += n
    lines = [f"{'subject':<26}{'forward':>18}{'gradient':>18}{'H·v':>18}   (differences/checked ?unjudged)"]
    for subject, parts in totals.items():
        cells = [
            f"{parts[p][1]}/{parts[p][0]}" + (f"?{parts[p][2]}" if parts[p][2] else "")
            for p in ("forward", "gradient", "hvp")
        ]
        lines.append(f"{subject:<26}" + "".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)


def losses(tally: Tally, factor: float = 1e3) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """The one-op cases whose derivative is `factor` times less accurate (in ulps) than its value
    and more than `factor` ulps off: a derivative that loses accuracy against its own forward."""
    return [
        (key, found)
        for key, found in sorted(tally.ulps.items())
        if found["gradient"] > factor and found["gradient"] > factor * max(found["value"], 1.0)
    ]


def load(paths: Sequence[str]) -> Tally:
    """The tallies of earlier runs' JSON files, merged (parts of one survey run side by side)."""
    tally = Tally()
    for path in paths:
        data = json.loads(Path(path).read_text())
        for *key, checked, bad, unjudged in data["counts"]:
            counts = tally.counts[tuple(key)]
            for j, n in enumerate((checked, bad, unjudged)):
                counts[j] += n
        tally.differences += data["differences"]
        tally.ulps.update({tuple(key): found for *key, found in data["ulps"]})
    return tally


def print_report(tally: Tally) -> None:
    print(table(tally))
    print()
    print(summary(tally))
    print()
    print("derivatives that lose accuracy against their own forward (worst ulps: value, derivative):")
    for key, found in losses(tally):
        print(f"  {' | '.join(key)}: {found['value']:.3g}, {found['gradient']:.3g}  {found['example']}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--subjects", default=None, help="comma-separated labels (torch,jax,autograd,minigrad)"
    )
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--kinds", default="scalar,tensor")
    parser.add_argument("--graphs", type=int, default=2, help="one-op graphs per op, region and attributes")
    parser.add_argument("--random", type=int, default=100, help="random multi-op graphs per kind and dtype")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="out/accuracy-survey.json")
    parser.add_argument(
        "--report", nargs="+", default=None, help="print the merged tables of these JSON files"
    )
    args = parser.parse_args()
    if args.report:
        print_report(load(args.report))
        return
    labels = args.subjects.split(",") if args.subjects else None
    subjects = [
        s
        for s in SUBJECTS
        if (labels is None or s.label in labels)
        and s.dtype in args.dtypes.split(",")
        and ("tensor" if s.tensor else "scalar") in args.kinds.split(",")
    ]
    start = time.perf_counter()
    tally = survey(subjects, args.graphs, args.random, args.seed, lambda line: print(line, flush=True))
    print_report(tally)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "command": " ".join(sys.argv),
                "seconds": time.perf_counter() - start,
                "counts": [[*k, *v] for k, v in sorted(tally.counts.items())],
                "differences": tally.differences,
                "ulps": [[*k, v] for k, v in sorted(tally.ulps.items())],
            },
            indent=1,
            default=_plain,
        )
    )
    print(f"\n{len(tally.differences)} differences recorded in {out} ({time.perf_counter() - start:.0f} s)")


def _plain(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return str(x)


if __name__ == "__main__":
    main()
