"""Forward mode, judged at a graph's first checked point: the engine's J·v (`EngineAdapter.
run_jvp`, along the run's direction v) against the exact derivative of each output along v.

First the engine's two modes are compared, u·(J v) with (u J)·v for the point's cotangent u: where
they agree to a few ulps of their terms, forward mode is as right as the reverse-mode gradient,
which the check judges apart, and no exact value is spent (it is the costly part: a tensor graph's
exact evaluation is number by number). Otherwise each entry is judged by the exact value.

Forward mode multiplies the same local derivatives as a backward pass, from the inputs' end, and
sums them in its own order; so each entry is allowed the rounding bound of an evaluation that sums
the chain rule's path products in any order (`any_order`, accumulation "paths"): for output o,
sum_j |v_j| times the bound of d o / d x_j, times one more than the count of input entries (the
terms of different inputs meet in sums of their own), plus the exact value's own radius, times
`BOUND_SAFETY`. Where no exact value can be had (an op without an exact form, a branch the exact
evaluation cannot decide) the engine's two modes are held to the transpose identity instead,
u·(J v) = (u J)·v with u the point's cotangent, which needs no reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.answers import one_point, other_modes_judged
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.errors import (
    BOUND_SAFETY,
    EPS,
    HVP_AGREEING_ULPS,
    bound_ratio,
    within_ulps,
    worst_error,
)
from gradcheck.parity.exact import run_exact
from gradcheck.parity.problem import FORWARD_MODE, BoundKind, Off, Problem, What, raised_problem

SHOWN = 3  # the problems kept per check, worst entries first
# Forward and reverse mode agreeing to this many ulps of their terms, per term, need no exact value.
IDENTITY_ULPS = 4.0


def with_forward_mode(
    second: tuple[list[Problem], float],
    adapter: EngineAdapter,
    graph: Graph,
    run: Any,
    checkable: Sequence[int],
    points: Sequence[list[Any]],
    cotangents: Sequence[list[Any]],
    results: Sequence[Any],
    numbers: Any,
) -> tuple[list[Problem], float]:
    """The second-order check's (problems, excess) with forward mode's at the first checked point
    joined to them, for an engine with `forward_mode` whose first point was evaluated; along the
    run's H·v direction, or for an engine without second derivatives one drawn from the point's
    index (the same on every run). Not where that point's central differences cross a kink
    (`numbers.kinked`), nor without central differences (a kink case): at a kink an engine's J·v
    is its convention, which its forward mode may choose apart from its backward."""
    if not (adapter.forward_mode and results and other_modes_judged(checkable, numbers)):
        return second
    p = checkable[0]
    if run.direction is not None:
        direction = run.direction_at(p)
    else:
        rng = np.random.default_rng(p)
        direction = [rng.normal(size=np.shape(v)) if np.ndim(v) else float(rng.normal()) for v in points[0]]
    problems, excess = forward_mode_problems(
        adapter, graph, points[0], cotangents[0], direction, results[0][1]
    )
    if not problems:
        return second
    return second[0] + problems, max(second[1], excess)


def forward_mode_problems(
    adapter: EngineAdapter,
    graph: Graph,
    values: list[Any],
    cotangent: list[Any],
    direction: list[Any],
    reverse: Sequence[Any] | None,
) -> tuple[list[Problem], float]:
    """The engine's J·v at one point judged by the exact values (or, without them, by the
    transpose identity with `reverse`, the engine's own cotangent-weighted gradient there), as
    problems, and how far the worst is outside its allowance; none when the engine has no
    forward mode for this graph (`run_jvp` raised NotImplementedError)."""
    try:
        _, tangents = adapter.run_jvp(graph, values, direction)
        jvp = flat_vector(tangents)
    except NotImplementedError:
        return [], 0.0
    except Exception as e:
        return [raised_problem(Raised.of(e, adapter), FORWARD_MODE)], float("inf")
    along = tuple(flat_vector(direction).tolist())
    sides = _identity_sides(cotangent, direction, jvp, reverse)
    if sides is not None and sides.agree():
        return [], 0.0
    exact = _exact_and_radius(graph, values, cotangent, direction)
    if exact is None:
        return _transpose_identity(graph, values, direction, sides, along)
    value, radius = exact
    if jvp.shape != value.shape:
        shape = Problem(What.WRONG_SHAPE, FORWARD_MODE, shape=jvp.shape, expected=value.shape)
        return [shape], float("inf")
    err = np.abs(jvp - value)
    with np.errstate(invalid="ignore"):
        err = np.where(np.isnan(jvp) & np.isnan(value), 0.0, err)
    if within_ulps(err, value, HVP_AGREEING_ULPS):
        return [], 0.0
    allowed = BOUND_SAFETY * _bounds(graph, values, direction) + radius
    bad = ~(err <= allowed)
    if not bad.any():
        return [], 0.0
    excess = worst_error(bound_ratio(err[bad], allowed[bad]))
    worst = np.flatnonzero(bad)[np.argsort(-np.nan_to_num(err[bad], nan=np.inf))][:SHOWN]
    torch = _torch_beside(adapter, graph, values, direction, value.shape)
    torch_bad = ~(np.abs(torch - value) <= allowed) if torch is not None else None
    return [
        Problem(
            What.JVP,
            FORWARD_MODE,
            index=int(i),
            engine=float(jvp[i]),
            reference=None if torch is None else float(torch[i]),
            exact=float(value[i]),
            off=None if torch_bad is None else Off.BOTH if torch_bad[i] else Off.ENGINE,
            error=float(err[i]),
            allowed=float(allowed[i]),
            bound=float(allowed[i] / BOUND_SAFETY),
            bound_kind=BoundKind.ANY_ORDER,
            safety=BOUND_SAFETY,
            direction=along,
        )
        for i in sorted(worst)
    ], excess


@dataclass(frozen=True)
class _Sides:
    """The transpose identity's two sides at a point: u·(J v) by forward mode, (u J)·v by reverse
    mode, the sum of their terms' sizes and how many terms they have."""

    u: np.ndarray
    forward: float
    backward: float
    terms: float
    count: int

    def agree(self) -> bool:
        """Whether the sides agree to `IDENTITY_ULPS` ulps of their terms per term: then forward
        mode is as right as the gradient (which the check judges apart) in u's projection, and no
        exact evaluation is spent on it."""
        return bool(
            np.isfinite(self.terms) and abs(self.forward - self.backward) <= self.rounding(IDENTITY_ULPS)
        )

    def rounding(self, ulps: float) -> float:
        return ulps * self.count * EPS * self.terms


def _identity_sides(
    cotangent: list[Any], direction: list[Any], jvp: np.ndarray, reverse: Sequence[Any] | None
) -> _Sides | None:
    """Both sides of the identity, from the engine's J·v and its reverse-mode gradient `reverse`;
    None without a gradient of the expected size."""
    if reverse is None:
        return None
    u, v, g = flat_vector(cotangent), flat_vector(direction), flat_vector(reverse)
    if u.shape != jvp.shape or g.shape != v.shape:
        return None
    with np.errstate(all="ignore"):
        terms = float(np.abs(u) @ np.abs(jvp) + np.abs(g) @ np.abs(v))
        return _Sides(u, float(u @ jvp), float(g @ v), terms, len(u) + len(v))


def _torch_beside(
    adapter: EngineAdapter, graph: Graph, values: list[Any], direction: list[Any], shape: tuple[int, ...]
) -> np.ndarray | None:
    """Torch's forward-mode J·v at the point, judged beside the engine's (so a difference torch's
    forward mode shares says "torch too"); None for torch itself, or where torch cannot give it."""
    if isinstance(adapter, TorchAdapter):
        return None
    try:
        with np.errstate(all="ignore"):
            torch = flat_vector(TorchAdapter().run_jvp(graph, values, direction)[1])
    except Exception:
        return None
    return torch if torch.shape == shape else None


def exact_jvp(graph: Graph, values: list[Any], cotangent: list[Any], direction: list[Any]) -> np.ndarray:
    """The exact J·v at one point along `direction`, each flat output entry rounded to float64
    (nan where it cannot be had)."""
    exact = _exact_and_radius(graph, values, cotangent, direction)
    size = sum(int(np.prod(shape)) for shape in _output_shapes(graph))
    return exact[0] if exact is not None else np.full(size, np.nan)


def _exact_and_radius(
    graph: Graph, values: list[Any], cotangent: list[Any], direction: list[Any]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact J·v at the point (float64) and its radius; None when it cannot be had."""
    batch, cot = one_point(graph, values, cotangent)
    along = [np.asarray(d, dtype=np.float64)[None] for d in direction]
    try:
        with np.errstate(all="ignore"):
            exact = run_exact(
                graph, batch, cot, along if graph.is_tensor else np.asarray(direction)[:, None], jvp=True
            )
    except Exception:  # an op without an exact form
        return None
    if exact.jvp is None or exact.undecided[0]:
        return None
    assert exact.radius.jvp is not None
    return exact.jvp[:, 0], exact.radius.jvp[:, 0]


def _bounds(graph: Graph, values: list[Any], direction: list[Any]) -> np.ndarray:
    """Each flat output entry's J·v rounding bound (see the module docstring)."""
    v = np.abs(flat_vector(direction))
    shapes = _output_shapes(graph)
    sizes = [int(np.prod(shape)) for shape in shapes]
    f = sum(sizes)
    repeated = [np.repeat(np.asarray(x, dtype=np.float64)[None], f, axis=0) for x in values]
    units = np.eye(f)
    if graph.is_tensor:
        cot, start = [], 0
        for shape, size in zip(shapes, sizes):
            cot.append(units[:, start : start + size].reshape((f, *shape)))
            start += size
    else:
        cot = units
    with np.errstate(all="ignore"):
        per_input = any_order_bounds(graph, repeated, cot, "paths").grads  # (N, F): d o / d x_j's bound
    return (1 + len(v)) * (v[:, None] * per_input).sum(axis=0)


def _output_shapes(graph: Graph) -> list[tuple[int, ...]]:
    if not graph.is_tensor:
        return [()] * len(graph.outputs)
    shapes = graph_shapes(graph)
    return [shapes[o] for o in graph.outputs]


def _transpose_identity(
    graph: Graph, values: list[Any], direction: list[Any], sides: _Sides | None, along: tuple[float, ...]
) -> tuple[list[Problem], float]:
    """Without an exact value: u·(J v) from the engine's forward mode against (u J)·v from its
    reverse mode, each side allowed the rounding of a J·v (`_bounds`, weighted by |u|)."""
    if sides is None:
        return [], 0.0
    forward, backward = sides.forward, sides.backward
    error = abs(forward - backward)
    if not np.isfinite(forward) or not np.isfinite(backward):
        return [], 0.0  # a nan or inf of either mode is the other checks' to judge
    try:
        bound = float(np.abs(sides.u) @ _bounds(graph, values, direction))
    except Exception:
        bound = 0.0
    allowed = BOUND_SAFETY * (2 * bound + sides.rounding(1.0))
    if error <= allowed:
        return [], 0.0
    problem = Problem(
        What.MODES,
        FORWARD_MODE,
        engine=forward,
        reference=backward,
        error=error,
        allowed=allowed,
        bound=allowed / BOUND_SAFETY,
        safety=BOUND_SAFETY,
        direction=along,
    )
    return [problem], float(bound_ratio(np.array([error]), np.array([allowed]))[0])
