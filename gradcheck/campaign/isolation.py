"""The op-isolation pass: each op the campaign draws, checked alone before any random graph.

A bug in one op then has a one-op finding of its own, named directly, and every random graph
that fails for the same reason joins it. Per op: a few one-op graphs at random points (one per
attribute choice drawn) and each registry kink case (checked against torch's convention there,
without central differences, which are meaningless exactly at a kink). The one-op graphs at
random points are also the first evidence about each op's figures (`records.aggregate`).

The pass is a list of cases (`isolation_cases`), each checked on its own (`check_case`), so that
a campaign sends them as tasks to the workers that run engine code (`campaign.tasks.isolation`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gradcheck.campaign.blame import finding_of_check
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.mistake_match import is_probe, named_mistake, swapped_operands, upstream_probe
from gradcheck.campaign.records import GraphRecord, record_of
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.torch_off import torch_off_finding
from gradcheck.campaign.validation import campaign_forms, campaign_variants
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.value_class import NUMBER
from gradcheck.graphs.generate import Sizes, random_graph, with_constant
from gradcheck.graphs.ir import Constant, Graph, OpNode
from gradcheck.graphs.regions import ORDINARY
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.spellings import Forms, applicable, spelled, unspelled
from gradcheck.graphs.surface import graph_allowed
from gradcheck.parity.compare import check_graph, kink_graphs
from gradcheck.parity.kinds import Kind
from gradcheck.parity.result import GraphCheck

# One-op graphs per op and input points per graph: attributes vary between graphs, points within.
GRAPHS_PER_OP = 4
POINTS = 8
REDRAWS = 8  # further draws of a one-op graph when a draw holds no node
ALL_INPUTS = GRAPHS_PER_OP  # the number of the one-op graph whose operands are all inputs
ALL_INPUTS_REDRAWS = 64  # its draws until one has no number among its operands (most have one)
_ONE_OP = Sizes(inputs=(1, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)


# One-op graphs per primitive of other ops (`EngineAdapter.built_from`) with its result beside an
# input as the outputs (`IsolationCase.upstream`).
UPSTREAM_GRAPHS = GRAPHS_PER_OP


@dataclass(frozen=True)
class IsolationCase:
    """One case of the pass: one-op graph `number` of `op` at random points, or its kink case
    `number` (`kink`), checked against torch's convention there; `upstream`: the one-op graph with
    an input as a second output, so that the op's backward gets an upstream gradient other than 1
    (the outputs are weighted by their cotangents with the engine's own ops), for a primitive the
    engine builds other ops from: a mul that forgets `out.grad` fails there, not alone.
    `spelling`: a kink case in one of the adapter's spellings of the op (`graphs.spellings`).
    `number_at`: the op's first one-op graph with `NUMBER` as operand 0 or 1 (`2 - x`, `x - 2`),
    which the random draws may not give: a reflected method (`__rsub__`) has its check here."""

    op: str
    number: int
    kink: bool = False
    upstream: bool = False
    spelling: str | None = None
    number_at: int | None = None


@dataclass(frozen=True)
class CaseOutcome:
    """One case's findings, and for a one-op graph at random points that is evidence about its
    op's figures, its record (index 0 here: `gathered` numbers the pass's records)."""

    findings: list[Finding]
    record: GraphRecord | None = None


def isolation_cases(
    ops: Sequence[str], primitives: Collection[str] = (), forms: Forms | None = None
) -> list[IsolationCase]:
    """Every case of the pass for `ops`, in the order the pass checks them; `primitives`: the ops
    the engine builds others from, each also checked under an upstream gradient (`upstream`);
    `forms`: the adapter's spellings of the ops, each kink case also checked in each that fits."""
    cases = [IsolationCase(op, k) for op in ops for k in range(GRAPHS_PER_OP)]
    cases += [IsolationCase(op, k, True) for op in ops for k in range(len(REGISTRY[op].kink_cases))]
    for op in ops:
        for k, graph in enumerate(kink_graphs([op]) if forms and op in forms else ()):
            cases += [
                IsolationCase(op, k, True, spelling=f.name) for f in applicable(forms[op], graph.nodes[0])
            ]
    cases += [IsolationCase(op, ALL_INPUTS) for op in ops if _takes_numbers(op)]
    cases += [IsolationCase(op, 0, number_at=at) for op in ops if _takes_numbers(op) for at in (0, 1)]
    return cases + [
        IsolationCase(op, k, upstream=True) for op in ops if op in primitives for k in range(UPSTREAM_GRAPHS)
    ]


def _takes_numbers(op: str) -> bool:
    spec = REGISTRY[op]
    return spec.arity == 2 and spec.number_operands and spec.shape is None


def case_graph(
    case: IsolationCase,
    settings: Settings,
    ops: Sequence[str],
    variants: frozenset[str],
    forms: Forms | None = None,
) -> Graph | None:
    """The case's graph within the surface `variants` and spellings `forms` (None: it has none
    here, as a tensor kink case in a scalar campaign, or a kink case of a variant the campaign
    does not draw)."""
    if case.kink:
        graph = kink_graphs([case.op])[case.number]
        if (graph.is_tensor and not settings.tensor) or not graph_allowed(graph, variants):
            return None
        if case.spelling is not None:
            form = next((f for f in (forms or {}).get(case.op, ()) if f.name == case.spelling), None)
            if form is None:
                return None
            graph = replace(graph, nodes=[spelled(graph.nodes[0], form)])
        return graph
    graph = _one_op_graph(settings, list(ops).index(case.op), case.op, case.number, variants, forms)
    if not graph.nodes:
        return None
    if case.number_at is not None:
        return _with_number(graph, case.number_at, variants)
    if case.upstream:  # an input beside the result: the engine's weighting passes the cotangent on
        return replace(graph, outputs=[*graph.outputs, 0], cotangent=None)
    return graph


def check_case(
    case: IsolationCase,
    settings: Settings,
    ops: Sequence[str],
    adapter: EngineAdapter,
    variants: frozenset[str] | None = None,
    forms: Forms | None = None,
) -> CaseOutcome:
    """The findings of one case (none when it passes), and its record when it is evidence."""
    if variants is None:
        variants = campaign_variants(settings, adapter)
    if forms is None:
        forms = campaign_forms(settings, adapter)
    graph = case_graph(case, settings, ops, variants, forms)
    found: list[Finding] = []
    if graph is None:
        return CaseOutcome(found)
    if case.upstream:  # not the op's figures: its outputs are weighted by other ops
        _check(graph, adapter, seed=case.number, where="", found=found)
        return CaseOutcome(found)
    if not case.kink:
        check = _check(graph, adapter, seed=case.number, where="", found=found)
        if found:
            graph, check, found = _plainly_spelled(graph, adapter, case, check, found)
        found = _named(graph, adapter, case, check, found)
        # a failure at a pole or an edge says nothing about the op's accuracy (as in aggregate);
        # and the pass checks in float64: no evidence about an op computed in float32
        evidence = settings.dtype == "float64" and all(f.region in (ORDINARY, "") for f in found)
        return CaseOutcome(found, record_of(0, check) if check is not None and evidence else None)
    # a scalar kink names its place ("relu at 0"); a tensor's values name no cause (its region
    # does: "amax at a tie")
    tensor = any(isinstance(inp.value, np.ndarray) for inp in graph.inputs)
    where = "" if tensor else "at " + ", ".join(_short(inp.value) for inp in graph.inputs)
    _check(graph, adapter, seed=0, where=where, found=found, numeric=False, second_order=False)
    return CaseOutcome(found)


def gathered(outcomes: Sequence[CaseOutcome]) -> tuple[list[Finding], list[GraphRecord]]:
    """The cases' findings, and the records of their one-op graphs at random points, indexed from
    -1 down (they are no random graph of the campaign), but for those failing at a special
    region, and none in a float32 campaign (the pass checks in float64). The finding of an upstream
    probe, or of a graph with an input beside its result (both weighted by the engine's mul), on
    another op is dropped where mul has findings of its own: it is mul's."""
    findings = [f for outcome in outcomes for f in outcome.findings]
    if any(f.ops == ("mul",) and not _weighted_by_mul(f.graph) for f in findings):
        findings = [f for f in findings if not _weighted_by_mul(f.graph) or f.ops == ("mul",)]
    evidence = [outcome.record for outcome in outcomes if outcome.record is not None]
    return findings, [replace(record, index=-1 - k) for k, record in enumerate(evidence)]


def _weighted_by_mul(graph: dict[str, Any]) -> bool:
    """Whether a finding's one-op graph (as JSON) reaches its gradients through the engine's mul:
    an upstream probe's, or one whose outputs are several (the adapter weights them with the
    engine's mul and add: `EngineAdapter.gradients`)."""
    return is_probe(graph) or len(graph.get("outputs", ())) > 1


def _named(
    graph: Graph, adapter: EngineAdapter, case: IsolationCase, check: GraphCheck | None, found: list[Finding]
) -> list[Finding]:
    """`found` with the learner's mistake named (`mistake_match`): a one-op wrong gradient that
    matches one entry of its op's table, or a one-op wrong value that is the op of its operands
    swapped (`2 - x` computing `x - 2`); where the graph passed, the finding of an upstream
    probe that shows the op's backward leaving out out.grad (the pass's own graphs start it at 1)."""
    if check is None or graph.is_tensor:
        return found
    if len(found) == 1 and found[0].kind is Kind.WRONG_GRADIENT and found[0].ops == (case.op,):
        named = named_mistake(graph, adapter, seed=case.number)
        return [replace(found[0], mistake=named.sentence, mistake_rules=named.rules)] if named else found
    if len(found) == 1 and found[0].kind is Kind.WRONG_VALUE and found[0].ops == (case.op,):
        swapped = swapped_operands(graph, adapter)
        return [replace(found[0], mistake=swapped.sentence)] if swapped else found
    probed = upstream_probe(graph, adapter, seed=case.number) if check.passed and not found else None
    if probed is None:
        return found
    probe, named = probed
    probe_found: list[Finding] = []
    _check(probe, adapter, seed=case.number, where="", found=probe_found)
    return [
        replace(f, ops=(case.op,), mistake=named.sentence, mistake_rules=named.rules)
        for f in probe_found
        if f.kind is Kind.WRONG_GRADIENT
    ]


def _with_number(graph: Graph, at: int, variants: frozenset[str]) -> Graph | None:
    """A one-op graph's op on its first input and `NUMBER` as operand `at`, None where that is out
    of the op's domain at a point, or of the surface `variants`."""
    node = graph.nodes[0]
    number = Constant(at, NUMBER)
    with_number = Graph(
        [graph.inputs[0]],
        [OpNode(node.op, (0,), node.attrs, (number,))],
        [1],
        None if graph.points is None else [graph.points[0]],
        graph.cotangent,
        dict(graph.meta),
    )
    if not graph_allowed(with_number, variants):
        return None
    values = graph.points[0] if graph.points is not None else [graph.inputs[0].value]
    row = np.asarray(values, dtype=np.float64).reshape(1, -1)
    return with_number if with_constant(REGISTRY[node.op], row, number, node.attr) is not None else None


def _plainly_spelled(
    graph: Graph, adapter: EngineAdapter, case: IsolationCase, check: GraphCheck | None, found: list[Finding]
) -> tuple[Graph, GraphCheck | None, list[Finding]]:
    """A failing one-op graph of one of the adapter's spellings checked again in the op's default
    spelling: where that fails too, the failure is the op's, and its finding is titled so."""
    plain = replace(graph, nodes=[unspelled(n) for n in graph.nodes])
    if plain.nodes == graph.nodes:
        return graph, check, found
    again: list[Finding] = []
    plain_check = _check(plain, adapter, seed=case.number, where="", found=again)
    return (plain, plain_check, again) if again else (graph, check, found)


def _one_op_graph(
    settings: Settings, index: int, op: str, k: int, variants: frozenset[str], forms: Forms | None = None
) -> Graph:
    """One-op graph `k` of `op` within the surface `variants`, drawn again (up to REDRAWS times)
    when the draw found no operands the op takes (mse_loss needs two of one shape): an op whose
    adapter spelling fails must meet it here, before the random graphs, to be left out of them.
    Graph `ALL_INPUTS` (after the pass's own `GRAPHS_PER_OP`) is drawn again, too, while a scalar
    op has a number or one input twice among its operands: every operand's partial is checked
    (and a mistaken one named) on one graph at least, however the draws before it fell."""
    graph = first = Graph([], [], [0])
    # then, for an op whose domain is x > 0 (log, sqrt: an input of either sign is in it at all
    # POINTS points once in 256 draws), the same draws with the inputs' magnitudes
    redraws = ALL_INPUTS_REDRAWS if k == ALL_INPUTS else REDRAWS
    tries = [(attempt, positive) for positive in (False, True) for attempt in range(redraws + 1)]
    for attempt, positive in tries:
        seed = [settings.seed, 0x150, index, k] + ([attempt] if attempt else [])
        rng = np.random.default_rng(seed)
        graph = random_graph(
            rng,
            ops=[op],
            tensor=settings.tensor,
            points=POINTS,
            sizes=_ONE_OP,
            variants=variants,
            positive=positive,
            forms=forms,
        )
        if not graph.nodes:
            continue
        first = first if first.nodes else graph
        node = graph.nodes[0]
        if k != ALL_INPUTS or settings.tensor or (not node.consts and len(set(node.args)) == len(node.args)):
            return graph
    return first if first.nodes else graph


def _check(
    graph: Graph, adapter: EngineAdapter, seed: int, where: str, found: list[Finding], **options: bool
) -> GraphCheck | None:
    """The one-op graph's check (None when the engine cannot take the graph at all: no finding);
    a failure's finding is added to `found`."""
    try:
        check = check_graph(graph, adapter, seed=seed, **options)
    except Exception:  # the one-op graph is outside what the engine can take: not a finding
        return None
    if not check.passed and check.failure is not None:
        found.append(finding_of_check(check, adapter, phase="isolation", where=where))
    elif check.torch_off and check.torch_off_instance is not None:  # the engine is right, torch is not
        found.append(torch_off_finding(check.torch_off_instance, check.torch_off, "isolation", where))
    return check


def _short(value: object) -> str:
    """A kink case's argument for a finding's place: -0.0 and 0.0 are both "0" (one finding)."""
    number = float(value)  # type: ignore[arg-type]
    return f"{abs(number) if number == 0 else number:g}"
