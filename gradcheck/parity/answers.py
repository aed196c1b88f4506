"""The engine's answers at a graph's points, as the checks read them: evaluated lazily up to the
first exception, read into one matrix per part (outputs, gradients) with the errors against the
references (`errors.PointErrors`), and an answer that is not a number of the expected shape
reported as such (`wrong_type`). Shared by the check against torch (`compare`) and against the
exact values (`against_exact`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.checker.tolerance import Tolerance
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.graphs.ir import Graph, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.errors import PointErrors
from gradcheck.parity.problem import FORWARD, Problem, What, raised_problem
from gradcheck.parity.result import GraphCheck, record_failure
from gradcheck.parity.runs import ScalarRun, TensorRun


def run_at(run: ScalarRun | TensorRun, points: np.ndarray) -> tuple[list[Any], Any]:
    """A run's inputs and cotangents at some of its points, batched as `entry_bounds` takes them."""
    if isinstance(run, TensorRun):
        return [b[points] for b in run.batch], [c[points] for c in run.cot]
    return [b[points] for b in run.batch], run.cot[:, points]


def evaluate(
    evaluations: Iterator[tuple[list[Any], list[Any]]], n: int, adapter: EngineAdapter
) -> tuple[list[Any], Problem | None]:
    """The engine's (forward, gradients) at each of `n` points, as it gave them, up to the first
    point where it raised; and that exception's record, the engine's or the adapter's (None if
    it never did). An engine that raises is a finding, not a crash of the harness."""
    results: list[Any] = []
    try:
        for _, result in zip(range(n), evaluations):
            results.append(result)
    except Exception as e:
        return results, raised_problem(Raised.of(e, adapter))
    return results, None


def error_blocks(
    policy: Tolerance,
    results: list[Any],
    crash: Problem | None,
    reference: Any,
    numbers: Any,
    checkable: list[int],
    graph: Graph,
    errors: Callable[..., PointErrors] = PointErrors,
) -> tuple[list[tuple[PointErrors, int]], Problem | None]:
    """The errors at the evaluated points, with the index of each block's first point: one block
    for all points, or one per point when the engine's results differ in shape between points;
    and the engine's exception, or the first answer that is no number of the expected shape
    (`wrong_type`), as a record. `errors` makes a block's errors (`PointErrors`, or the exact
    reference's `ExactErrors`) from the tolerance, the engine's matrices, the references and the
    points."""
    matrices, columns = _matrices(results), []
    if matrices is None:  # some point gave no plain numbers, or not as many as the others
        expected = _answer_shapes(graph)
        for fwd, grads in results:
            wrong = wrong_type(fwd, grads, *expected)
            if wrong:
                crash = with_unpassed_attribute(wrong, graph)
                break
            try:
                columns.append((flat_vector(fwd), flat_vector(grads)))
            except Exception as e:
                crash = raised_problem(Raised.of(e))
                break
        if len({(f.shape, g.shape) for f, g in columns}) == 1:
            matrices = np.stack([f for f, _ in columns], axis=1), np.stack([g for _, g in columns], axis=1)
    if matrices is not None:
        cols = np.asarray(checkable[: matrices[0].shape[1]])
        return [(errors(policy, *matrices, reference, numbers, cols), 0)], crash
    return [
        (errors(policy, f[:, None], g[:, None], reference, numbers, np.asarray([checkable[i]])), i)
        for i, (f, g) in enumerate(columns)
    ], crash


def _matrices(results: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """A scalar engine's results at all points as forward (outputs, m) and gradients (inputs, m),
    one numpy call each; None unless every point gave the same number of numbers, or when a nan
    appears (numpy reads None as nan: the answers' types are then checked one by one)."""
    if not results:
        return None
    try:
        fwd = np.array([f for f, _ in results], dtype=np.float64)
        grads = np.array([g for _, g in results], dtype=np.float64)
    except Exception:  # an answer numpy cannot read (its __float__ may raise): checked one by one
        return None
    if fwd.ndim != 2 or grads.ndim != 2 or _any_nan(fwd) or _any_nan(grads):
        return None
    return fwd.T, grads.T


def _any_nan(x: np.ndarray) -> bool:
    return bool(np.isnan(np.add.reduce(x, axis=None)))


def _answer_shapes(graph: Graph) -> tuple[list[tuple[int, ...]], list[tuple[str, tuple[int, ...]]]]:
    """The shape of each output, and the name and shape of each input (its gradient's shape)."""
    shapes = graph_shapes(graph) if graph.is_tensor else [()] * (graph.n_inputs + len(graph.nodes))
    return [shapes[o] for o in graph.outputs], [(inp.name, shapes[i]) for i, inp in enumerate(graph.inputs)]


def with_unpassed_attribute(problem: Problem, graph: Graph) -> Problem:
    """A wrong-shape output record, with the optional attribute (`OpSpec.optional_attrs`: keepdim)
    without which the graph's output has the shape the engine gave, if one does: the adapter may
    have opted in to the attribute's variant without passing it on."""
    if problem.what is not What.WRONG_SHAPE or problem.output is None or not graph.is_tensor:
        return problem
    output = graph.outputs[problem.output]
    for name in sorted({a for node in graph.nodes for a in REGISTRY[node.op].optional_attrs}):
        nodes = [_without(node, name) for node in graph.nodes]
        if nodes == list(graph.nodes):
            continue
        try:
            shapes = graph_shapes(
                Graph(list(graph.inputs), nodes, list(graph.outputs), meta=dict(graph.meta))
            )
        except ValueError:  # the graph does not fit together without it
            continue
        if shapes[output] == tuple(problem.shape or ()):
            return replace(problem, unpassed=name)
    return problem


def _without(node: OpNode, name: str) -> OpNode:
    """`node` with optional attribute `name` at the value meant when it is left out."""
    default = REGISTRY[node.op].optional_attrs.get(name)
    if name not in node.attr or default is None or node.attr[name] == default:
        return node
    return OpNode(node.op, node.args, tuple(sorted({**node.attr, name: default}.items())), node.consts)


def wrong_type(
    forward: Sequence[Any],
    grads: Sequence[Any],
    out_shapes: Sequence[tuple[int, ...]],
    inputs: Sequence[tuple[str, tuple[int, ...]]],
) -> Problem | None:
    """The first of an engine's answers that is not a number (a float, or a numeric array) of the
    expected shape, as a record; None when all are. A node inside `.data`, None or a list is the
    engine's answer, not the harness's trouble: the check reports it against the graph."""
    if len(forward) != len(out_shapes) or len(grads) != len(inputs):
        counts = (len(forward), len(grads), len(out_shapes), len(inputs))
        return Problem(What.WRONG_COUNT, FORWARD, counts=counts)
    answers = [(FORWARD, j, None, shape, v) for j, (shape, v) in enumerate(zip(out_shapes, forward))]
    answers += [("gradient", None, name, shape, g) for (name, shape), g in zip(inputs, grads)]
    for check, output, name, shape, v in answers:
        if not _is_number(v):
            kind = type(v).__name__
            answer = f"{kind} {_short_repr(v)}"
            return Problem(
                What.NOT_A_NUMBER, check, output=output, input=name, answer=answer, answer_type=kind
            )
        if np.shape(v) != shape:
            return Problem(
                What.WRONG_SHAPE, check, output=output, input=name, shape=np.shape(v), expected=tuple(shape)
            )
    return None


def _is_number(v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (float, int, np.number)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "fiu"


def _short_repr(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def other_modes_judged(checkable: Sequence[int], numbers: Any) -> bool:
    """Whether the check's first point is one where another mode of the engine is judged (forward
    mode, a transform, the other order of H·v): one with central differences (not a kink case) that
    do not cross a kink. At a kink a mode may take a convention of its own (torch's forward mode
    at a tie of maximum is not its backward's)."""
    if not checkable or numbers is None:
        return False
    return not (numbers.kinked is not None and numbers.kinked[checkable[0]])


def one_point(graph: Graph, values: list[Any], cot: list[Any]) -> tuple[Any, ...]:
    """One point's inputs and cotangent, batched as `RoundingBounds` takes them."""
    batch = [np.asarray(v, dtype=np.float64)[None] for v in values]
    if graph.is_tensor:
        return batch, [np.asarray(c, dtype=np.float64)[None] for c in cot]
    return batch, np.asarray(cot, dtype=np.float64)[:, None]


def first_failure(
    result: GraphCheck,
    blocks: Sequence[tuple[PointErrors, int]],
    second: tuple[list[Problem], float],
    labels: Sequence[str],
    judge: Callable[[PointErrors], None],
) -> tuple[int | None, list[Problem]]:
    """The first block with a failing point, each block judged first (`judge`: its entries'
    bounds): the check stops at that block's most telling point, the one furthest outside its
    allowance, with the figures so far folded into `result`. `second`: the Hessian-vector
    product's problems at the first point and how far outside its allowance it is. Returns the
    failing point's place among the evaluated points (None: none fails) and its problems."""
    hvp_problems, hvp_excess = second
    for errors, start in blocks:
        judge(errors)
        excess = errors.excess()
        if start == 0 and hvp_problems:
            excess[0] = max(float(excess[0]), hvp_excess) if errors.bad[0] else hvp_excess
        bad = np.flatnonzero(errors.bad)
        if start == 0 and hvp_problems:
            bad = np.union1d(bad, [0])
        if bad.size:
            worst = int(bad[np.argmax(excess[bad])])
            errors.fold_into(result, worst + 1)
            failing = start + worst
            result.failing_excess = float(excess[worst])
            return failing, errors.problems(worst, labels) + (hvp_problems if failing == 0 else [])
        errors.fold_into(result, len(errors.bad))
    return None, []


def conclude(
    result: GraphCheck,
    graph: Graph,
    k: int,
    checkable: Sequence[int],
    cotangents: Sequence[Any],
    blocks: Sequence[tuple[PointErrors, int]],
    failing: int | None,
    problems: list[Problem],
    crash: Problem | None,
) -> None:
    """The check's verdict into `result`: how many points were checked and skipped, and the
    failure at the failing point (`failing`, a place among the evaluated `checkable` points), or
    at the point where the engine raised or answered with no number (`crash`), if any."""
    if failing is None and crash:
        failing = sum(len(errors.bad) for errors, _ in blocks)  # the point where the engine raised
        problems = [crash]
        result.failing_excess = float("inf")
    if failing is None:
        result.points_checked = len(checkable)
        result.points_skipped = k - len(checkable)
        return
    p = checkable[failing]
    result.points_checked = failing + 1
    result.points_skipped = p - failing
    record_failure(result, graph, p, cotangents[failing], *problems)
