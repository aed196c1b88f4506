"""An engine's other ways to the same gradient, judged beside its reverse mode: torch.func's
`jacrev`, `jacfwd` and `vmap`, JAX's `jit` (`EngineAdapter.transforms`, `run_transform`); and
to the same Hessian-vector product, judged beside `run_hvp`'s: forward over reverse against
reverse over reverse (`hvp_transforms`, `run_hvp_transform`).

Each transform gives the check's points their cotangent-weighted gradients u·J by another road
(a whole Jacobian by reverse or forward mode, a batched backward over all the points, a compiled
one), judged at the first point, as the Hessian-vector product and forward mode are. Where it
agrees with the engine's reverse-mode gradient there to `AGREEING_ULPS` ulps per entry, or to
twice the rounding bound of an evaluation that sums the chain rule's path products in any order
(`any_order`, accumulation "paths", times `BOUND_SAFETY`: both are evaluations of that sum), it is
as right as that gradient, which the check judges apart, and no exact value is spent. Otherwise
the point's entries are judged by the exact value, each allowed that bound once times
`BOUND_SAFETY`, plus the exact value's radius; where no exact value can be had, by the
reverse-mode gradient with twice the bound. A Hessian-vector product by the other order is
judged so too, beside the engine's own H·v, by that product's rounding bound
(`rounding.hvp_bound`) in place of the gradient's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.graphs.ir import Graph
from gradcheck.parity.answers import one_point, other_modes_judged
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.errors import BOUND_SAFETY, HVP_AGREEING_ULPS, bound_ratio, within_ulps, worst_error
from gradcheck.parity.exact import run_exact
from gradcheck.parity.exact_errors import Precision
from gradcheck.parity.problem import TRANSFORM, BoundKind, Problem, What, raised_problem
from gradcheck.parity.rounding import hvp_bound

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
    if not (adapter.transforms and results and other_modes_judged(checkable, numbers)):
        return second
    at = (graph, points[: len(results)], cotangents, flat_vector(results[0][1]))
    return _joined(second, (transform_problems(adapter, name, *at) for name in adapter.transforms))


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
    answer, failed = _answer(
        adapter, name, reverse, lambda: adapter.run_transform(name, graph, points, cotangents)[0]
    )
    if answer is None:
        return failed
    err = _distance(answer, reverse)
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
        err = _distance(answer, judge)
        if (err <= allowed).all():  # within rounding of the reverse mode: no exact value spent
            return [], 0.0
        try:
            exact = run_exact(graph, batch, cot)
        except Exception:  # an op without an exact form
            exact = None
        if exact is not None and not exact.undecided[0]:
            judge, allowed = exact.grads[:, 0], BOUND_SAFETY * bound + exact.radius.grads[:, 0]
            err = _distance(answer, judge)
    return _entries(name, answer, main, judge, err, allowed, bound, BoundKind.ANY_ORDER)


def with_hvp_transforms(
    second: tuple[list[Problem], float],
    adapter: EngineAdapter,
    graph: Graph,
    values: list[Any],
    cotangent: list[Any],
    direction: list[Any],
    reverse: np.ndarray | None,
) -> tuple[list[Problem], float]:
    """The second-order check's (problems, excess) with the H·v by each of the engine's other
    orders (`hvp_transforms`) joined to them, beside `reverse`, the engine's own H·v at the point
    (None: it had none to give)."""
    if not adapter.hvp_transforms or reverse is None:
        return second
    at = (graph, values, cotangent, direction, reverse)
    return _joined(second, (hvp_transform_problems(adapter, name, *at) for name in adapter.hvp_transforms))


def hvp_transform_problems(
    adapter: EngineAdapter,
    name: str,
    graph: Graph,
    values: list[Any],
    cotangent: list[Any],
    direction: list[Any],
    reverse: np.ndarray,
) -> tuple[list[Problem], float]:
    """The H·v by `name` at one point judged beside `reverse`, the engine's own (module docstring)."""
    answer, failed = _answer(
        adapter, name, reverse, lambda: adapter.run_hvp_transform(name, graph, values, cotangent, direction)
    )
    if answer is None:
        return failed
    err = _distance(answer, reverse)
    if within_ulps(err, reverse, HVP_AGREEING_ULPS):
        return [], 0.0
    precision = Precision.of("float64", graph)
    with np.errstate(all="ignore"):
        bound = hvp_bound(graph, values, cotangent, direction, reverse, precision, err / 2)
        judge, allowed = reverse, 2 * BOUND_SAFETY * bound
        if (err <= allowed).all():  # within rounding of the engine's own H·v: no exact value spent
            return [], 0.0
        batch, cot = one_point(graph, values, cotangent)
        along: Any = [np.asarray(d, dtype=np.float64)[None] for d in direction]
        try:
            exact = run_exact(graph, batch, cot, along if graph.is_tensor else np.concatenate(along)[:, None])
        except Exception:  # an op without an exact form
            exact = None
        if (
            exact is not None
            and exact.hvp is not None
            and exact.radius.hvp is not None
            and not exact.undecided[0]
        ):
            judge = exact.hvp[:, 0]
            err = _distance(answer, judge)
            bound = hvp_bound(graph, values, cotangent, direction, judge, precision, err)
            allowed = BOUND_SAFETY * bound + exact.radius.hvp[:, 0]
    found, excess = _entries(name, answer, reverse, judge, err, allowed, bound, BoundKind.EXACT_HVP)
    along_ones = tuple(flat_vector(direction).tolist())
    return [replace(p, direction=along_ones) for p in found], excess


def _joined(
    second: tuple[list[Problem], float], judged: Iterable[tuple[list[Problem], float]]
) -> tuple[list[Problem], float]:
    """The check's (problems, excess) with each transform's (`judged`) joined to them."""
    problems, excess = list(second[0]), second[1]
    for found, worst in judged:
        problems += found
        excess = max(excess, worst)
    return problems, excess


def _answer(
    adapter: EngineAdapter, name: str, reverse: np.ndarray, take: Callable[[], Any]
) -> tuple[np.ndarray | None, tuple[list[Problem], float]]:
    """The transform's flattened answer (`take()`), or None and what the check makes of its
    failing: nothing where it does not apply (NotImplementedError), else a raised or shape problem."""
    try:
        with np.errstate(all="ignore"):
            answer = flat_vector(take())
    except NotImplementedError:
        return None, ([], 0.0)
    except Exception as e:
        raised = raised_problem(Raised.of(e, adapter), TRANSFORM)
        return None, ([replace(raised, case=name)], float("inf"))
    if answer.shape != reverse.shape:
        shape = Problem(What.WRONG_SHAPE, TRANSFORM, shape=answer.shape, expected=reverse.shape, case=name)
        return None, ([shape], float("inf"))
    return answer, ([], 0.0)


def _distance(answer: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """|answer - judge| per entry, 0 where both are nan."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(answer) & np.isnan(judge), 0.0, np.abs(answer - judge))


def _entries(
    name: str,
    answer: np.ndarray,
    main: np.ndarray,
    judge: np.ndarray,
    err: np.ndarray,
    allowed: np.ndarray,
    bound: np.ndarray,
    bound_kind: BoundKind,
) -> tuple[list[Problem], float]:
    """The entries of transform `name`'s `answer` outside their allowance, worst first (at most
    `SHOWN`), beside `main` (the engine's own answer), judged by `judge` (`main` itself where no
    exact value was had); and how far the worst is outside."""
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
            bound_kind=bound_kind,
            safety=BOUND_SAFETY,
            case=name,
        )
        for i in sorted(worst)
    ], excess
