"""The three-way parity check of one graph: the engine under test, torch (float64), numerics.

`check_graph(graph, engine)` is the single entry point of the library (`gradcheck.check_graph`),
the pytest suite and the campaign, so all three give a graph one verdict: a disagreement with
central differences alone is settled by a precise oracle before it is reported (`trust`). At
every batch point of the graph it checks: forward values equal torch's; the engine's
cotangent-weighted input gradients equal torch's; both equal central differences (within the
differences' own error estimate plus the gradcheck tolerance policy); and, for engines with
second derivatives, a Hessian-vector product equals torch's (to the product's own rounding
level where they differ: `rounding`). Torch runs once for all points. A gradient entry that
differs from torch's only by its own rounding (a difference of large terms) is no failure either,
nor is a forward value within the rounding of the terms it was computed from (an absolute floor:
`log(x / x)` may be -1.1e-16 where torch gives 0).

With `reference="exact"` the judge is the exact value instead, and torch's answers are judged
beside the engine's (`against_exact`). The points, cotangents and references are a run (`runs`),
the engine's answers read as `answers` reads them, the verdict a `GraphCheck` (`result`); this
module compares the engine's answers with torch's, and checks the registry's kink cases.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.checker.tolerance import Tolerance, policy_for
from gradcheck.choices import REFERENCES
from gradcheck.engines.adapter import EngineAdapter, loaded
from gradcheck.engines.origin import Raised
from gradcheck.engines.snippets import repro_cotangent
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.against_exact import check_against_exact, check_float32_against_exact
from gradcheck.parity.answers import (
    conclude,
    error_blocks,
    evaluate,
    first_failure,
    one_point,
    other_modes_judged,
    run_at,
    wrong_type,
)
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.bound import EntryBounds, RoundingBounds
from gradcheck.parity.errors import (
    BOUND_SAFETY,
    HVP_AGREEING_ULPS,
    HVP_SAFETY,
    SCALE_FLOOR,
    PointErrors,
    bound_ratio,
    within_ulps,
    worst_error,
)
from gradcheck.parity.exact import run_exact
from gradcheck.parity.float32 import check_float32
from gradcheck.parity.modes import with_forward_mode
from gradcheck.parity.problem import SECOND, BoundKind, Off, Problem, What, raised_problem
from gradcheck.parity.result import GraphCheck
from gradcheck.parity.rounding import rounding_spread
from gradcheck.parity.runs import ScalarRun, TensorRun
from gradcheck.parity.transforms import with_hvp_transforms, with_transforms
from gradcheck.parity.trust import settled

__all__ = [
    "check_graph",
    "check_kinks",
    "compare_once",
    "failing_check",
    "kink_graphs",
    "repro_allowances",
    "run_at",
    "wrong_type",
]


def check_graph(
    graph: Graph,
    engine: EngineAdapter,
    *,
    seed: int = 0,
    points: int | None = None,
    second_order: bool = True,
    tolerance: Tolerance | None = None,
    numeric: bool = True,
    dtype: str = "float64",
    accumulation: str | None = None,
    reference: str | None = None,
) -> GraphCheck:
    """Check `graph` three ways with `engine`, an adapter (`load_engine` turns a name into one).

    seed: draws the random cotangents (one per output and point) and the Hessian direction, unless
    the graph carries its own cotangent. points: check only the first `points` batch points
    (default all the graph carries). second_order: also compare a Hessian-vector product with
    torch's at the first valid point, when the engine supports create_graph. tolerance: the
    numeric tolerance (default `policy_for(graph ops)`). numeric=False compares with torch only
    (for points exactly at a kink, where central differences are meaningless). dtype="float32"
    (tensor engines and graphs): the engine in float32, judged by torch's float32 accuracy
    against the float64 truth (`gradcheck.parity.float32`). accumulation: how the engine's
    backward sums (`parity.any_order`): "nodes" (each node's adjoint sums its contributions) or
    "paths" (each input's gradient sums one product per path to it), for the bound an entry
    outside torch's rounding is judged by against the exact value (default the adapter's
    `accumulation`). reference: what every entry is judged against (default the adapter's
    `reference`): "torch" (torch's float64 answers by their rounding bound, and an entry outside
    it again against the exact value by the bound of any evaluation order), or "exact" (the exact
    values, by the bound of any correct float64 or float32 evaluation, with torch's answers judged
    beside the engine's: `gradcheck.parity.against_exact`).
    """
    adapter = loaded(engine, "check_graph")

    def once(current: Graph) -> GraphCheck:
        return compare_once(
            current,
            adapter,
            seed=seed,
            points=points,
            second_order=second_order,
            tolerance=tolerance,
            numeric=numeric,
            dtype=dtype,
            accumulation=accumulation,
            reference=reference,
        )

    return settled(graph, adapter, once)


def failing_check(graph: Graph, adapter: EngineAdapter, **options: Any) -> GraphCheck | None:
    """The check of `graph` if the engine fails it at a checkable point, else None (`options`:
    `check_graph`'s, e.g. dtype)."""
    try:
        check = check_graph(graph, adapter, **options)
    except Exception:
        return None
    if check.passed or check.points_checked == 0:
        return None
    if all(p.what is What.REFERENCES_DISAGREE for p in check.problems):
        return None  # torch and the oracle disagree: the candidate left the checkable domain
    return check


def compare_once(
    graph: Graph,
    engine: EngineAdapter,
    *,
    seed: int = 0,
    points: int | None = None,
    second_order: bool = True,
    tolerance: Tolerance | None = None,
    numeric: bool = True,
    dtype: str = "float64",
    accumulation: str | None = None,
    reference: str | None = None,
) -> GraphCheck:
    """One pass of `check_graph` (its arguments): the three-way comparison at every point, with a
    disagreement only central differences find left unsettled (`trust.settled` settles it)."""
    adapter = loaded(engine, "check_graph")
    accumulation = accumulation or adapter.accumulation
    judge = reference or adapter.reference
    if judge not in REFERENCES:
        raise ValueError(f"check_graph: reference must be one of {list(REFERENCES)}, got {judge!r}")
    ops = tuple(graph.ops())
    result = GraphCheck(adapter.name, ops, len(graph.nodes), graph.depth())
    unsupported = sorted(set(ops) - set(adapter.ops))
    if unsupported:
        raise ValueError(
            f"check_graph: engine {adapter.name!r} does not support op(s) {unsupported}; "
            f"it supports {sorted(adapter.ops)}"
        )
    if not adapter.tensor and any(inp.shape for inp in graph.inputs):
        raise ValueError(
            f"check_graph: engine {adapter.name!r} has no tensors, but the graph has tensor inputs "
            f"{[inp.shape for inp in graph.inputs]}; use a tensor engine such as 'minigrad-tensor'"
        )
    k = graph.n_points if points is None else min(points, graph.n_points)
    if dtype != "float64":
        if dtype != "float32" or not graph.is_tensor:
            raise ValueError(f"check_graph: dtype {dtype!r} needs a tensor graph and 'float32'")
        if judge == "exact":
            return check_float32_against_exact(result, graph, adapter, k, seed, second_order)
        return check_float32(graph, adapter, result, k, seed)
    policy = tolerance if tolerance is not None else policy_for(ops)
    rng = np.random.default_rng(seed)
    hvp = second_order and adapter.create_graph
    run = TensorRun(graph, k, rng, hvp) if graph.is_tensor else ScalarRun(graph, k, rng, hvp)

    t0 = time.perf_counter()
    numbers = run.numeric() if numeric else None
    t1 = time.perf_counter()
    reference = run.torch()
    t2 = time.perf_counter()
    result.timings = {"numeric": t1 - t0, "torch": t2 - t1}
    if judge == "exact":
        return check_against_exact(result, graph, adapter, run, numbers, reference, policy, accumulation)

    if numbers is not None and numbers.kinked is not None and numbers.kinked[:k].any():
        _torch_judges_kinks(numbers, reference)
    checkable = list(range(k)) if numbers is None else np.flatnonzero(numbers.valid[:k]).tolist()
    points, cotangents = run.values(checkable), run.cotangents(checkable)
    results, crash = evaluate(adapter.run_points(graph, points, cotangents), len(points), adapter)
    blocks, crash = error_blocks(policy, results, crash, reference, numbers, checkable, graph)
    second: tuple[list[Problem], float] = ([], 0.0)
    if blocks and run.direction is not None and reference.hvp is not None:  # at the first point
        p = checkable[0]
        along = run.direction_at(p)
        found, worst, own = _compare_hvp(
            result, adapter, graph, points[0], cotangents[0], along, reference.hvp[:, p]
        )
        if other_modes_judged(checkable, numbers):
            second = with_hvp_transforms((found, worst), adapter, graph, points[0], cotangents[0], along, own)
        else:
            second = (found, worst)
    if blocks:
        second = with_forward_mode(
            second, adapter, graph, run, checkable, points, cotangents, results, numbers
        )
        second = with_transforms(second, adapter, graph, checkable, points, cotangents, results, numbers)

    def bounded(errors: PointErrors) -> None:
        if errors.needs_bounds() and not errors.agrees_to_ulps():  # judge each entry by its bound,
            # first by the part that costs no more torch, unless central differences already
            # disagree (a failure, most likely: its full bound then costs one pass, not two)
            likely = bool(errors.bad_numeric.any())
            bounds = RoundingBounds(graph, *run_at(run, errors.cols), full=likely)
            if not likely:
                errors.bound(*_fields(bounds.partial()))
            # the full bound also where an entry passes within more than its lower part: the figure
            # (`max_bound_ratio`, the per-op table's margin) is then against the bound itself
            if likely or errors.bad.any() or errors.figures[3].max(initial=0.0) > 1.0:
                errors.bound(*_fields(bounds.full()))
        if errors.bounded and errors.bad.any():
            result.order_settled_points += _judge_by_exact(errors, graph, run, accumulation)

    failing, problems = first_failure(result, blocks, second, run.labels, bounded)
    conclude(result, graph, k, checkable, cotangents, blocks, failing, problems, crash)
    result.timings["engine"] = time.perf_counter() - t2
    if _torch_may_be_off(result, adapter):
        return _judged_by_exact(result, graph, adapter, run, numbers, reference, policy, accumulation)
    return result


# What a check against torch can find that torch itself may be wrong about: its numbers, where
# central differences do not contradict the engine (a gradient they also find wrong is the
# engine's: no exact evaluation is spent on it, which keeps a buggy engine's campaign fast)
_DIFFERENCES_FROM_TORCH = frozenset({What.FORWARD, What.GRADIENT, What.HESSIAN, What.REFERENCES_DISAGREE})
# What another mode of the engine can find beside them: judged by the exact value already
_OTHER_MODES = frozenset({What.JVP, What.MODES, What.TRANSFORM})


def _torch_may_be_off(result: GraphCheck, adapter: EngineAdapter) -> bool:
    """Whether a check against torch failed on numbers that differ from torch's (beside another
    mode's problems, if any; not on an exception, a non-number or a disagreement with central
    differences), or passed only by judging entries outside torch's rounding against the exact
    values, for an engine other than torch."""
    if isinstance(adapter, TorchAdapter):
        return False
    if result.passed:
        return result.order_settled_points > 0
    whats = {p.what for p in result.problems}
    return (
        result.failure is not None
        and bool(whats & _DIFFERENCES_FROM_TORCH)
        and whats - _OTHER_MODES <= _DIFFERENCES_FROM_TORCH
    )


def _judged_by_exact(
    against_torch: GraphCheck,
    graph: Graph,
    adapter: EngineAdapter,
    run: ScalarRun | TensorRun,
    numbers: Any,
    reference: Any,
    policy: Tolerance,
    accumulation: str,
) -> GraphCheck:
    """A graph that failed against torch (or passed only by the exact values), judged again by the
    exact values with torch's answers beside the engine's (`against_exact`), before its failure is
    the engine's: where the engine
    is within its allowance of the exact values the check passes (torch's entries off it kept as
    `torch_off`: torch is off, the engine right); where torch is off too, the failure is the
    exact check's (its problems say so: `Off.BOTH`); where the engine alone is off, or no exact
    value can be had (an op without an exact spelling), the check against torch stands."""
    exact = GraphCheck(adapter.name, against_torch.ops, against_torch.n_nodes, against_torch.depth)
    exact.timings = dict(against_torch.timings)
    try:
        with np.errstate(all="ignore"):
            exact = check_against_exact(exact, graph, adapter, run, numbers, reference, policy, accumulation)
    except Exception:
        return against_torch
    if exact.points_checked == 0:  # the exact evaluation decided no point
        return against_torch
    if exact.passed:
        exact.order_settled_points += against_torch.order_settled_points
        return exact
    offs = [p.off for p in exact.problems if p.off is not None]
    if exact.failure is not None and offs and all(off is Off.BOTH for off in offs):
        return exact
    return against_torch


def _judge_by_exact(errors: PointErrors, graph: Graph, run: ScalarRun | TensorRun, accumulation: str) -> int:
    """Judge the failing points again, worst first, against the exact values with the rounding
    bound of any correct evaluation order (`parity.any_order`), while they fail against torch by
    finite numbers only; the count of points that pass so (another order's rounding, not a bug).
    The first point that fails again stops it: the check fails there."""
    excess = errors.excess()
    settled = 0
    for c in sorted(np.flatnonzero(errors.bad), key=lambda c: -excess[c]):
        if not errors.outside_rounding_only(c):
            break
        batch, cotangent = run_at(run, errors.cols[c : c + 1])
        exact = run_exact(graph, batch, cotangent)
        bounds = any_order_bounds(graph, batch, cotangent, accumulation)
        if not errors.judge_by_exact(
            c, exact.forward[:, 0], exact.grads[:, 0], bounds.forward[:, 0], bounds.grads[:, 0]
        ):
            break
        settled += 1
    return settled


def _torch_judges_kinks(numbers: Any, reference: Any) -> None:
    """At points whose difference stencil crosses a kink (an exact tie of maximum or amax, say)
    central differences mean nothing: there torch's gradients stand in for them, so the point is
    checked against torch alone (as a kink case is) instead of being skipped."""
    kinked = np.flatnonzero(numbers.kinked)
    numbers.grads[:, kinked] = reference.grads[:, kinked]
    numbers.error[:, kinked] = 0.0
    numbers.valid[kinked] = True


def _compare_hvp(
    result: GraphCheck,
    adapter: EngineAdapter,
    graph: Graph,
    values: list[Any],
    cot: list[Any],
    direction: list[Any],
    hvp_t: np.ndarray,
) -> tuple[list[Problem], float, np.ndarray | None]:
    """The differences of the engine's Hessian-vector product from torch's, as records, how far
    the worst is outside its allowance (`PointErrors.excess`), and the product (None: it raised)."""
    try:
        hvp_e = flat_vector(adapter.run_hvp(graph, values, cot, direction))
    except Exception as e:
        result.max_rel_err_hvp = np.inf
        return [raised_problem(Raised.of(e, adapter), SECOND)], float("inf"), None
    scale = max(float(np.abs(hvp_t).max()) if hvp_t.size else 0.0, SCALE_FLOOR)
    err = np.abs(hvp_e - hvp_t)
    result.max_rel_err_hvp = worst_error(err) / max(scale, 1.0)
    bound = np.zeros_like(err)
    if within_ulps(err, hvp_t, HVP_AGREEING_ULPS):  # inside any bound: its torch passes are not spent
        return [], 0.0, hvp_e
    if (err != 0).any() and np.isfinite(hvp_e).all() and np.isfinite(hvp_t).all():
        direction_batch = [np.asarray(d, dtype=np.float64)[None] for d in direction]
        bounds = RoundingBounds(graph, *one_point(graph, values, cot), direction=direction_batch)
        bound = HVP_SAFETY * 2.0 * bounds.partial().grads[:, 0]  # a lower bound first: less torch
        if not (err <= BOUND_SAFETY * bound).all():
            bound = HVP_SAFETY * 2.0 * bounds.full().grads[:, 0]
        if not (err <= BOUND_SAFETY * bound).all():  # where the terms of phi's backward cancel
            bound = np.maximum(bound, 2.0 * rounding_spread(graph, values, cot, direction))
        result.max_bound_ratio = max(result.max_bound_ratio, float(bound_ratio(err, bound).max()))
    bad = ~(err <= BOUND_SAFETY * bound)
    with np.errstate(invalid="ignore", divide="ignore"):
        excess = worst_error(bound_ratio(err[bad], BOUND_SAFETY * bound[bad])) if bad.any() else 0.0
    along = tuple(flat_vector(direction).tolist())
    return (
        [
            Problem(
                What.HESSIAN,
                SECOND,
                index=int(i),
                engine=float(hvp_e[i]),
                reference=float(hvp_t[i]),
                error=float(err[i]),
                allowed=float(BOUND_SAFETY * bound[i]),
                bound=float(bound[i]),
                bound_kind=BoundKind.TORCH_ROUNDING,
                safety=BOUND_SAFETY,
                direction=along,
            )
            for i in np.flatnonzero(bad)[:3]
        ],
        excess,
        hvp_e,
    )


def repro_allowances(graph: Graph, second_order: bool = False) -> dict[str, list[float]] | None:
    """What the harness allows each entry of a one-point graph (its first point, the repro's
    cotangent and direction of ones): BOUND_SAFETY times the difference's rounding bound, per
    flattened output and gradient (or Hessian-vector product) entry, for a repro's verdict
    (`engines.snippets.ALLOWED`). None where a bound is not a finite number (a nan or inf entry,
    which a repro compares by its pattern)."""
    values = graph.input_values(0)
    cot = repro_cotangent(graph)
    bounds = RoundingBounds(graph, *one_point(graph, values, cot), full=True).full()
    forward = BOUND_SAFETY * 2.0 * bounds.forward[:, 0]
    derivative = BOUND_SAFETY * 2.0 * bounds.grads[:, 0]
    if second_order:
        direction = [np.ones_like(np.asarray(v, dtype=np.float64)) for v in values]
        batch = [d[None] for d in direction]
        at_point = one_point(graph, values, cot)
        hvp = RoundingBounds(graph, *at_point, direction=batch, full=True).full().grads[:, 0]
        spread = rounding_spread(graph, values, cot, direction)
        derivative = BOUND_SAFETY * np.maximum(HVP_SAFETY * 2.0 * hvp, 2.0 * spread)
    if not (np.isfinite(forward).all() and np.isfinite(derivative).all()):
        return None
    return {"outputs": forward.tolist(), "derivative": derivative.tolist()}


def _fields(bounds: EntryBounds) -> tuple[np.ndarray, np.ndarray]:
    return bounds.forward, bounds.grads


def kink_graphs(ops: Sequence[str] | None = None) -> list[Graph]:
    """One graph per registry kink case (an op applied exactly at its kink), for `ops` (default all)."""
    graphs = []
    for name, spec in REGISTRY.items():
        if ops is not None and name not in ops:
            continue
        for values, attrs in spec.kink_cases:
            inputs = [
                Input(f"x{i}", np.asarray(v, dtype=np.float64), np.shape(v))
                if np.ndim(v)
                else Input(f"x{i}", float(v))
                for i, v in enumerate(values)
            ]
            node = OpNode(name, tuple(range(len(values))), tuple(sorted(attrs.items())))
            graphs.append(Graph(inputs, [node], [len(values)], meta={"kink": True}))
    return graphs


def check_kinks(engine: EngineAdapter) -> list[GraphCheck]:
    """Each kink case of the ops `engine` supports, checked against torch's convention (no numerics)."""
    adapter = loaded(engine, "check_kinks")
    return [
        check_graph(g, adapter, numeric=False, second_order=False) for g in kink_graphs(sorted(adapter.ops))
    ]
