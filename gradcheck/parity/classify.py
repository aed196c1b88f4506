"""The kind of one failing check: what a person must hear first about a difference from torch.

`classify(check, engine)` re-evaluates the failing instance of a `GraphCheck` (one input point,
its cotangent) with the engine and with torch and names the difference: the engine raised, a
nan/inf pattern unlike torch's, a wrong forward value, a convention at a kink (the engine's slope
lies between the one-sided derivatives but is not torch's choice), a wrong gradient, or wrong
second derivatives. It also says which check failed (forward, gradient, second-derivative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter, load_engine
from gradcheck.graphs.ir import Graph
from gradcheck.parity import torch_reference
from gradcheck.parity.compare import TORCH_TOLERANCE, GraphCheck
from gradcheck.parity.kinds import WRONG_TYPE, Kind

# One-sided slopes are difference quotients over this step (relative to max(1, |x|)): far below
# any kink margin the random graphs keep, far above float64 rounding of the function values.
ONE_SIDED_STEP = 1e-7
# Slopes (and a slope between them) count as equal within this, relative to 1 + their size.
SLOPE_TOL = 1e-4


@dataclass(frozen=True)
class Difference:
    """What kind of difference a failing check shows, and in which part of the check."""

    kind: Kind
    check: str  # "forward", "gradient" or "second-derivative"


def problem_text(problem: str) -> str:
    """A GraphCheck problem without its "point p (x0=...): " prefix."""
    head, sep, rest = problem.partition("): ")
    return rest if sep and head.startswith("point ") else problem


def classify_check(check: GraphCheck, engine: str | EngineAdapter) -> Difference:
    """The kind of difference a failing `check` shows (see the module docstring)."""
    if check.failure is None:
        raise ValueError("classify_check: the check has no failing instance (did it pass?)")
    return classify(check.problems, check.failure, engine)


def classify(problems: Sequence[str], graph: Graph, engine: str | EngineAdapter) -> Difference:
    """The kind of difference behind `problems`, found on `graph` (a one-point failing instance)."""
    texts = [problem_text(p) for p in problems]
    if any(t.startswith("engine raised") for t in texts):
        return Difference(Kind.EXCEPTION, "gradient")
    wrong = [t for t in texts if t.startswith(WRONG_TYPE)]
    if wrong:
        return Difference(Kind.WRONG_TYPE, "gradient" if "the gradient of" in wrong[0][:30] else "forward")
    adapter = load_engine(engine)
    values, cotangent = graph.input_values(0), _cotangent(graph)
    if any(t.startswith("second derivatives") for t in texts) and not _first_order_problem(texts):
        return _second_order(graph, adapter, values, cotangent, texts)
    try:
        forward, grads = adapter.run(graph, values, cotangent)
    except Exception:
        return Difference(Kind.EXCEPTION, "gradient")
    fwd_e, grad_e = _flat(forward), _flat(grads)
    reference = torch_at(graph, values, cotangent)
    fwd_t, grad_t = reference.forward[:, 0], reference.grads[:, 0]
    if any(t.startswith("forward") for t in texts) or not _same_pattern(fwd_e, fwd_t):
        kind = Kind.NONFINITE if not _same_pattern(fwd_e, fwd_t) else Kind.WRONG_VALUE
        return Difference(kind, "forward")
    if not _same_pattern(grad_e, grad_t):
        return Difference(Kind.NONFINITE, "gradient")
    differs = ~_close(grad_e, grad_t)
    if differs.any() and at_convention(graph, values, cotangent, grad_e, np.flatnonzero(differs)):
        return Difference(Kind.CONVENTION, "gradient")
    return Difference(Kind.WRONG_GRADIENT, "gradient")


def _first_order_problem(texts: Sequence[str]) -> bool:
    return any(t.startswith(("forward", "gradient of", "engine raised")) for t in texts)


def _second_order(
    graph: Graph, adapter: EngineAdapter, values: list[Any], cotangent: list[Any], texts: Sequence[str]
) -> Difference:
    if any(t.startswith("second derivatives: engine raised") for t in texts):
        return Difference(Kind.EXCEPTION, "second-derivative")
    direction = [np.ones_like(v) if isinstance(v, np.ndarray) else 1.0 for v in values]
    try:
        hvp_e = _flat(adapter.run_hvp(graph, values, cotangent, direction))
    except Exception:
        return Difference(Kind.EXCEPTION, "second-derivative")
    hvp_t = torch_at(graph, values, cotangent, direction).hvp
    if hvp_t is not None and not _same_pattern(hvp_e, hvp_t[:, 0]):
        return Difference(Kind.NONFINITE, "second-derivative")
    return Difference(Kind.WRONG_SECOND_DERIVATIVE, "second-derivative")


def at_convention(
    graph: Graph, values: list[Any], cotangent: list[Any], grad_e: np.ndarray, coordinates: Sequence[int]
) -> bool:
    """Whether, at every coordinate given, the function has a kink (its one-sided slopes differ)
    and the engine's slope lies between them: a valid one-sided choice, not a wrong derivative."""
    flat = np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for v in values])
    for i in coordinates:
        h = ONE_SIDED_STEP * max(1.0, abs(float(flat[i])))
        f0, fp, fm = _weighted_outputs(graph, values, cotangent, i, h)
        right, left = (fp - f0) / h, (f0 - fm) / h
        slack = SLOPE_TOL * (1.0 + abs(left) + abs(right))
        if not (np.isfinite(left) and np.isfinite(right)) or abs(right - left) <= slack:
            return False
        if not min(left, right) - slack <= grad_e[i] <= max(left, right) + slack:
            return False
    return True


def _weighted_outputs(
    graph: Graph, values: list[Any], cotangent: list[Any], coordinate: int, h: float
) -> tuple[float, float, float]:
    """sum(cotangent * outputs) at the point and at the point moved by +h and -h along `coordinate`."""
    flat = np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for v in values])
    rows = np.stack([flat, flat, flat])
    rows[1, coordinate] += h
    rows[2, coordinate] -= h
    if graph.is_tensor:
        batch, start = [], 0
        for inp in graph.inputs:
            size = int(np.prod(inp.shape))
            batch.append(rows[:, start : start + size].reshape(3, *inp.shape))
            start += size
        cots = [np.broadcast_to(np.asarray(c, dtype=np.float64), (3, *np.shape(c))) for c in cotangent]
        forward = torch_reference.run_torch_tensor_batch(graph, batch, cots).forward
        weights = np.concatenate([np.asarray(c, dtype=np.float64).reshape(-1) for c in cotangent])
    else:
        cots = np.repeat(np.asarray(cotangent, dtype=np.float64)[:, None], 3, axis=1)
        forward = torch_reference.run_torch_batch(graph, list(rows.T), cots).forward
        weights = np.asarray(cotangent, dtype=np.float64)
    f = weights @ forward
    return float(f[0]), float(f[1]), float(f[2])


def _cotangent(graph: Graph) -> list[Any]:
    if graph.cotangent is not None:
        return list(graph.cotangent)
    return [1.0] * len(graph.outputs)


def torch_at(
    graph: Graph, values: list[Any], cotangent: list[Any], direction: list[Any] | None = None
) -> torch_reference.TorchResult:
    """Torch's forward, gradients (and Hessian-vector product) at one point, flattened."""
    if graph.is_tensor:
        batch = [np.asarray(v, dtype=np.float64)[None] for v in values]
        cots = [np.asarray(c, dtype=np.float64)[None] for c in cotangent]
        dirs = None if direction is None else [np.asarray(d, dtype=np.float64)[None] for d in direction]
        return torch_reference.run_torch_tensor_batch(graph, batch, cots, dirs)
    batch = [np.array([float(v)]) for v in values]
    cots = np.asarray(cotangent, dtype=np.float64)[:, None]
    dirs = None if direction is None else np.asarray(direction, dtype=np.float64)[:, None]
    return torch_reference.run_torch_batch(graph, batch, cots, dirs)


def _flat(values: Sequence[Any]) -> np.ndarray:
    if not values:
        return np.zeros(0)
    return np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for v in values])


def _same_pattern(a: np.ndarray, b: np.ndarray) -> bool:
    """The same places hold nan, +inf and -inf in both."""
    if a.shape != b.shape:
        return False
    return bool(
        np.array_equal(np.isnan(a), np.isnan(b))
        and np.array_equal(np.isposinf(a), np.isposinf(b))
        and np.array_equal(np.isneginf(a), np.isneginf(b))
    )


def _close(engine: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Entrywise agreement within the engine-vs-torch tolerance (non-finite entries: equal patterns)."""
    finite = np.isfinite(reference) & np.isfinite(engine)
    scale = max(float(np.abs(reference[finite]).max()) if finite.any() else 0.0, 1e-8)
    allowed = TORCH_TOLERANCE.atol * max(scale, 1.0) + TORCH_TOLERANCE.rtol * np.maximum(
        np.abs(reference), 1e-3 * scale
    )
    with np.errstate(invalid="ignore"):
        close = np.abs(engine - reference) <= allowed
    return np.where(finite, close, (engine == reference) | (np.isnan(engine) & np.isnan(reference)))
