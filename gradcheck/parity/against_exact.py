"""The check of a graph against the exact values (`check_graph(..., reference="exact")`).

Torch is not the judge here. Every forward value, cotangent-weighted gradient entry and
Hessian-vector product entry of the engine is judged against the exact value (`parity.exact`:
the graph in mpmath, rounded once), and torch's answers at the same points (its reference run)
are judged beside them by the same allowance, so that each failing entry says who is off
(`Off`): the engine alone, or torch too. Where the engine passes and torch does not, the check
passes and keeps torch's entries apart (`GraphCheck.torch_off`): the engine is right there.

The allowance of an entry:

- forward values and gradients: within `AGREEING_ULPS` ulps of the exact value an entry passes as
  it is (its bound is not computed: it costs torch passes); otherwise `BOUND_SAFETY` times the
  rounding bound of any correct float64 (float32) evaluation in any order (`parity.any_order`),
  plus `UNDERFLOW_ULPS` of the precision's smallest subnormal per node (the bound models no
  underflow). A bound that is not a number (its own arithmetic overflowed, at inputs beyond
  1e±300) leaves the entry unjudged: it passes;
- Hessian-vector products: `BOUND_SAFETY` times `HVP_SAFETY` times the rounding bound of torch's
  second backward pass (`parity.bound`), the allowance the accuracy survey measured to hold for
  torch, JAX, HIPS autograd and minigrad (docs/accuracy.md); where the terms of that pass cancel,
  the spread of torch's re-rounded evaluations (`parity.rounding`) where larger, as against torch.

Central differences stay the second witness, as against torch (`errors.PointErrors`); at a point
whose difference stencil crosses a kink the exact gradients stand in for them. A point where the
exact evaluation took a branch it could not decide (`ExactResult.undecided`) is not checked.
float32 (`check_float32_against_exact`): the engine computes in float32 at float32-rounded inputs
and cotangents, judged against the exact values there by the bound of a float32 evaluation, with
torch in float32 beside it; an exact value beyond float32's range is an infinity there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.checker.tolerance import Tolerance, policy_for
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.engines.snippets import repro_cotangent
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.ir import Graph
from gradcheck.parity import torch_reference
from gradcheck.parity.answers import (
    conclude,
    error_blocks,
    evaluate,
    first_failure,
    one_point,
    other_modes_judged,
    run_at,
)
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.errors import (
    AGREEING_ULPS,
    BOUND_SAFETY,
    EPS,
    HVP_AGREEING_ULPS,
    HVP_SAFETY,
    SCALE_FLOOR,
    PointErrors,
    bound_ratio,
    worst_error,
)
from gradcheck.parity.exact import run_exact
from gradcheck.parity.exact_errors import ExactErrors, Precision, distance, in_float32
from gradcheck.parity.float32 import dtype_problems, round32, torch_dtypes
from gradcheck.parity.modes import with_forward_mode
from gradcheck.parity.problem import SECOND, BoundKind, Off, Problem, What, raised_problem
from gradcheck.parity.result import GraphCheck, record_torch_off
from gradcheck.parity.rounding import hvp_bound
from gradcheck.parity.runs import ScalarRun, TensorRun
from gradcheck.parity.transforms import with_hvp_transforms, with_transforms


def check_against_exact(
    result: GraphCheck,
    graph: Graph,
    adapter: EngineAdapter,
    run: ScalarRun | TensorRun,
    numbers: Any,
    torch: Any,
    policy: Tolerance,
    accumulation: str,
) -> GraphCheck:
    """Fill `result` with the check of `graph` against the exact values at `run`'s points (float64),
    torch's answers (`torch`, its reference run) judged beside the engine's; `numbers`: central
    differences (None: not compared)."""
    started = time.perf_counter()
    k = int(np.shape(run.batch[0])[0])
    candidates = list(range(k))
    kinked: np.ndarray = np.zeros(0, dtype=int)
    if numbers is not None:
        valid = np.array(numbers.valid[:k], dtype=bool)
        if numbers.kinked is not None:
            kinked = np.flatnonzero(numbers.kinked[:k])
            valid[kinked] = True
        candidates = np.flatnonzero(valid).tolist()
    exact, checkable = _exact_at(graph, run, candidates, k)
    if kinked.size:  # the exact gradients stand in for differences across a kink
        numbers.grads[:, kinked] = exact.grads[:, kinked]
        numbers.error[:, kinked] = 0.0
        numbers.valid[kinked] = True
    result.timings["exact"] = time.perf_counter() - started
    precision = Precision.of("float64", graph)
    points, cotangents = run.values(checkable), run.cotangents(checkable)
    results, crash = evaluate(adapter.run_points(graph, points, cotangents), len(points), adapter)
    errors = partial(ExactErrors, torch=torch, precision=precision)
    blocks, crash = error_blocks(policy, results, crash, exact, numbers, checkable, graph, errors)
    second, torch_hvp, own = _second_order(
        result, adapter, graph, run, blocks, checkable, points[:1], cotangents[:1], torch, exact, precision
    )
    if own is not None and not precision.float32 and other_modes_judged(checkable, numbers):
        second = with_hvp_transforms(second, adapter, graph, points[0], cotangents[0], *own)
    if blocks:
        second = with_forward_mode(
            second, adapter, graph, run, checkable, points, cotangents, results, numbers
        )
        second = with_transforms(second, adapter, graph, checkable, points, cotangents, results, numbers)

    failing, problems = first_failure(result, blocks, second, run.labels, _bounded(graph, run, accumulation))
    conclude(result, graph, k, checkable, cotangents, blocks, failing, problems, crash)
    if result.passed and not isinstance(adapter, TorchAdapter):  # the engine is right: is torch?
        _keep_torch_off(result, graph, blocks, checkable, cotangents, run.labels, torch_hvp)
    result.timings["engine"] = time.perf_counter() - started - result.timings["exact"]
    return result


def check_float32_against_exact(
    result: GraphCheck, graph: Graph, adapter: EngineAdapter, k: int, seed: int, second_order: bool
) -> GraphCheck:
    """Fill `result` with the float32 check of tensor graph `graph` against the exact values at its
    first `k` points, rounded to float32 (inputs, cotangents and direction), torch in float32
    beside the engine; each output's dtype must be torch's, as in `parity.float32`."""
    rng = np.random.default_rng(seed)
    hvp = second_order and adapter.create_graph
    run = TensorRun(graph, k, rng, hvp)
    run.batch = [round32(b) for b in run.batch]
    run.cot = [round32(c) for c in run.cot]
    if run.direction is not None:
        run.direction = [round32(d) for d in run.direction]
    started = time.perf_counter()
    torch = torch_reference.run_torch_tensor_batch(graph, run.batch, run.cot, run.direction, dtype="float32")
    exact, checkable = _exact_at(graph, run, list(range(k)), k)
    exact.forward, exact.grads = in_float32(exact.forward), in_float32(exact.grads)
    result.timings = {"numeric": 0.0, "torch": time.perf_counter() - started}
    engine = adapter.in_dtype("float32")
    precision = Precision.of("float32", graph)
    points = [[b[p].astype(np.float32) for b in run.batch] for p in checkable]
    cotangents = [[c[p].astype(np.float32) for c in run.cot] for p in checkable]
    results, crash = evaluate(engine.run_points(graph, points, cotangents), len(points), engine)
    dtypes = torch_dtypes(graph, [b[0] for b in run.batch])
    for i, (fwd, _) in enumerate(results):  # an output of another dtype than torch's fails its point
        wrong = dtype_problems(fwd, dtypes)
        if wrong:
            results, crash = results[:i], wrong[0]
            break
    errors = partial(ExactErrors, torch=torch, precision=precision)
    blocks, crash = error_blocks(
        policy_for(graph.ops()), results, crash, exact, None, checkable, graph, errors
    )
    second, torch_hvp, _ = _second_order(
        result, engine, graph, run, blocks, checkable, points[:1], cotangents[:1], torch, exact, precision
    )

    judge = _bounded(graph, run, adapter.accumulation, float32=True)

    def bounded(errors: PointErrors) -> None:
        judge(errors)
        assert isinstance(errors, ExactErrors)  # as in the float32 check, the figures against central
        # differences are torch's own errors (against the exact values here)
        result.max_abs_err_numeric = max(result.max_abs_err_numeric, worst_error(errors.torch_abs))

    failing, problems = first_failure(result, blocks, second, run.labels, bounded)
    conclude(result, graph, k, checkable, cotangents, blocks, failing, problems, crash)
    if result.passed and not isinstance(adapter, TorchAdapter):
        _keep_torch_off(result, graph, blocks, checkable, cotangents, run.labels, torch_hvp)
    result.timings["engine"] = time.perf_counter() - started - result.timings["torch"]
    return result


def _second_order(
    result: GraphCheck,
    adapter: EngineAdapter,
    graph: Graph,
    run: ScalarRun | TensorRun,
    blocks: Sequence[tuple[PointErrors, int]],
    checkable: Sequence[int],
    points: Sequence[list[Any]],
    cotangents: Sequence[list[Any]],
    torch: Any,
    exact: _Answers,
    precision: Precision,
) -> tuple[tuple[list[Problem], float], list[Problem], tuple[list[Any], Any] | None]:
    """The engine's H·v at the first checked point (`points[0]`) judged against the exact one, when
    the run has a direction: its problems and how far outside its allowance the worst is, torch's
    entries off the same allowance, and the direction and the engine's H·v (None: no H·v judged)."""
    if not (blocks and run.direction is not None and torch.hvp is not None and exact.hvp is not None):
        return ([], 0.0), [], None
    p = checkable[0]
    direction = run.direction_at(p)
    if precision.float32:
        direction = [np.asarray(d, dtype=np.float32) for d in direction]
    judged = _hvp_against_exact(
        result,
        adapter,
        graph,
        points[0],
        cotangents[0],
        direction,
        torch.hvp[:, p],
        exact.hvp[:, p],
        precision,
    )
    return (judged.problems, judged.excess), judged.torch_problems, (direction, judged.engine)


def _bounded(
    graph: Graph, run: ScalarRun | TensorRun, accumulation: str, float32: bool = False
) -> Callable[[PointErrors], None]:
    """How a block of `ExactErrors` is judged: the columns beyond AGREEING_ULPS (the engine's or
    torch's) by the bound of any correct evaluation there, the others as they are."""

    def bounded(errors: PointErrors) -> None:
        assert isinstance(errors, ExactErrors)
        columns = errors.beyond_ulps()
        if not columns.size:
            errors.agrees_to_ulps()
            return
        bounds = any_order_bounds(graph, *run_at(run, errors.cols[columns]), accumulation, float32=float32)
        errors.bound_any_order(columns, bounds.forward, bounds.grads)

    return bounded


def _exact_at(
    graph: Graph, run: ScalarRun | TensorRun, candidates: list[int], k: int
) -> tuple[_Answers, list[int]]:
    """The exact forward values, gradients and (when the run has a direction) Hessian-vector
    products at `candidates` (of `k` points), as (F, k), (N, k) and (N, k) arrays (nan at the other
    points), and the candidates the exact evaluation decided. One run for all: the H·v is needed at
    the first point only, but a point more in the batch costs less than a run of its own."""
    if not candidates:  # no point to check (every one is off the differences' domain)
        return _Answers(np.zeros((0, k)), np.zeros((0, k))), []
    at = np.asarray(candidates)
    direction: Any = None
    if isinstance(run, TensorRun) and run.direction is not None:
        direction = [d[at] for d in run.direction]
    elif run.direction is not None:
        direction = run.direction[:, at]
    exact = run_exact(graph, *run_at(run, at), direction)
    answers = _Answers(
        _spread(exact.forward, candidates, k),
        _spread(exact.grads, candidates, k),
        None if exact.hvp is None else _spread(exact.hvp, candidates, k),
    )
    return answers, [p for p, undecided in zip(candidates, exact.undecided) if not undecided]


def _spread(values: np.ndarray, columns: list[int], k: int) -> np.ndarray:
    """`values` (rows, len(columns)) placed at `columns` of a (rows, k) array of nan."""
    out = np.full((values.shape[0], k), np.nan)
    out[:, columns] = values
    return out


@dataclass
class _Answers:
    """Forward values (F, k), gradients (N, k) and H·v (N, k) or None, as a reference run holds them."""

    forward: np.ndarray
    grads: np.ndarray
    hvp: np.ndarray | None = None


@dataclass(frozen=True)
class _HvpJudgement:
    """The engine's H·v against the exact one: its problems, how far outside its allowance the
    worst is, torch's entries outside the same allowance (`Off.TORCH`), and the engine's H·v
    (None: it raised)."""

    problems: list[Problem]
    excess: float
    torch_problems: list[Problem]
    engine: np.ndarray | None


def _hvp_against_exact(
    result: GraphCheck,
    adapter: EngineAdapter,
    graph: Graph,
    values: list[Any],
    cot: list[Any],
    direction: list[Any],
    torch_hvp: np.ndarray,
    exact: np.ndarray,
    precision: Precision,
) -> _HvpJudgement:
    """The engine's Hessian-vector product at one point against the exact one (see the module)."""
    try:
        hvp_e = flat_vector(adapter.run_hvp(graph, values, cot, direction))
    except Exception as e:
        result.max_rel_err_hvp = np.inf
        return _HvpJudgement([raised_problem(Raised.of(e, adapter), SECOND)], float("inf"), [], None)
    if precision.float32:
        exact = in_float32(exact)
    err_e, err_t = distance(hvp_e, exact), distance(torch_hvp, exact)
    finite = np.abs(exact[np.isfinite(exact)])
    scale = max(float(finite.max()) if finite.size else 0.0, SCALE_FLOOR)
    result.max_rel_err_hvp = worst_error(err_e) / max(scale, 1.0)
    ulps = HVP_AGREEING_ULPS * precision.unit * np.abs(exact)
    with np.errstate(invalid="ignore"):
        if (err_e <= ulps).all() and (err_t <= ulps).all():  # within any bound: no torch spent on it
            return _HvpJudgement([], 0.0, [], hvp_e)
    with np.errstate(all="ignore"):
        bound = hvp_bound(graph, values, cot, direction, exact, precision, np.maximum(err_e, err_t))
        allowed = BOUND_SAFETY * bound
        margin = np.where(err_e <= ulps, 0.0, bound_ratio(err_e, bound))  # within the ulps: passes as it is
        result.max_bound_ratio = max(result.max_bound_ratio, worst_error(margin))
        bad, torch_bad = ~((err_e <= allowed) | (err_e <= ulps)), ~((err_t <= allowed) | (err_t <= ulps))
        excess = worst_error(bound_ratio(err_e[bad], allowed[bad])) if bad.any() else 0.0
    along = tuple(flat_vector(direction).tolist())

    def entry(i: int, error: np.ndarray, off: Off) -> Problem:
        return Problem(
            What.HESSIAN,
            SECOND,
            index=i,
            engine=float(hvp_e[i]),
            reference=float(torch_hvp[i]),
            exact=float(exact[i]),
            error=float(error[i]),
            allowed=float(allowed[i]),
            bound=float(bound[i]),
            bound_kind=BoundKind.EXACT_HVP,
            safety=BOUND_SAFETY * HVP_SAFETY,
            direction=along,
            off=off,
        )

    problems = [
        entry(int(i), err_e, Off.BOTH if torch_bad[i] else Off.ENGINE) for i in np.flatnonzero(bad)[:3]
    ]
    torch_problems = [entry(int(i), err_t, Off.TORCH) for i in np.flatnonzero(torch_bad)[:3]]
    return _HvpJudgement(problems, excess, torch_problems, hvp_e)


def exact_repro(graph: Graph, second_order: bool = False) -> dict[str, dict[str, list[float]]] | None:
    """What a repro judged against the exact values needs at the graph's first point (the repro's
    cotangent, and for second derivatives a direction of ones): the exact outputs and gradients
    (or H·v), `exact`, and what the check allows each entry, `allowed` (float64). None where the
    exact evaluation could not decide a branch there, or an exact value or allowance is not a
    finite number (a repro compares those by their pattern)."""
    values = graph.input_values(0)
    cot = repro_cotangent(graph)
    batch, cotangent = one_point(graph, values, cot)
    ones = [np.ones_like(np.asarray(v, dtype=np.float64)) for v in values]
    direction: Any = None
    if second_order:
        direction = [d[None] for d in ones] if graph.is_tensor else np.ones((graph.n_inputs, 1))
    precision = Precision.of("float64", graph)
    with np.errstate(all="ignore"):
        exact = run_exact(graph, batch, cotangent, direction)
        if exact.undecided[0]:
            return None
        bounds = any_order_bounds(graph, batch, cotangent)
        ulps = AGREEING_ULPS * EPS / BOUND_SAFETY
        forward = np.maximum(bounds.forward[:, 0] + precision.floor, ulps * np.abs(exact.forward[:, 0]))
        derivative = exact.grads[:, 0]
        bound = np.maximum(bounds.grads[:, 0] + precision.floor, ulps * np.abs(derivative))
        if second_order:
            assert exact.hvp is not None
            derivative = exact.hvp[:, 0]
            along = ones if graph.is_tensor else [1.0] * graph.n_inputs
            bound = hvp_bound(graph, values, cot, along, derivative, precision)
    numbers = [exact.forward[:, 0], derivative, forward, bound]
    if not all(np.isfinite(x).all() for x in numbers):
        return None
    return {
        "exact": {"outputs": exact.forward[:, 0].tolist(), "derivative": derivative.tolist()},
        "allowed": {
            "outputs": (BOUND_SAFETY * forward).tolist(),
            "derivative": (BOUND_SAFETY * bound).tolist(),
        },
    }


def _keep_torch_off(
    result: GraphCheck,
    graph: Graph,
    blocks: Sequence[tuple[PointErrors, int]],
    checkable: Sequence[int],
    cotangents: Sequence[Any],
    labels: Sequence[str],
    torch_hvp: list[Problem],
) -> None:
    """Where the engine passed, torch's entries outside their allowance at its worst point (and
    its H·v's at the first point), kept apart in `result.torch_off`: torch is off, not the engine."""
    worst: tuple[float, int, int] | None = None  # (excess, block, column)
    for b, (errors, _) in enumerate(blocks):
        assert isinstance(errors, ExactErrors)
        if not errors.bounded:
            continue
        excess = errors.torch_excess()
        c = int(np.argmax(excess)) if excess.size else 0
        if excess.size and excess[c] > 0 and (worst is None or excess[c] > worst[0]):
            worst = (float(excess[c]), b, c)
    if worst is not None:
        _, b, c = worst
        errors, start = blocks[b]
        assert isinstance(errors, ExactErrors)
        place = start + c
        problems = errors.torch_problems(c, labels) + (torch_hvp if place == 0 else [])
    elif torch_hvp:
        place, problems = 0, torch_hvp
    else:
        return
    record_torch_off(result, graph, checkable[place], cotangents[place], *problems)
