"""The kind of one failing check: what a person must hear first about a difference from torch.

`classify(problems, graph, adapter)` re-evaluates the failing instance of a `GraphCheck` (one input point,
its cotangent) with the engine and with torch and names the difference: the engine raised, a
nan/inf pattern unlike torch's, a wrong forward value, a convention at a kink (the engine's slope
lies between the one-sided derivatives but is not torch's choice), a wrong gradient, or wrong
second derivatives. It also says which check failed (forward, gradient, second-derivative).
Another mode's difference (forward mode, a transform) is the kind only where the engine's own
answers are right: a transform of a wrong H·v meets the same mistake again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity import torch_reference
from gradcheck.parity.errors import TORCH_TOLERANCE
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import FORWARD_MODE, NOT_NUMBERS, SECOND, TRANSFORM, Problem, What
from gradcheck.parity.result import GraphCheck

# One-sided slopes are difference quotients over this step (relative to max(1, |x|)): far below
# any kink margin the random graphs keep, far above float64 rounding of the function values.
ONE_SIDED_STEP = 1e-7
# Slopes (and a slope between them) count as equal within this, relative to 1 + their size.
SLOPE_TOL = 1e-4
# A one-sided quotient is re-taken with a step this many times smaller: a slope stays within
# JUMP_TOL (relative), a jump's quotient grows by the ratio.
JUMP_RATIO = 8.0
JUMP_TOL = 1e-3


@dataclass(frozen=True)
class Difference:
    """What kind of difference a failing check shows, and in which part of the check."""

    kind: Kind
    check: str  # "forward", "gradient", "second-derivative" or "forward-mode"


def classify_check(check: GraphCheck, adapter: EngineAdapter) -> Difference:
    """The kind of difference a failing `check` shows (see the module docstring)."""
    if check.failure is None:
        raise ValueError("classify_check: the check has no failing instance (did it pass?)")
    return classify(check.problems, check.failure, adapter)


def cause_of(problems: Sequence[Problem], graph: Graph, adapter: EngineAdapter) -> Difference | None:
    """`classify`, or None where classifying raises (it runs the engine's code again: the
    campaign leaves such a failure unclassified rather than stop)."""
    try:
        return classify(problems, graph, adapter)
    except Exception:
        return None


def classify(problems: Sequence[Problem], graph: Graph, adapter: EngineAdapter) -> Difference:
    """The kind of difference behind `problems`, found on `graph` (a one-point failing instance)."""
    if any(p.what is What.RAISED and p.first_order for p in problems):
        return Difference(Kind.EXCEPTION, "gradient")
    if any(p.check == FORWARD_MODE for p in problems) and not any(p.first_order for p in problems):
        return _other_mode(problems, FORWARD_MODE, Kind.WRONG_FORWARD_MODE)
    if any(p.check == TRANSFORM for p in problems) and not any(
        p.first_order or p.check == SECOND for p in problems
    ):
        return _other_mode(problems, TRANSFORM, Kind.WRONG_TRANSFORM)
    wrong = [p for p in problems if p.what in NOT_NUMBERS]
    if wrong:
        kind = Kind.WRONG_SHAPE if wrong[0].what is What.WRONG_SHAPE else Kind.WRONG_TYPE
        return Difference(kind, "gradient" if wrong[0].input is not None else "forward")
    values, cotangent = graph.input_values(0), _cotangent(graph)
    if any(p.check == SECOND for p in problems) and not any(p.first_order for p in problems):
        return _second_order(graph, adapter, values, cotangent, problems)
    try:
        forward, grads = adapter.run(graph, values, cotangent)
    except Exception:
        return Difference(Kind.EXCEPTION, "gradient")
    fwd_e, grad_e = flat_vector(forward), flat_vector(grads)
    reference = torch_at(graph, values, cotangent)
    fwd_t, grad_t = reference.forward[:, 0], reference.grads[:, 0]
    if any(p.of_forward_values for p in problems) or not _same_pattern(fwd_e, fwd_t):
        kind = Kind.NONFINITE if not _same_pattern(fwd_e, fwd_t) else Kind.WRONG_VALUE
        return Difference(kind, "forward")
    if not _same_pattern(grad_e, grad_t):
        return Difference(Kind.NONFINITE, "gradient")
    differs = ~_close(grad_e, grad_t)
    if (
        differs.any()
        and at_convention(graph, values, cotangent, grad_e, np.flatnonzero(differs))
        and _convention_with_constants_as_inputs(graph, adapter, values, cotangent)
    ):
        return Difference(Kind.CONVENTION, "gradient")
    return Difference(Kind.WRONG_GRADIENT, "gradient")


def _convention_with_constants_as_inputs(
    graph: Graph, adapter: EngineAdapter, values: list[Any], cotangent: list[Any]
) -> bool:
    """Whether a one-op graph's convention holds for the op's rule, its constant operands made
    inputs: `maximum(x, 0.0)` at x = 0 with slope 0 for x looks like relu's convention, but a rule
    that gives both tied operands 0 is no subgradient of `maximum(x0, x1)` (its partials must sum
    to 1), and the constant hid the second one. Graphs without constants: True."""
    if len(graph.nodes) != 1 or not graph.nodes[0].consts:
        return True
    lifted, lifted_values = _constants_as_inputs(graph, values)
    try:
        _, grads = adapter.run(lifted, lifted_values, cotangent)
        grad_e = flat_vector(grads)
    except Exception:
        return True  # the engine cannot take the constant as a value: the graph's verdict stands
    reference = torch_at(lifted, lifted_values, cotangent)
    differs = ~_close(grad_e, reference.grads[:, 0])
    if not differs.any() or not _same_pattern(grad_e, reference.grads[:, 0]):
        return not differs.any()
    return at_convention(lifted, lifted_values, cotangent, grad_e, np.flatnonzero(differs))


def _constants_as_inputs(graph: Graph, values: list[Any]) -> tuple[Graph, list[Any]]:
    """A one-op graph with each constant operand an input holding its value (after the inputs)."""
    node = graph.nodes[0]
    inputs, lifted_values = list(graph.inputs), list(values)
    tensor = graph.is_tensor
    for c in node.consts:
        value = np.asarray(c.value, dtype=np.float64) if tensor else float(c.value)
        inputs.append(Input(f"x{len(inputs)}", value, ()))
        lifted_values.append(value)
    at = {c.at: graph.n_inputs + k for k, c in enumerate(node.consts)}
    ids = iter(node.args)
    args = tuple(at[i] if i in at else next(ids) for i in range(node.arity))
    meta = {**graph.meta, **({"kind": "tensor"} if tensor else {})}
    op = OpNode(node.op, args, node.attrs)
    return Graph(inputs, [op], [len(inputs)], None, graph.cotangent, meta), lifted_values


def _other_mode(problems: Sequence[Problem], check: str, wrong: Kind) -> Difference:
    """A difference met by forward mode or a transform alone (`check`): the answer the check found
    is the evidence (no second engine run: the check compared it with the exact value, or with the
    engine's reverse mode)."""
    mode = [p for p in problems if p.check == check]
    if any(p.what is What.RAISED for p in mode):
        return Difference(Kind.EXCEPTION, check)
    if any(p.what is What.WRONG_SHAPE for p in mode):
        return Difference(Kind.WRONG_SHAPE, check)
    # against the exact value (a J·v entry) or the reverse mode (the transpose identity)
    other = [
        (p.engine, p.exact if p.exact is not None else p.reference) for p in mode if p.engine is not None
    ]
    finite = [math.isfinite(engine) == math.isfinite(judge) for engine, judge in other if judge is not None]
    if not all(finite):
        return Difference(Kind.NONFINITE, check)
    return Difference(wrong, check)


def _second_order(
    graph: Graph, adapter: EngineAdapter, values: list[Any], cotangent: list[Any], problems: Sequence[Problem]
) -> Difference:
    if any(p.what is What.RAISED for p in problems):
        return Difference(Kind.EXCEPTION, "second-derivative")
    direction = [np.ones_like(v) if isinstance(v, np.ndarray) else 1.0 for v in values]
    try:
        hvp_e = flat_vector(adapter.run_hvp(graph, values, cotangent, direction))
    except Exception:
        return Difference(Kind.EXCEPTION, "second-derivative")
    hvp_t = torch_at(graph, values, cotangent, direction).hvp
    if hvp_t is not None and not _same_pattern(hvp_e, hvp_t[:, 0]):
        return Difference(Kind.NONFINITE, "second-derivative")
    return Difference(Kind.WRONG_SECOND_DERIVATIVE, "second-derivative")


def at_convention(
    graph: Graph, values: list[Any], cotangent: list[Any], grad_e: np.ndarray, coordinates: Sequence[int]
) -> bool:
    """Whether the engine's gradient is a valid subgradient where it differs from torch's: at every
    coordinate given the function has a kink (its one-sided slopes differ) and the engine's slope
    lies between them, and along all the kinked coordinates together (a tie moves them together)
    the engine's slopes sum to one between the one-sided slopes there. maximum(x0, x1) at x0 = x1
    with partials (1, 0) is a convention; (0, 0) sums to 0 where the slope is 1: a wrong gradient.
    A jump is no kink (its one-sided quotients grow as the step shrinks): at atan2's branch cut
    only the continuous side has a slope, and a gradient that is not it is wrong."""
    flat = flat_vector(values)
    n = flat.size
    steps = ONE_SIDED_STEP * np.maximum(1.0, np.abs(flat))
    moves = np.diag(steps)
    rows = [flat[None], flat + moves, flat - moves, flat + moves / JUMP_RATIO, flat - moves / JUMP_RATIO]
    f = _weighted_at(graph, values, cotangent, np.concatenate(rows))
    right, left = (f[1 : n + 1] - f[0]) / steps, (f[0] - f[n + 1 : 2 * n + 1]) / steps
    fine = steps / JUMP_RATIO
    right_fine, left_fine = (f[2 * n + 1 : 3 * n + 1] - f[0]) / fine, (f[0] - f[3 * n + 1 :]) / fine
    kinked = [
        i
        for i in range(n)
        if _slopes_differ(left[i], right[i])
        and _continuous(right[i], right_fine[i])
        and _continuous(left[i], left_fine[i])
    ]
    if not all(i in kinked and _between(grad_e[i], left[i], right[i]) for i in coordinates):
        return False
    tied = sorted(set(kinked) | set(coordinates))
    if len(tied) < 2:
        return True
    step = ONE_SIDED_STEP * max(1.0, float(np.abs(flat[tied]).max()))
    move = np.zeros(n)
    move[tied] = step
    f = _weighted_at(graph, values, cotangent, np.stack([flat, flat + move, flat - move]))
    together_right, together_left = (f[1] - f[0]) / step, (f[0] - f[2]) / step
    if not (np.isfinite(together_left) and np.isfinite(together_right)):
        return False
    return _between(float(grad_e[tied].sum()), together_left, together_right)


def _continuous(slope: float, finer: float) -> bool:
    """Whether a one-sided difference quotient is a slope, not a jump: it stays put when the step
    shrinks (across a jump it grows as 1 / step: atan2's 2*pi across y = 0 for x < 0 is no kink)."""
    return bool(np.isfinite(slope) and abs(slope - finer) <= JUMP_TOL * (1.0 + abs(slope) + abs(finer)))


def _slopes_differ(left: float, right: float) -> bool:
    slack = SLOPE_TOL * (1.0 + abs(left) + abs(right))
    return bool(np.isfinite(left) and np.isfinite(right) and abs(right - left) > slack)


def _between(slope: float, left: float, right: float) -> bool:
    slack = SLOPE_TOL * (1.0 + abs(left) + abs(right))
    return bool(min(left, right) - slack <= slope <= max(left, right) + slack)


def _weighted_at(graph: Graph, values: list[Any], cotangent: list[Any], rows: np.ndarray) -> np.ndarray:
    """sum(cotangent * outputs) at each row of flattened input values, by torch."""
    count = rows.shape[0]
    if graph.is_tensor:
        batch, start = [], 0
        for inp in graph.inputs:
            size = int(np.prod(inp.shape))
            batch.append(rows[:, start : start + size].reshape(count, *inp.shape))
            start += size
        forward = torch_reference.forward_values(graph, batch)
        weights = flat_vector(cotangent)
    else:
        forward = torch_reference.forward_values(graph, list(rows.T))
        weights = np.asarray(cotangent, dtype=np.float64)
    return weights @ forward


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
