"""Blame: which node of a failing graph fails alone, found cheaply.

A full shrink costs hundreds of checks. Most failing graphs of a campaign fail for a reason a
single node shows, so a failing graph is first blamed by checking each of its op nodes alone, at
the argument values the node saw at the failing point (a handful of one-op checks). A node that
fails alone the graph's way is the finding (its one-op graph is a minimal repro); the nodes that
fail alone in another way are kept for `campaign.explain`, which freezes them to see whether
they explain the graph.

A failure is classified once (`parity.classify`: its kind and which check failed): a `Diagnosed`
failure carries its difference to the finding made of it (`finding_of`), and `nodes_alone`
returns the node it blames already diagnosed. A Diagnosed failure also carries how far it is
outside its allowance (`excess`): a finding shows its strongest example (`grouping.group_findings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gradcheck.campaign.findings import CHECKS, Finding
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.snippets import ALLOWED, EXACT, forward_mode_snippet, transform_snippet
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.regions import ORDINARY, TINY, region_of, tiny
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity import torch_reference
from gradcheck.parity.against_exact import exact_repro
from gradcheck.parity.classify import Difference, classify
from gradcheck.parity.compare import check_graph, failing_check, repro_allowances
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import FORWARD_MODE, TRANSFORM, Problem
from gradcheck.parity.result import GraphCheck


@dataclass(frozen=True)
class Diagnosed:
    """A failure on a one-point graph: the checker's problems, the graph (`failure`, the failing
    instance, as a GraphCheck names it) and their difference from torch, classified once (None:
    not classified yet, or classifying raised); `excess`: how far the failing point is outside
    its allowance (`GraphCheck.failing_excess`; None when unknown)."""

    problems: tuple[Problem, ...]
    failure: Graph
    difference: Difference | None
    excess: float | None = None

    @classmethod
    def of(cls, check: GraphCheck, difference: Difference | None = None) -> Diagnosed:
        """A failing check's failure, with its difference when known."""
        assert check.failure is not None
        return cls(tuple(check.problems), check.failure, difference, check.failing_excess)


def finding_of(
    diagnosed: Diagnosed,
    adapter: EngineAdapter,
    *,
    phase: str = "random",
    where: str = "",
    indices: Sequence[int] = (),
) -> Finding:
    """The finding a failure shows: its kind and check as diagnosed (classified here when not yet),
    and how far outside its allowance it is (`Finding.excess`, when known)."""
    graph, problems = diagnosed.failure, diagnosed.problems
    difference = diagnosed.difference or classify(problems, graph, adapter)
    return Finding(
        kind=difference.kind,
        ops=tuple(graph.ops()),
        check=difference.check,
        graph=graph.to_dict(),
        phase=phase,
        where=where,
        region=localized_region(graph, difference, adapter),
        graph_indices=tuple(indices),
        problems=problems,
        snippet=_snippet(graph, difference, adapter),
        excess=diagnosed.excess,
    )


def _snippet(graph: Graph, difference: Difference, adapter: EngineAdapter) -> str | None:
    """The finding's repro: the engine's own or its adapter's, or for a forward-mode finding of
    an adapter loaded by name its J·v beside the exact one (for a finding under a transform, its
    transforms' gradients beside its reverse mode's)."""
    if difference.check == FORWARD_MODE and adapter.spec is not None:
        return forward_mode_snippet(graph, adapter.spec)
    if difference.check == TRANSFORM and adapter.spec is not None:
        return transform_snippet(graph, adapter.spec)
    second_order = difference.check == "second-derivative"
    return adapter.snippet(with_allowances(graph, difference, adapter.reference), second_order=second_order)


# The kinds whose repro allows each entry its rounding bound: differences of numbers.
ROUNDING_KINDS = frozenset({Kind.WRONG_VALUE, Kind.WRONG_GRADIENT, Kind.WRONG_SECOND_DERIVATIVE})


def with_allowances(graph: Graph, difference: Difference, reference: str = "torch") -> Graph:
    """`graph` carrying what the harness allowed each entry (`repro_allowances`) for its repro's
    verdict, so the repro fails exactly where the check did; judged against the exact values
    (`reference`), the exact values too (`against_exact.exact_repro`), which its repro compares
    with instead of torch's; a difference the rounding has no part in (an exception, a non-number,
    a convention), or entries with no finite bound: as is."""
    if difference.kind not in ROUNDING_KINDS:
        return graph
    second_order = difference.check == "second-derivative"
    if reference == "exact":
        judged = exact_repro(graph, second_order)
        if judged is None:
            return graph
        return replace(graph, meta={**graph.meta, ALLOWED: judged["allowed"], EXACT: judged["exact"]})
    allowed = repro_allowances(graph, second_order=second_order)
    if allowed is None:
        return graph
    return replace(graph, meta={**graph.meta, ALLOWED: allowed})


def localized_region(graph: Graph, difference: Difference, adapter: EngineAdapter) -> str:
    """The region of a failing one-point graph, tiny magnitudes kept only where they matter: when
    the graph fails alike with its tiny inputs scaled up to ordinary ones, the rule is wrong at
    ordinary inputs too, and the finding is an ordinary one (a slope of 2 for relu is not a bug of
    tiny inputs, an exp-based tanh's lost digits are)."""
    region = region_of(graph)
    if region != TINY or graph.points is not None:
        return region
    scaled = _tiny_inputs_scaled_up(graph)
    if region_of(scaled) != ORDINARY:
        return region
    check = failing_check(scaled, adapter)
    if check is None or check.failure is None:
        return region
    alike = classify(check.problems, check.failure, adapter)
    return ORDINARY if (alike.kind, alike.check) == (difference.kind, difference.check) else region


def _tiny_inputs_scaled_up(graph: Graph) -> Graph:
    """`graph` with each nonzero input entry below tiny magnitude replaced by ±0.5 (its sign kept)."""

    def ordinary(value: Any) -> Any:
        v = np.asarray(value, dtype=np.float64)
        out = np.where(tiny(v), np.copysign(0.5, v), v)
        return out if out.ndim else float(out)

    inputs = [Input(i.name, ordinary(i.value), i.shape) for i in graph.inputs]
    return Graph(inputs, list(graph.nodes), list(graph.outputs), None, graph.cotangent, dict(graph.meta))


def finding_of_check(check: GraphCheck, adapter: EngineAdapter, **options: Any) -> Finding:
    """`finding_of` a failing GraphCheck's failing instance."""
    return finding_of(Diagnosed.of(check), adapter, **options)


def node_values(graph: Graph) -> list[Any]:
    """Every node's value (inputs first) of a one-point graph, by torch (floats or arrays)."""
    values = graph.input_values(0)
    every = Graph(
        [Input(i.name, v, i.shape) for i, v in zip(graph.inputs, values)],
        list(graph.nodes),
        list(range(graph.n_inputs + len(graph.nodes))),
        meta=dict(graph.meta),
    )
    if graph.is_tensor:
        shapes = graph_shapes(every)
        flat = torch_reference.forward_values(every, [np.asarray(v, dtype=np.float64)[None] for v in values])[
            :, 0
        ]
        out, start = [], 0
        for o in every.outputs:
            size = int(np.prod(shapes[o]))
            out.append(flat[start : start + size].reshape(shapes[o]))
            start += size
        return out
    forward = torch_reference.forward_values(every, [np.array([float(v)]) for v in values])
    return [float(v) for v in forward[:, 0]]


def one_op_graph(graph: Graph, index: int, values: Sequence[Any]) -> Graph:
    """Op node `index` of `graph` alone: its distinct arguments become inputs holding their values;
    its attributes and constant operands stay (`2.0 / x` stays a division of 2.0)."""
    node = graph.nodes[index]
    ids = list(dict.fromkeys(node.args))
    inputs = []
    for j, a in enumerate(ids):
        v = values[a]
        array = np.asarray(v, dtype=np.float64)
        inputs.append(Input(f"x{j}", array, array.shape) if array.ndim else Input(f"x{j}", float(v)))
    op = OpNode(node.op, tuple(ids.index(a) for a in node.args), node.attrs, node.consts)
    meta = {"kind": "tensor"} if graph.is_tensor else {}
    return Graph(inputs, [op], [len(inputs)], meta=meta)


@dataclass(frozen=True)
class NodesAlone:
    """What checking the op nodes of a failing graph alone found: the node blamed for the graph
    (None: none), every node seen failing alone with its failure (positions in `graph.nodes`, in
    the order tried; complete when none is blamed), and every node's value by torch (inputs
    first; None when torch cannot compute them: then nothing was checked)."""

    blamed: Diagnosed | None
    failing: tuple[tuple[int, Diagnosed], ...] = ()
    values: list[Any] | None = None


def nodes_alone(
    failing: Graph,
    adapter: EngineAdapter,
    seed: int = 0,
    prefer: Sequence[str] = (),
    cause: Difference | None = None,
) -> NodesAlone:
    """The op nodes of `failing` (one point) checked alone, until one is blamed for the graph.

    Every node counts, also one no output uses: the engine evaluates it all the same, so an
    exception there is that node's. With `cause` (the graph's own kind and check), only a node
    failing alone in the same way is blamed: an engine with two bugs does not get a graph that
    fails for one of them blamed on the other. When no node fails alone that way, a wrong
    number in a later check is blamed on a node with a wrong number in an earlier one (a wrong
    value makes the gradients that multiply by it wrong, a wrong gradient the second derivatives:
    a graph whose output multiplies the first wrong number by an input of 0 shows only the later),
    a graph raising on a node whose value alone is not a number (a complex value handed on),
    and a graph's apparent convention at a kink on a node whose gradient is wrong alone (at a tie
    inside a bigger graph the tied entries can move at unequal rates, where the sum test of
    `parity.classify.at_convention` accepts too much; the one-op check is the sharper judge).
    Nodes whose op is in `prefer` (the ops of findings already known) are tried first, so a graph
    failing for a known reason usually costs one one-op check. The nodes' failures come diagnosed
    when `cause` is given (each is classified to compare it with `cause`).
    """
    try:
        values = node_values(failing)
    except Exception:
        return NodesAlone(None)
    order = sorted(range(len(failing.nodes)), key=lambda i: failing.nodes[i].op not in prefer)
    seen: dict[str, Diagnosed | None] = {}
    found: list[tuple[int, Diagnosed]] = []
    explaining: Diagnosed | None = None
    for index in order:
        single = one_op_graph(failing, index, values)
        key = single.to_json(indent=None)
        if key in seen:  # the same op at the same values: the same verdict
            if seen[key] is not None:
                found.append((index, seen[key]))
            continue
        seen[key] = None
        try:
            check = check_graph(single, adapter, seed=seed)
        except Exception:
            continue
        if check.passed or check.points_checked == 0 or check.failure is None:
            continue
        if cause is None:
            return NodesAlone(Diagnosed.of(check), ((index, Diagnosed.of(check)),), values)
        alone = Diagnosed.of(check, classify(check.problems, check.failure, adapter))
        seen[key] = alone
        found.append((index, alone))
        if alone.difference == cause:
            return NodesAlone(alone, tuple(found), values)
        assert alone.difference is not None
        if explaining is None and _earlier_wrong_number_explains(alone.difference, cause):
            explaining = alone
    return NodesAlone(explaining, tuple(found), values)


def blame_nodes(
    failing: Graph,
    adapter: EngineAdapter,
    seed: int = 0,
    prefer: Sequence[str] = (),
    cause: Difference | None = None,
) -> Diagnosed | None:
    """The failure of the node `nodes_alone` blames for `failing`, or None."""
    return nodes_alone(failing, adapter, seed, prefer, cause).blamed


def _earlier_wrong_number_explains(alone: Difference, cause: Difference) -> bool:
    """Whether a node's wrong number (alone) accounts for a graph's wrong number in a later check,
    or for its gradient read as a convention; or a node's value that is not a number for the
    graph raising (the ops it feeds reject it: a relu comparing a complex number with 0)."""
    if cause == Difference(Kind.CONVENTION, "gradient"):
        return alone == Difference(Kind.WRONG_GRADIENT, "gradient")
    if cause.kind is Kind.EXCEPTION:
        return alone == Difference(Kind.WRONG_TYPE, "forward")
    return (
        alone.kind in _WRONG_NUMBERS
        and cause.kind in _WRONG_NUMBERS
        and CHECKS.index(alone.check) < CHECKS.index(cause.check)
    )


_WRONG_NUMBERS = (Kind.WRONG_VALUE, Kind.WRONG_GRADIENT, Kind.WRONG_SECOND_DERIVATIVE)
