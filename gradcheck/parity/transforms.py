"""An engine's other ways to the same gradient, judged beside its reverse mode: torch.func's
`jacrev`, `jacfwd` and `vmap`, JAX's `jit` (`EngineAdapter.transforms`, `run_transform`).

Each transform gives the check's points their cotangent-weighted gradients u·J by another road
(a whole Jacobian by reverse or forward mode, a batched backward over all the points, a compiled
one), judged at the first point, as the Hessian-vector product and forward mode are. Where it
agrees with the engine's reverse-mode gradient there to `AGREEING_ULPS` ulps per entry, or to
twice the rounding bound of an evaluation that sums the chain rule's path products in any order
(`any_order`, accumulation "paths", times `BOUND_SAFETY`: both are evaluations of that sum), it is
as right as that gradient, which the check judges apart, and no exact value is spent. Otherwise
the point's entries are judged by the exact value, each allowed that bound once times
`BOUND_SAFETY`, plus the exact value's radius; where no exact value can be had, by the
reverse-mode gradient with twice the bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.graphs.ir import Graph
from gradcheck.parity.answers import one_point
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.errors import BOUND_SAFETY, bound_ratio, within_ulps, worst_error
from gradcheck.parity.exact import run_exact
from gradcheck.parity.problem import TRANSFORM, BoundKind, Problem, What, raised_problem

SHOWN = 3  # the problems kept per transform, worst entries first
AGREEING_ULPS = 4.0  # a transform this close to the reverse-mode gradient needs no exact value


def with_transforms(
    second: tuple[list[Problem], float],
    adapter: EngineAdapter,
    graph: Graph,
    checkable: Sequence[int],
    points: Sequence[list[Any]],
    cotangents: Sequence[list[Any]],
    results: Sequence[Any],
    numbers: Any,
) -> tuple[list[Problem], float]:
    """The second-order check's (problems, excess) with each of the engine's transforms' joined to
    them, at the first of the points whose reverse-mode answers the check has (`results`). Not
    where that point's central differences cross a kink (`numbers.kinked`), nor without central
    differences (a kink case): at a kink a transform may take another convention of torch's own
    (forward mode's at a tie of maximum is not the backward's)."""
    if not (adapter.transforms and results and checkable and numbers is not None):
        return second
    if numbers.kinked is not None and numbers.kinked[checkable[0]]:
        return second
    problems, excess = list(second[0]), second[1]
    reverse = flat_vector(results[0][1])
    for name in adapter.transforms:
        found, worst = transform_problems(adapter, name, graph, points[: len(results)], cotangents, reverse)
        problems += found
        excess = max(excess, worst)
    return problems, excess


def transform_problems(
    adapter: EngineAdapter,
    name: str,
    graph: Graph,
    points: Sequence[list[Any]],
    cotangents: Sequence[list[Any]],
    reverse: np.ndarray,
) -> tuple[list[Problem], float]:
    """Transform `name`'s gradients over `points` judged at the first (see the module docstring)
    beside `reverse`, the engine's reverse-mode gradient there, as problems and how far the worst
    is outside its allowance; none when the transform does not apply to this graph."""
    try:
        with np.errstate(all="ignore"):
            answer = flat_vector(adapter.run_transform(name, graph, points, cotangents)[0])
    except NotImplementedError:
        return [], 0.0
    except Exception as e:
        raised = raised_problem(Raised.of(e, adapter), TRANSFORM)
        return [replace(raised, case=name)], float("inf")
    if answer.shape != reverse.shape:
        shape = Problem(What.WRONG_SHAPE, TRANSFORM, shape=answer.shape, expected=reverse.shape, case=name)
        return [shape], float("inf")
    with np.errstate(invalid="ignore"):
        err = np.where(np.isnan(answer) & np.isnan(reverse), 0.0, np.abs(answer - reverse))
    if within_ulps(err, reverse, AGREEING_ULPS):
        return [], 0.0
    return _judged(graph, name, points[0], cotangents[0], answer, reverse)


def _judged(
    graph: Graph, name: str, values: list[Any], cotangent: list[Any], answer: np.ndarray, main: np.ndarray
) -> tuple[list[Problem], float]:
    """The transform's answer at a point judged by the exact gradient, or without one by `main`."""
    batch, cot = one_point(graph, values, cotangent)
    with np.errstate(all="ignore"):
        bound = any_order_bounds(graph, batch, cot, "paths").grads[:, 0]
        judge, allowed = main, 2 * BOUND_SAFETY * bound
        err = np.where(np.isnan(answer) & np.isnan(judge), 0.0, np.abs(answer - judge))
        if (err <= allowed).all():  # within rounding of the reverse mode: no exact value spent
            return [], 0.0
        try:
            exact = run_exact(graph, batch, cot)
        except Exception:  # an op without an exact form
            exact = None
        if exact is not None and not exact.undecided[0]:
            judge, allowed = exact.grads[:, 0], BOUND_SAFETY * bound + exact.radius.grads[:, 0]
            err = np.where(np.isnan(answer) & np.isnan(judge), 0.0, np.abs(answer - judge))
    bad = ~(err <= allowed)
    if not bad.any():
        return [], 0.0
    excess = worst_error(bound_ratio(err[bad], allowed[bad]))
    worst = np.flatnonzero(bad)[np.argsort(-np.nan_to_num(err[bad], nan=np.inf))][:SHOWN]
    return [
        Problem(
            What.TRANSFORM,
            TRANSFORM,
            index=int(i),
            engine=float(answer[i]),
            reference=float(main[i]),
            exact=None if judge is main else float(judge[i]),
            error=float(err[i]),
            allowed=float(allowed[i]),
            bound=float(bound[i]),
            bound_kind=BoundKind.ANY_ORDER,
            safety=BOUND_SAFETY,
            case=name,
        )
        for i in sorted(worst)
    ], excess
