"""Settling: the other phases' findings, re-checked on fresh builds and folded into the structural
finding that explains them, before they are reported.

Two steps (`settle_findings`): each minimal graph is rebuilt and re-checked `REBUILDS` times, and
one that does not always fail is `nondeterministic` with its rate (`with_rates`); and a finding is
folded into the graph-code finding that explains it. Into a structural finding about shared nodes
when its graph reuses a node and the same computation with every reuse removed (`without_reuse`:
each use a fresh copy, down to the inputs) passes on every rebuild: then no op is wrong alone,
only the sharing is, which is what the structural finding names (`fold_into_sharing`; a graph
whose tree would be too large, a flaky failure shrinks badly, is folded when each of its op
nodes passes alone instead). Into the structural finding that gradients depend on the build when
it is nondeterministic itself (`fold_into_build_order`): an engine whose backward order follows
object ids gets that one finding, not one nondeterministic finding per op, nor other structural
findings whose checks pass on some builds, nor a random graph's finding whose verdict changes
over rebuilds that create its nodes in other orders (`verdict_changes_with_build`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.campaign.blame import node_values, one_op_graph
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.machinery import ACCUMULATION, EVERY_GRADIENT
from gradcheck.campaign.rebuilding import rebuilds, retaining
from gradcheck.campaign.structure import (
    EVERY_PATH,
    OBJECT_CHECKS,
    PATH_FINDINGS,
    PHASE_REBUILDS,
    REBUILDS,
    RECURSION_LIMIT,
    chain_graph,
    object_case,
    sharing_case,
    sharing_graphs,
    simplest_ops,
    tree_graph,
)
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.compare import check_graph, failing_check
from gradcheck.parity.edge_check import check_edge
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem

# Rebuilds of a failing graph that may show its verdict changing with the build before it counts as
# the build order's doing (`verdict_changes_with_build`). An engine whose backward follows object ids
# failed a graph of 60 nodes on every one of 16 plain rebuilds; half of these rebuilds create the
# nodes in another order, and 8 showed it on each of 7 such graphs.
BUILD_ORDER_REBUILDS = 8
MAX_TREE_NODES = 400  # `without_reuse` gives up on graphs whose tree would be larger
SHORT_CHAINS = (2, 3, 5, 10, 30, 100)  # the depths a deep chain's wrong gradient is rebuilt at


def _check_options(graph: Graph) -> dict[str, Any]:
    """How a finding's graph is re-checked, as `replay` checks it (a kink case against torch alone)."""
    return {"numeric": False, "second_order": False} if graph.meta.get("kink") else {}


def rebuild_failures(
    graph: Graph, adapter: EngineAdapter, runs: int = REBUILDS, dtype: str = "float64"
) -> int:
    """In how many of `runs` fresh builds (earlier ones kept alive) the engine fails `graph`."""
    twin, kept = retaining(adapter)
    if graph.meta.get("edge"):
        failures = sum(bool(check_edge(twin, graph, classified=False)) for _ in rebuilds(kept, runs))
    else:
        options = {**_check_options(graph), "dtype": dtype}
        failures = sum(failing_check(graph, twin, **options) is not None for _ in rebuilds(kept, runs))
    kept.clear()
    return failures


def verdict_changes_with_build(
    graph: Graph, adapter: EngineAdapter, runs: int, dtype: str = "float64"
) -> bool:
    """Whether the engine's verdict on one-point `graph` changes from build to build, over up to
    `runs` fresh builds (the earlier ones kept alive, so that ids and set orders change), every
    other one with the op nodes created in another order that computes the same: it passes on
    one of them, or its numbers differ beyond rounding between two (same function, same code,
    other results: `_beyond_rounding`). Stops at the first build that shows it."""
    twin, kept = retaining(adapter)
    rng = np.random.default_rng(len(graph.nodes))
    seen: set[tuple[Any, ...]] = set()
    try:
        for run in range(runs):
            kept.rebuild = run // 2  # each order of the nodes with ids rising, then falling
            check = failing_check(graph if run % 2 == 0 else reordered(graph, rng), twin, dtype=dtype)
            if check is None:
                return True
            seen.add(tuple(_beyond_rounding(p) for p in check.problems))
            if len(seen) > 1:
                return True
        return False
    finally:
        kept.clear()


def _beyond_rounding(problem: Problem) -> tuple[Any, ...]:
    """What a check found, without the figures derived from it (the error, its allowance and
    bound) and each number to 6 significant digits: two builds that sum in another order differ in
    the last bits, a backward that visits nodes out of order by far more."""
    raised = problem.raised
    return (
        problem.what,
        problem.check,
        problem.point,
        problem.output,
        problem.input,
        problem.index,
        _six_digits(problem.engine),
        _six_digits(problem.reference),
        _six_digits(problem.numeric),
        None if raised is None else (raised.type, raised.message),
        problem.answer,
        problem.shape,
        problem.counts,
        problem.case,
        problem.note,
    )


def _six_digits(value: Any) -> Any:
    """A number (or the numbers of a list) to 6 significant digits; anything else as it is."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return tuple(_six_digits(v) for v in value)
    return value


def reordered(graph: Graph, rng: np.random.Generator) -> Graph:
    """`graph` with its op nodes in another order the same values come out of (each after its
    arguments, chosen at random among those ready): the same function, built in another order."""
    n = graph.n_inputs
    placed: dict[int, int] = {i: i for i in range(n)}
    waiting = list(range(len(graph.nodes)))
    nodes: list[OpNode] = []
    while waiting:
        ready = [i for i in waiting if all(a in placed for a in graph.nodes[i].args)]
        pick = ready[int(rng.integers(len(ready)))]
        waiting.remove(pick)
        placed[n + pick] = n + len(nodes)
        node = graph.nodes[pick]
        nodes.append(node.with_args(tuple(placed[a] for a in node.args)))
    outputs = [placed[o] for o in graph.outputs]
    return Graph(list(graph.inputs), nodes, outputs, graph.points, graph.cotangent, dict(graph.meta))


def with_rates(findings: Sequence[Finding], adapter: EngineAdapter, dtype: str = "float64") -> list[Finding]:
    """Each finding's minimal graph rebuilt and re-checked `REBUILDS` times: one that does not always
    fail becomes `nondeterministic`, with its rate (the structural phase's are rated already, and
    a unit whose worker died is not run again)."""
    out = []
    for f in findings:
        if f.phase != "structure" and f.kind is not Kind.NONDETERMINISTIC and f.death is None:
            fails = rebuild_failures(Graph.from_dict(f.graph), adapter, dtype=dtype)
            if fails < REBUILDS:
                rate = f"fails {fails} of {REBUILDS} rebuilds"
                f = replace(f, kind=Kind.NONDETERMINISTIC, rate=rate, was=f.kind)
        out.append(f)
    return group_findings(out)


def reuses(graph: Graph) -> bool:
    """Whether some node or input is used more than once (as an argument or an output)."""
    uses = graph.use_counts()
    for o in graph.outputs:
        uses[o] += 1
    return any(n > 1 for n in uses)


def without_reuse(graph: Graph, max_nodes: int = MAX_TREE_NODES) -> Graph | None:
    """The same computation as a tree: every use of a node or input gets a fresh copy of it (the
    inputs' copies hold the same values); None when the tree would exceed `max_nodes` op nodes."""
    n = graph.n_inputs
    size = [0] * n
    for node in graph.nodes:
        size.append(1 + sum(size[a] for a in node.args))
    if sum(size[o] for o in graph.outputs) > max_nodes:
        return None
    inputs: list[Input] = []
    columns: list[int] = []  # for each copied input, the input it copies
    nodes: list[tuple[OpNode, list[Any]]] = []

    def copy_of(node_id: int) -> Any:
        if node_id < n:
            columns.append(node_id)
            original = graph.inputs[node_id]
            inputs.append(Input(f"{original.name}_{len(inputs)}", original.value, original.shape))
            return ("input", len(inputs) - 1)
        node = graph.nodes[node_id - n]
        args = [copy_of(a) for a in node.args]
        nodes.append((node, args))
        return ("node", len(nodes) - 1)

    roots = [copy_of(o) for o in graph.outputs]
    ids = lambda ref: ref[1] if ref[0] == "input" else len(inputs) + ref[1]
    tree_nodes = [node.with_args(tuple(ids(a) for a in args)) for node, args in nodes]
    points = None if graph.points is None else [graph.points[c] for c in columns]
    return Graph(inputs, tree_nodes, [ids(r) for r in roots], points, graph.cotangent, dict(graph.meta))


def explained_by_sharing(f: Finding, adapter: EngineAdapter, dtype: str = "float64") -> bool:
    """Whether finding `f`'s graph reuses a node and no op is wrong without the reuse: the graph as
    a tree (`without_reuse`) passes on every rebuild, or, when the tree would be too large, each
    op node passes alone at the values it saw (its repeated arguments made distinct inputs)."""
    graph = Graph.from_dict(f.graph)
    if not reuses(graph):
        return False
    tree = without_reuse(graph)
    if tree is not None:
        return passes(tree, adapter, REBUILDS, dtype)
    if graph.meta.get("edge") or graph.n_points != 1:
        return False
    try:
        values = node_values(graph)
    except Exception:
        return False
    singles = {}
    for index in range(len(graph.nodes)):
        single = one_op_graph(graph, index, values)
        singles[single.to_json(indent=None)] = single
    return all(passes(without_reuse(single) or single, adapter, 1, dtype) for single in singles.values())


def passes(graph: Graph, adapter: EngineAdapter, runs: int = REBUILDS, dtype: str = "float64") -> bool:
    """Whether the engine agrees on `graph` (at a checkable point) on each of `runs` fresh builds."""
    if graph.meta.get("edge"):
        return rebuild_failures(graph, adapter, runs, dtype) == 0
    twin, kept = retaining(adapter)
    try:
        options = _check_options(graph)
        checks = [check_graph(graph, twin, dtype=dtype, **options) for _ in rebuilds(kept, runs)]
    except Exception:
        return False
    finally:
        kept.clear()
    return all(c.passed and c.points_checked > 0 for c in checks)


def fold_into_sharing(
    findings: Sequence[Finding], adapter: EngineAdapter, dtype: str = "float64"
) -> list[Finding]:
    """The findings, with those a structural finding about shared nodes explains folded into it
    (`explained_by_sharing`): their cases count as its cases; the others are left as they are."""
    causes = ("sharing", ACCUMULATION)
    target = next((f for f in findings if f.phase == "structure" and f.structural_cause in causes), None)
    if target is None:
        return list(findings)
    # a unit whose worker died (`campaign.crashes`) is not run again: it would die again
    folded = [
        f
        for f in findings
        if f.phase != "structure" and f.death is None and explained_by_sharing(f, adapter, dtype)
    ]
    return _folded_into(target, folded, findings)


def fold_into_build_order(findings: Sequence[Finding], adapter: EngineAdapter | None = None) -> list[Finding]:
    """The findings, with those the structural finding that gradients depend on the build (an
    order that follows object ids or sets) explains folded into it: every other phase's
    nondeterministic finding (an op whose check fails on some rebuilds and passes on others
    computes right on some builds, so its rule is not what varies; the build order is), and, with
    the `adapter`, every other structural finding whose checks pass on some of `PHASE_REBUILDS`
    fresh builds (`depends_on_build`). Without that finding, unchanged."""
    target = next((f for f in findings if f.phase == "structure" and f.kind is Kind.NONDETERMINISTIC), None)
    if target is None:
        return list(findings)
    folded = [f for f in findings if f.phase != "structure" and f.kind is Kind.NONDETERMINISTIC]
    if adapter is not None:
        folded += [
            f for f in findings if f.phase == "structure" and f is not target and depends_on_build(f, adapter)
        ]
        folded += [  # a random graph that failed on every plain rebuild, its verdict seen changing
            f
            for f in findings
            if f.phase == "random"
            and f.kind is not Kind.NONDETERMINISTIC
            and verdict_changes_with_build(Graph.from_dict(f.graph), adapter, BUILD_ORDER_REBUILDS)
        ]
    return _folded_into(target, folded, findings)


def depends_on_build(finding: Finding, adapter: EngineAdapter) -> bool:
    """Whether a structural finding's checks, run again on `PHASE_REBUILDS` fresh builds, pass on
    some: then what it names varies with the build. A deep chain's wrong gradient is judged on
    shorter chains (`SHORT_CHAINS`: the 1000 deep one fails on every build where any two of its
    nodes are out of order); a recursion limit never depends on the build."""
    ops = simplest_ops(sorted(adapter.ops))
    if ops is None:
        return False
    base, combine = ops
    shared = sharing_graphs(base, combine)
    for name in finding.graph_code.checks if finding.graph_code is not None else ():
        if name in OBJECT_CHECKS:
            case = object_case(adapter, name, tree_graph(base, combine), runs=PHASE_REBUILDS)
            runs, failures = case.runs, case.failures
        elif name in shared:
            case = sharing_case(adapter, name, shared[name], runs=PHASE_REBUILDS)
            runs, failures = case.runs, case.failures
        elif name == "deep chains" and finding.where != RECURSION_LIMIT:
            chains = (
                rebuild_failures(chain_graph(combine, d), adapter, PHASE_REBUILDS) for d in SHORT_CHAINS
            )
            if any(0 < failures < PHASE_REBUILDS for failures in chains):
                return True
            continue
        else:
            continue
        if 0 < failures < runs:
            return True
    return False


def _folded_into(target: Finding, folded: Sequence[Finding], findings: Sequence[Finding]) -> list[Finding]:
    """`findings` with those of `folded` merged into `target`: their cases count as its cases,
    their titles are listed in its `merged.folded`."""
    if not folded:
        return list(findings)
    cases = dict(target.cases)
    for f in folded:
        for phase, count in f.cases.items():
            cases[phase] = cases.get(phase, 0) + count
    merged = replace(
        target,
        graphs=target.graphs + sum(f.graphs for f in folded),
        graph_indices=tuple(sorted({i for f in [target, *folded] for i in f.graph_indices})),
        merged=replace(
            target.merged, cases=cases, folded=(*target.merged.folded, *(f.title for f in folded))
        ),
    )
    rest = [f for f in findings if f is not target and not any(f is g for g in folded)]
    return group_findings([merged, *rest])


def settle_findings(
    findings: Sequence[Finding], adapter: EngineAdapter, dtype: str = "float64"
) -> list[Finding]:
    """The findings after the rebuild re-checks (`with_rates`) and the folding into the graph-code
    findings that explain them (`fold_into_sharing`, `fold_into_build_order`)."""
    rated = with_rates(fold_into_seed(fold_into_every_path(findings)), adapter, dtype)
    return fold_into_build_order(fold_into_sharing(rated, adapter, dtype), adapter)


def fold_into_seed(findings: Sequence[Finding]) -> list[Finding]:
    """The findings, with every other phase's finding about a gradient or second derivative folded
    into the structural finding that backward() seeds its root wrong (`machinery.SEED`), or runs
    nodes before their gradient is in (`machinery.ORDER`), when there is one: every gradient the
    engine gives is off by it, whatever the ops (an exception stays its op's). Without it, unchanged."""
    target = next(
        (f for f in findings if f.phase == "structure" and f.structural_cause in EVERY_GRADIENT), None
    )
    if target is None:
        return list(findings)
    # an exception is no number off: the op raises whatever backward() does around it
    folded = [
        f
        for f in findings
        if f.phase != "structure" and f.check != "forward" and f.kind is not Kind.EXCEPTION
    ]
    return _folded_into(target, folded, findings)


def fold_into_every_path(findings: Sequence[Finding]) -> list[Finding]:
    """The findings, with every timeout folded into the structural finding that the engine's
    backward follows every path (`structure.PATH_FINDINGS`), when there is one: a graph with many
    paths runs out of time whatever its ops, so no op is to blame; so are the graphs not run for
    their paths when that finding is the missing visited set's. Without it, unchanged."""
    target = next((f for f in findings if f.phase == "structure" and f.where in PATH_FINDINGS), None)
    if target is None:
        return list(findings)
    uncounted = [f for f in findings if f is not target and (f.kind is Kind.TIMEOUT or f.where == EVERY_PATH)]
    return _folded_into(target, uncounted, findings)
