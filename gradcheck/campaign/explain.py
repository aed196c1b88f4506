"""Which finding explains a failing graph: a finding shown to be its cause, never one whose ops the
graph merely contains.

A failing graph (its failing instance: one point, its difference classified once) is explained,
in this order:
1. by a known finding's culprits, when the graph passes with their nodes frozen: each replaced
   by an input holding torch's value for it, the graph as it would be were they right
   (`graphs.shrink.frozen`). The culprits of a shrunk finding are the variants of its graph that
   make it pass when frozen (`culprits`): an `abs` that overwrites its input's data is right
   alone and wrong for the input's other users. First, by a primitive's finding
   (`primitives.covered_ops`: a bug of an op the engine builds others from): when the graph
   passes with the nodes of the primitive and of every op built from it frozen, or still fails
   with every other op node frozen (a mul that forgets the upstream gradient fails `exp(x - y)`
   through its sub node, which alone is right);
2. by a node that fails alone the graph's way (`blame.nodes_alone`): that node's one-op finding;
   else by a known finding's culprits frozen together with the nodes failing alone;
3. by the nodes that fail alone in other ways, when the graph passes with them frozen: a wrong
   `2.0 - x` makes a `log` downstream raise; the finding of the first of them;
4. by the engine's `mul` or `add` that weights its outputs, when each output alone passes: the
   adapter sums several outputs weighted by their cotangents with the engine's own ops
   (`EngineAdapter.gradients`), and that sum, made a graph of its own (`weighting_graph`), has a
   node failing alone;
5. by the engine's graph code, when the structural phase found it wrong: a graph that reuses a
   node and passes as a tree (shared nodes counted wrong), or whose verdict changes from build
   to build (an order that follows object ids: `settling.verdict_changes_with_build`).
Nodes are frozen by op and variant (`variant`: which operands are constants, the kind of each
attribute), so a finding about `2.0 - x` explains a graph through its `2.0 - x` nodes only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.alike import first_passing, passing
from gradcheck.campaign.blame import Diagnosed, finding_of, node_values, nodes_alone
from gradcheck.campaign.findings import Finding, Merged
from gradcheck.campaign.grouping import example_rank, excess
from gradcheck.campaign.machinery import ACCUMULATION, EVERY_GRADIENT
from gradcheck.campaign.primitives import counting_built, covered_ops
from gradcheck.campaign.settling import (
    BUILD_ORDER_REBUILDS,
    reuses,
    verdict_changes_with_build,
    without_reuse,
)
from gradcheck.campaign.variants import variant_of
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.regions import ORDINARY, TINY, region_of
from gradcheck.graphs.shrink import frozen
from gradcheck.graphs.spellings import unspelled
from gradcheck.parity.classify import Difference
from gradcheck.parity.kinds import Kind


@dataclass(frozen=True)
class Explaining:
    """What failing graphs are explained against: the findings known, and whether only their
    culprits are tried (a later round, against findings shrunk since: the rest was tried)."""

    findings: tuple[Finding, ...]
    culprits_only: bool = False


@dataclass(frozen=True)
class Explained:
    """The finding that explains a failing graph, counted as its (None: none does), and the
    positions of the graph's nodes that fail alone (remembered for later rounds)."""

    finding: Finding | None
    alone: tuple[int, ...] = ()


def variant(node: OpNode) -> str:
    """An op node's op and the variant of it a rule can get wrong: which operands are constants
    (`2.0 - x` is not `x - 2.0`) and the kind of each attribute (several dims or one, a flag's
    value), not their exact values: "sub(c, x)", "sum[dims: several, keepdim: True]"."""
    head = node.op
    if node.consts:
        at = {c.at for c in node.consts}
        head += "(" + ", ".join("c" if i in at else "x" for i in range(node.arity)) + ")"
    attrs = ", ".join(f"{name}: {_attribute_kind(value)}" for name, value in node.attrs)
    return head + (f"[{attrs}]" if attrs else "")


def every_variant(op: str) -> str:
    """A culprit that names every variant of `op` (a finding of the op's backward itself, wrong
    whatever its operands: `mul(*)` covers `mul`, `mul(x, c)` and `mul(c, x)`)."""
    return f"{op}(*)"


def names_variant(culprits: Sequence[str], node_variant: str) -> bool:
    """Whether `culprits` name the variant `node_variant` (itself, or every variant of its op)."""
    op = node_variant.split("(", 1)[0].split("[", 1)[0]
    return node_variant in culprits or every_variant(op) in culprits


def _attribute_kind(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "several" if len(value) > 1 else "one"
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    return "a number"


def positions_of(graph: Graph, variants: Sequence[str]) -> list[int]:
    """The positions of `graph`'s op nodes of the given variants."""
    return [i for i, node in enumerate(graph.nodes) if variant(node) in variants]


def culprits(graph: Graph, adapter: EngineAdapter, dtype: str = "float64") -> tuple[str, ...]:
    """What failing one-point `graph` fails because of, as variants: its op for a graph of one
    variant; else each variant whose nodes, frozen, leave a graph that passes with every other op node in
    place (freezing a node downstream of the cause would cut the cause off too) and an output
    still computed by one (freezing the outputs would leave nothing to fail). Empty when torch
    cannot evaluate the graph node by node."""
    kinds = sorted({variant(node) for node in graph.nodes})
    if len(kinds) < 2:  # one op (`abs(x0)` and `abs(x0)` again): that op
        return tuple(kinds)
    try:
        values = node_values(graph)
    except Exception:
        return ()
    tried = []
    for kind in kinds:
        positions = positions_of(graph, [kind])
        candidate = frozen(graph, positions, values)
        if len(candidate.nodes) == len(graph.nodes) - len(positions) and _computes(candidate):
            tried.append((kind, candidate))
    verdicts = passing([candidate for _, candidate in tried], adapter, dtype)
    return tuple(kind for (kind, _), ok in zip(tried, verdicts) if ok)


def _computes(graph: Graph) -> bool:
    """Whether some output of `graph` is computed by an op node (not an input as it is)."""
    return any(o >= graph.n_inputs for o in graph.outputs)


def counted(finding: Finding, index: int) -> Finding:
    """`finding` as the finding of random graph `index`: one graph of the random phase (the counts
    and merge notes of the finding itself stay with it)."""
    return replace(finding, phase="random", graphs=1, graph_indices=(index,), merged=Merged())


def explain(
    failing: Graph,
    cause: Difference | None,
    known: Explaining,
    adapter: EngineAdapter,
    *,
    index: int,
    seed: int = 0,
    alone: Sequence[int] = (),
    dtype: str = "float64",
) -> Explained:
    """The finding that explains `failing` (the failing instance of random graph `index`, failing
    with difference `cause`), by the steps of the module docstring; `alone`: the positions of
    nodes found failing alone in an earlier round."""
    values, seen = None, None
    machinery = _by_machinery(failing, cause, known.findings, adapter, dtype)
    if machinery is not None:  # backward() itself is wrong the way this graph shows: nothing else to blame
        return Explained(counted(machinery, index))
    by_primitive = _finding_by_primitive(failing, cause, known.findings, adapter, dtype)
    if by_primitive is not None:
        ops = {node.op for node in failing.nodes}
        return Explained(counting_built(counted(by_primitive, index), ops, adapter.built_from))
    if not known.culprits_only:
        # a known culprit alone first: one check where the graph fails only because of it
        by_culprits = _finding_by_culprits(failing, known.findings, (), None, adapter, dtype)
        if by_culprits is not None:
            return Explained(counted(by_culprits, index))
        prefer = sorted({op for f in known.findings for op in f.ops})
        seen = nodes_alone(failing, adapter, seed=seed, prefer=prefer, cause=cause)
        if seen.blamed is not None:
            return Explained(_finding_of_node(seen.blamed, known.findings, adapter, index))
        alone, values = tuple(sorted(i for i, _ in seen.failing)), seen.values
    by_culprits = None
    if alone or known.culprits_only:  # with the nodes failing alone frozen too
        by_culprits = _finding_by_culprits(failing, known.findings, alone, values, adapter, dtype)
    if by_culprits is not None:
        return Explained(counted(by_culprits, index), tuple(alone))
    if seen is None:
        return Explained(None, tuple(alone))
    if seen.failing and values is not None and _passes_frozen(failing, alone, values, adapter, dtype):
        _, first = min(seen.failing, key=lambda found: found[0])
        return Explained(finding_of(first, adapter, indices=(index,)), alone)
    weighting = _by_weighting(failing, cause, values, adapter, seed, dtype)
    if weighting is not None:
        return Explained(finding_of(weighting, adapter, indices=(index,)), alone)
    code = _graph_code(failing, known.findings, adapter, dtype)
    return Explained(None if code is None else counted(code, index), tuple(alone))


def _finding_of_node(
    blamed: Diagnosed, findings: Sequence[Finding], adapter: EngineAdapter, index: int
) -> Finding:
    """The finding of a node failing alone: a known finding of its rule, counted, when there is
    one (a one-op finding of the op wrong at ordinary inputs, in the same variant, kind and check:
    they merge into one) and the node's failure would not be a better example than the best of
    them (a smaller graph, or as small and further outside its allowance); else a finding made of
    it (`blame.finding_of`: its repro with each entry's allowance, its region, its code), which
    costs more than its check did."""
    failure, difference = blamed.failure, blamed.difference
    if difference is None or region_of(failure) not in (ORDINARY, TINY):
        return finding_of(blamed, adapter, indices=(index,))
    ops, forms = (failure.nodes[0].op,), variant_of(failure)
    same = [
        f
        for f in findings
        if f.tier == tiers.BUG
        and f.region == ORDINARY
        and len(f.graph.get("nodes", ())) == 1
        and (f.ops, f.variant, Difference(f.kind, f.check)) == (ops, forms, difference)
    ]
    best = min(same, key=lambda f: example_rank(f.graph, excess(f)), default=None)
    mine = example_rank(failure.to_dict(), blamed.excess or 0.0)
    if best is None or mine < example_rank(best.graph, excess(best)):
        return finding_of(blamed, adapter, indices=(index,))
    return counted(best, index)


def _passes_frozen(
    graph: Graph, positions: Sequence[int], values: list[Any], adapter: EngineAdapter, dtype: str
) -> bool:
    return first_passing([frozen(graph, positions, values)], adapter, dtype) == 0


def _finding_by_culprits(
    failing: Graph,
    findings: Sequence[Finding],
    alone: Sequence[int],
    values: list[Any] | None,
    adapter: EngineAdapter,
    dtype: str,
) -> Finding | None:
    """The first finding whose culprits' nodes in `failing`, frozen with the nodes failing alone,
    make it pass."""
    tried, variants = [], None
    for f in findings:
        named = f.culprits
        if not named:
            continue
        # a finding of an op in its default spelling names the op's node in any spelling too
        variants = variants or [(variant(node), variant(unspelled(node))) for node in failing.nodes]
        positions = [i for i, vs in enumerate(variants) if any(names_variant(named, v) for v in vs)]
        if positions:
            tried.append((f, sorted({*positions, *alone})))
    if not tried:
        return None
    if values is None:
        try:
            values = node_values(failing)
        except Exception:
            return None
    candidates = [frozen(failing, positions, values) for _, positions in tried]
    hit = first_passing(candidates, adapter, dtype)
    return None if hit is None else tried[hit][0]


def _finding_by_primitive(
    failing: Graph, cause: Difference | None, findings: Sequence[Finding], adapter: EngineAdapter, dtype: str
) -> Finding | None:
    """The finding of a primitive (its plainest, for each) of the graph's kind of failure (`cause`),
    whose nodes and those of the ops built from it (`covered`), or those of them that are no
    output, make `failing` pass when frozen, leaving an output computed by an op node and pruning
    no node of another op with a finding at ordinary inputs (freezing a node downstream of another
    op's bug would cut that bug off); or that leave it failing with every other op node frozen (a
    covered output frozen would leave nothing to fail)."""
    built_from = adapter.built_from
    plainest: dict[str, Finding] = {}
    for f in findings:
        if cause is not None and cause.kind is not f.kind and cause.kind not in f.merged.kinds:
            continue
        if covered_ops(f, built_from) and (
            f.ops[0] not in plainest or len(f.variant or ()) < len(plainest[f.ops[0]].variant or ())
        ):
            plainest[f.ops[0]] = f
    wrong = {op for f in findings if f.region == ORDINARY and f.tier == tiers.BUG for op in f.ops}
    values = None
    for f in plainest.values():
        covered = covered_ops(f, built_from)
        inside = [i for i, node in enumerate(failing.nodes) if node.op in covered]
        if not inside:
            continue
        if values is None:
            try:
                values = node_values(failing)
            except Exception:
                return None
        others = wrong - covered
        whole = _passes_with(failing, inside, values, adapter, dtype, others)
        if whole:
            return f
        # those of them that are no output: a covered output's backward starts from out.grad = 1,
        # where a mul that forgets out.grad is right
        within = [i for i in inside if failing.n_inputs + i not in failing.outputs]
        if within and within != inside and _passes_with(failing, within, values, adapter, dtype, others):
            return f
        if whole is not None:
            continue
        outside = [i for i in range(len(failing.nodes)) if i not in inside]
        rest = frozen(failing, outside, values) if outside else failing
        kept = any(node.op in covered for node in rest.nodes) and _computes(rest)
        if kept and first_passing([rest], adapter, dtype) is None:
            return f
    return None


def _passes_with(
    failing: Graph,
    positions: Sequence[int],
    values: list[Any],
    adapter: EngineAdapter,
    dtype: str,
    kept: set[str],
) -> bool | None:
    """Whether `failing` passes with the nodes at `positions` frozen; None when that leaves no
    output computed by an op node, or prunes a node of one of the ops `kept`."""
    candidate = frozen(failing, positions, values)
    if not _computes(candidate) or _cut_off(failing, positions, candidate) & kept:
        return None
    return first_passing([candidate], adapter, dtype) == 0


def _cut_off(graph: Graph, positions: Sequence[int], candidate: Graph) -> set[str]:
    """The ops of the nodes of `graph` that freezing the nodes at `positions` (giving `candidate`)
    pruned besides them: those only the frozen nodes used."""
    left = Counter(node.op for i, node in enumerate(graph.nodes) if i not in positions)
    left.subtract(node.op for node in candidate.nodes)
    return {op for op, n in left.items() if n > 0}


def weighting_graph(graph: Graph, values: Sequence[Any]) -> Graph:
    """How the adapter weights the outputs of a several-output scalar graph, as a graph of its own:
    c0 * y0 + c1 * y1 + ..., each output y an input holding its value (`values`: every node's,
    by torch), each weight c its cotangent, differentiated as the lone output it is."""
    cotangent = graph.cotangent if graph.cotangent is not None else [1.0] * len(graph.outputs)
    inputs = [Input(f"x{i}", float(values[o])) for i, o in enumerate(graph.outputs)]
    nodes = [OpNode("mul", (i,), consts=(Constant(1, float(c)),)) for i, c in enumerate(cotangent)]
    n = len(inputs)
    for k in range(1, len(cotangent)):
        left = n if k == 1 else n + len(cotangent) + k - 2
        nodes.append(OpNode("add", (left, n + k)))
    return Graph(inputs, nodes, [n + len(nodes) - 1], None, [1.0])


def _by_weighting(
    failing: Graph,
    cause: Difference | None,
    values: list[Any] | None,
    adapter: EngineAdapter,
    seed: int,
    dtype: str,
) -> Diagnosed | None:
    """The failure of the engine's op weighting the outputs of `failing` (step 4 of the module
    docstring): only when there are several scalar outputs and each passes alone."""
    if len(failing.outputs) < 2 or failing.is_tensor or values is None:
        return None
    ops = {"mul", "add"}
    if not ops <= set(adapter.ops):
        return None
    alone = [
        Graph(list(failing.inputs), list(failing.nodes), [o], None, [1.0], dict(failing.meta))
        for o in failing.outputs
    ]
    if not all(passing(alone, adapter, dtype)):
        return None
    return nodes_alone(weighting_graph(failing, values), adapter, seed, cause=cause).blamed


def _by_machinery(
    failing: Graph, cause: Difference | None, findings: Sequence[Finding], adapter: EngineAdapter, dtype: str
) -> Finding | None:
    """The finding about backward() itself (`campaign.machinery`) that explains `failing`: a root
    seeded wrong explains every wrong gradient; an op's backward that assigns its gradients, or
    shared nodes counted wrong, explain a graph that reuses a node and passes as a tree
    (`settling.without_reuse`)."""
    for f in findings:
        if f.phase != "structure":
            continue
        if f.structural_cause in EVERY_GRADIENT and (
            cause is None or (cause.check != "forward" and cause.kind is not Kind.EXCEPTION)
        ):
            return f
        if f.structural_cause in (ACCUMULATION, "sharing") and reuses(failing):
            tree = without_reuse(failing)
            if tree is not None and first_passing([tree], adapter, dtype) == 0:
                return f
    return None


def build_order(findings: Sequence[Finding]) -> Finding | None:
    """The structural finding that gradients depend on the build, among `findings` (or None)."""
    return next((f for f in findings if f.phase == "structure" and f.kind is Kind.NONDETERMINISTIC), None)


def _graph_code(
    failing: Graph, findings: Sequence[Finding], adapter: EngineAdapter, dtype: str
) -> Finding | None:
    """The structural finding that explains `failing`: an order that depends on the build when
    the graph's verdict changes from build to build; shared nodes counted wrong when it reuses a node and its
    tree (`settling.without_reuse`) passes."""
    for f in findings:
        if f.phase != "structure":
            continue
        if f.kind is Kind.NONDETERMINISTIC:
            if verdict_changes_with_build(failing, adapter, BUILD_ORDER_REBUILDS, dtype):
                return f
        elif f.structural_cause == "sharing" and reuses(failing):
            tree = without_reuse(failing)
            if tree is not None and first_passing([tree], adapter, dtype) == 0:
                return f
    return None
