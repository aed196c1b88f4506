"""A campaign, phase by phase, in the order the phases run (`run_campaign`).

1. structure: the engine's graph code apart from its ops, on its simplest ops (`structure`).
2. isolation: each op the campaign draws, alone: a bug in one op gets a one-op finding (`isolation`).
3. random graphs: `settings.graphs` graphs, graph i drawn from (seed, i) and checked three ways
   (`checking`), in this process, a process pool or on a Dask cluster (`pool`).
4. accounting: each failing graph explained by a finding (a node failing alone, nodes whose
   freezing makes it pass, the graph code: `explain`), or shrunk into a new one while the shrink
   budget lasts, or left among the unexplained graphs (`accounting`); each failure is classified
   once there.
5. grouping: one finding per root cause (`grouping.group_findings`), the isolation's and the
   structural phase's included.
6. settling: each finding re-checked on fresh builds, and folded into the graph-code finding that
   explains it (`settling`); per-op statistics from the settled findings. Judged against the exact
   values (every graph with `--reference exact`, a graph that failed against torch otherwise), the
   graphs the engine passed where torch is off become findings of their own, never the engine's
   failures (`torch_off`).
7. edges: each op at its edge values (`edges`), its findings joined to the campaign's.
8. save: the shrunk graphs and the findings no saved graph stands for, into a corpus (`corpus`).

`gradcheck run`, `gradcheck gate` and the pytest plugin (`gradcheck.suite`) run the phases from
here. Engine code runs as tasks (`tasks`) on a runner (`pool`: watched worker processes, this
process, or a Dask cluster for 3 and 4); the engine's facts, the findings of a value class's
inspection among them, come from it first (`tasks.describe`). Grouping, folding the edge phase's
findings in, the per-op figures and saving run here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import Any

from gradcheck.campaign import tasks
from gradcheck.campaign.accounting import account_for_failures
from gradcheck.campaign.checking import campaign_graph
from gradcheck.campaign.cluster import Cluster, ClusterLost
from gradcheck.campaign.crashes import dead_structure, death_finding, death_record
from gradcheck.campaign.edge_phase import EdgeReport, findings_of
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.isolation import (
    CaseOutcome,
    IsolationCase,
    case_graph,
    gathered,
    isolation_cases,
)
from gradcheck.campaign.mistake_breakdowns import fold_into_mistakes
from gradcheck.campaign.pool import (
    Backend,
    Campaign,
    Inline,
    Runner,
    check_chunk,
    chunks,
    ordered,
)
from gradcheck.campaign.primitives import fold_into_primitives
from gradcheck.campaign.records import CampaignResult, GraphRecord, aggregate
from gradcheck.campaign.regression_corpus import Corpus, save_failures, save_findings
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.settling import fold_into_build_order, fold_into_seed, with_rates
from gradcheck.campaign.structure import PATH_FINDINGS, StructureReport
from gradcheck.campaign.structure_findings import run_structure
from gradcheck.campaign.structure_reference import TORCH, Reference
from gradcheck.campaign.supervisor import DEFAULT_TIMEOUT, Death, Supervisor, Work, works_of
from gradcheck.campaign.tasks import EngineFacts
from gradcheck.campaign.tiers import ADAPTER, TORCH_OFF
from gradcheck.campaign.torch_off import torch_off_findings
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.spellings import Form
from gradcheck.parity.edge_check import check_edges, edge_cases, spelled_edge_cases
from gradcheck.parity.problem import Problem, What

# (phase, done, total); the phases' names, as it and `CampaignResult.timings` know them, in order:
# structure, isolate, check, explain, shrink, group, settle, edges, save.
Progress = Callable[[str, int, int], None]
# Isolation cases per task (each a few one-op checks).
ISOLATION_CHUNK = 8
# A graph of an engine whose backward follows every path is run when it has at most this many
# paths from its outputs to its inputs: counted work, not the phase's measured rate (which moves
# with the machine's load), so the same graphs are run on any machine. At the slowest rate
# measured (a Python engine's 2e-5 s a path on a loaded machine) that is well under a second at
# each of 16 points.
PATH_BUDGET = 4096


def run_campaign(
    settings: Settings,
    backend: Backend,
    progress: Progress | None = None,
    corpus: Corpus | None = None,
    runner: Runner | None = None,
    cluster: Cluster | None = None,
) -> CampaignResult:
    """Every phase in order (see the module docstring); the settings turn the structural phase,
    the isolation and the edge phase on or off, and a `corpus` saves the failures into it.
    `runner` runs the engine code (watched workers: `supervisor.Supervisor`); by default this
    process does, unwatched (`pool.Inline`), or `settings.jobs` watched workers when it is more
    than one. `cluster` (by default, with `settings.scheduler`, a connection made here and
    closed after) runs the random graphs, explaining and shrinking (`campaign.cluster`)."""
    with ExitStack() as stack:
        if runner is None:
            many = settings.jobs > 1 and settings.scheduler is None
            runner = stack.enter_context(Supervisor(settings.jobs) if many else Inline())
        if cluster is None and settings.scheduler is not None:
            timeout = getattr(runner, "timeout", DEFAULT_TIMEOUT)  # a Supervisor's, and its quarantine
            quarantine = getattr(runner, "quarantine", None)
            cluster = stack.enter_context(Cluster(settings.scheduler, timeout, quarantine))
        if cluster is not None:  # its threads are the jobs: graphs per task, failing graphs shrunk at once
            settings = replace(settings, jobs=cluster.jobs())
        return _phases(settings, backend, progress, corpus, runner, cluster or runner)


def _phases(
    settings: Settings,
    backend: Backend,
    progress: Progress | None,
    corpus: Corpus | None,
    runner: Runner,
    graphs_on: Runner,
) -> CampaignResult:
    clock = _Clock(progress)
    engine = Campaign(backend, settings)
    facts: EngineFacts = runner.call(tasks.describe, engine, None)
    ops = facts.checked()
    inspected = facts.inspected  # of every op asked for, those left out below included
    structure, isolated, one_op = None, [], []
    if settings.structure:
        with clock.step("structure"):
            structure = structure_of(runner, engine)
        settings = following_paths(settings, structure, getattr(runner, "timeout", None))
    if settings.isolation:
        with clock.step("isolate"):
            isolated, one_op = isolation_of(runner, engine, facts)
        settings = without_adapter_faults(settings, isolated)
    if settings != engine.settings:  # the workers' engine state and the ops follow the settings
        engine = Campaign(backend, settings)
        facts = runner.call(tasks.describe, engine, None)
        ops = facts.checked()
        one_op = [r for r in one_op if not set(r.ops) & set(settings.left_out)]  # no evidence now
    # where torch alone is off (judged against the exact values) the engine is right: nothing of
    # its to settle, joined after settling
    torch_off = [f for f in isolated if f.tier == TORCH_OFF]
    isolated = [f for f in isolated if f.tier != TORCH_OFF]
    earlier = [*(structure.findings if structure is not None else ()), *isolated]
    clock.start("check")  # starting the workers counts as checking
    records: dict[int, GraphRecord] = {}
    try:
        random_graphs(settings, graphs_on, engine, facts, clock.report, records)
        accounting_phase(graphs_on, engine, records, earlier, clock)
    except ClusterLost as lost:
        return _partial_result(settings, records, earlier, one_op, clock, str(lost))
    ordered_records = [records[i] for i in sorted(records)]
    with clock.step("group"):
        findings = grouping(ordered_records, earlier, facts.built_from)
    with clock.step("settle"):
        findings = settling(runner, engine, findings)
    off_records = [r for r in ordered_records if r.torch_off]  # judged against the exact values,
    # under either reference (against torch: the graphs that failed there only)
    if torch_off or off_records:
        with clock.step("torch-off"):
            findings = group_findings([*findings, *torch_off, *torch_off_findings(off_records)])
    if inspected:  # facts of the class, not of a graph the engine is re-run on: nothing to settle
        findings = group_findings([*inspected, *findings])
    result = CampaignResult(
        settings=settings,
        records=ordered_records,
        ops=aggregate(ordered_records, findings, one_op),
        seconds=clock.elapsed(),
        check_seconds=clock.timings["check"],
        findings=findings,
        isolation_seconds=clock.timings.get("isolate", 0.0),
        grouping_seconds=sum(clock.timings.get(p, 0.0) for p in ("explain", "shrink", "group", "settle")),
        structure=structure,
        isolated=one_op,
    )
    if settings.edges:
        with clock.step("edges"):
            result = with_edges(result, runner, engine, ops, facts.built_from, facts.forms)
    if corpus is not None:
        with clock.step("save"):
            result = save(result, corpus)
    return replace(result, timings=dict(clock.timings))


# --- 1. structure -------------------------------------------------------------------------------


def structure_phase(
    adapter: EngineAdapter, ops: Sequence[str] | None = None, reference: Reference = TORCH
) -> StructureReport:
    """The engine's graph code checked apart from its ops (shared nodes, backward twice, resets,
    interior gradients, deep chains) on its simplest ops, or on those of `ops`, judged by
    `reference`; in this process."""
    return run_structure(adapter, ops, reference)


def structure_of(runner: Runner, engine: Campaign) -> StructureReport:
    """The structural phase where `runner` runs engine code (lost with its worker: one finding)."""
    work = [Work((None,))]
    ((report,),) = (
        batch for _, batch in runner.map(tasks.structure, engine, work, lambda _, d: dead_structure(d))
    )
    return report


def following_paths(settings: Settings, structure: StructureReport, timeout: float | None) -> Settings:
    """`settings` for an engine whose backward follows every path (the structural phase's
    `PATH_FINDINGS`): its gradients judged by the rounding of a sum over paths
    (`parity.any_order`), and, with a graph `timeout`, no graph run that has more paths than
    `PATH_BUDGET` (each is counted in the finding instead)."""
    if not any(c.seconds_per_path for c in structure.cases):
        return settings
    max_paths = None
    if timeout is not None:
        max_paths = PATH_BUDGET
        for f in structure.findings:
            if f.where in PATH_FINDINGS:
                note = f"graphs of more than {PATH_BUDGET} paths are not run: each is counted here"
                problem = Problem(What.STRUCTURAL, case="a ladder of shared nodes", note=note)
                structure.findings[structure.findings.index(f)] = replace(f, problems=(*f.problems, problem))
    return replace(settings, accumulation="paths", max_paths=max_paths)


# --- 2. isolation -------------------------------------------------------------------------------


def isolation_of(
    runner: Runner, engine: Campaign, facts: EngineFacts
) -> tuple[list[Finding], list[GraphRecord]]:
    """The isolation pass where `runner` runs engine code, a few cases per task (a case whose
    worker died: its death's finding, and no evidence)."""
    settings, ops = engine.settings, facts.ops

    def lost(case: IsolationCase, death: Death) -> CaseOutcome:
        graph = case_graph(case, settings, ops, facts.variants, facts.forms)
        return CaseOutcome([death_finding(death, graph, "isolation")])

    primitives = {p for parts in facts.built_from.values() for p in parts}
    works = works_of(isolation_cases(ops, primitives, facts.forms), ISOLATION_CHUNK)
    return gathered(ordered(runner.map(tasks.isolation, engine, works, lost)))


def without_adapter_faults(settings: Settings, isolated: Sequence[Finding]) -> Settings:
    """`settings` no longer drawing the ops whose adapter spelling failed alone (tier `adapter`):
    the fault is reported once, and the rest of the run checks what the engine can do."""
    faulty = sorted({op for f in isolated if f.tier == ADAPTER for op in f.ops})
    return replace(settings, left_out=tuple(faulty)) if faulty else settings


# --- 3. random graphs ---------------------------------------------------------------------------


def random_graphs(
    settings: Settings,
    runner: Runner,
    engine: Campaign,
    facts: EngineFacts,
    progress: Progress,
    records: dict[int, GraphRecord] | None = None,
) -> dict[int, GraphRecord]:
    """Graph i of the campaign, for every i, checked three ways: its record by index (a graph
    whose worker died: its death's finding), into `records` as each comes back."""

    def lost(index: int, death: Death) -> GraphRecord:
        graph = campaign_graph(settings, facts.ops, facts.max_depth, index, facts.variants, facts.forms)
        return death_record(index, graph, death)

    records = {} if records is None else records
    progress("check", 0, settings.graphs)
    works = [Work(tuple(part), None, part.start) for part in chunks(settings.graphs, settings.jobs)]
    for _, batch in runner.map(check_chunk, engine, works, lost):
        for record in batch:
            records[record.index] = record
        progress("check", len(records), settings.graphs)
    return records


# --- 4. accounting -----------------------------------------------------------------------------


def accounting_phase(
    runner: Runner,
    engine: Campaign,
    records: dict[int, GraphRecord],
    known: Sequence[Finding],
    clock: _Clock,
) -> None:
    """Each failing graph explained by the `known` findings or those shrunk since, or left among
    the unexplained graphs (`gradcheck.campaign.accounting`), explaining and shrinking where
    `runner` runs engine code; `records` updated in place. Graphs whose worker died have their
    finding already."""
    account_for_failures(runner, engine, records, known, clock.start, clock.report)


def _partial_result(
    settings: Settings,
    records: dict[int, GraphRecord],
    earlier: Sequence[Finding],
    one_op: list[GraphRecord],
    clock: _Clock,
    reason: str,
) -> CampaignResult:
    """The campaign cut short by its cluster's loss (`cluster.ClusterLost`): the graphs checked so
    far and the findings they and the earlier phases gave, unsettled, marked incomplete."""
    clock.stop()
    ordered_records = [records[i] for i in sorted(records)]
    findings = grouping(ordered_records, earlier)
    return CampaignResult(
        settings=settings,
        records=ordered_records,
        ops=aggregate(ordered_records, findings, one_op),
        seconds=clock.elapsed(),
        check_seconds=clock.timings.get("check", 0.0),
        findings=findings,
        timings=dict(clock.timings),
        isolated=one_op,
        incomplete=f"{reason}, after {len(records)} of {settings.graphs} graphs",
    )


# --- 5. grouping --------------------------------------------------------------------------------


def grouping(
    records: Sequence[GraphRecord],
    earlier: Sequence[Finding],
    built_from: Mapping[str, frozenset[str]] | None = None,
) -> list[Finding]:
    """The earlier phases' findings and each explained graph's, merged into one per root cause,
    the breakdowns a named mistake causes folded into its finding (`mistake_breakdowns`), and
    those of ops the engine builds from a primitive folded into the primitive's
    (`primitives.fold_into_primitives`, `built_from`: the engine's facts)."""
    found = [r.failure.finding for r in records if not r.passed and r.failure and r.failure.finding]
    grouped = fold_into_mistakes(group_findings([*earlier, *found]))
    return group_findings(fold_into_primitives(grouped, built_from)) if built_from else grouped


# --- 6. settling --------------------------------------------------------------------------------


def settling(runner: Runner, engine: Campaign, findings: Sequence[Finding]) -> list[Finding]:
    """The findings re-checked on fresh builds and folded into the graph-code finding that
    explains them (`gradcheck.campaign.settling`); lost with its worker, they stay as they were,
    with the death's finding beside them."""

    def lost(_: Any, death: Death) -> list[Finding]:
        return group_findings([*findings, death_finding(death, None, "random", where="settling")])

    work = [Work((list(findings),))]
    ((settled,),) = (batch for _, batch in runner.map(tasks.settle, engine, work, lost))
    return settled


# --- 7. edges -----------------------------------------------------------------------------------


def edge_phase(
    adapter: EngineAdapter, ops: Sequence[str], dtype: str = "float64", reference: str = "torch"
) -> EdgeReport:
    """Each of `ops` at its edge values against torch (or the exact answer: `reference`): the
    differing cases and their findings, each re-checked on fresh builds (one that does not always
    fail is nondeterministic); in this process."""
    problems = check_edges(adapter, ops, reference)
    return EdgeReport(problems, with_rates(findings_of(problems, adapter), adapter, dtype))


class _Lost:
    """An edge case whose worker died: its death's finding, apart from the cases' problems."""

    def __init__(self, finding: Finding) -> None:
        self.finding = finding


def with_edges(
    result: CampaignResult,
    runner: Runner,
    engine: Campaign,
    ops: Sequence[str],
    built_from: Mapping[str, frozenset[str]] | None = None,
    forms: Mapping[str, Sequence[Form]] | None = None,
) -> CampaignResult:
    """`result` with the edge phase over the ops it drew, in each of the adapter's spellings
    `forms` too, its findings merged with the campaign's (those of ops built from a primitive
    folded into the primitive's: `built_from`)."""
    started = time.perf_counter()
    s = result.settings
    graphs = edge_cases(ops, s.tensor, s.reference)
    graphs += spelled_edge_cases([f for fs in (forms or {}).values() for f in fs], ops, s.tensor, s.reference)

    def lost(graph: Graph, death: Death) -> _Lost:
        return _Lost(death_finding(death, graph, "edges"))

    outcomes = ordered(runner.map(tasks.edge_cases, engine, works_of(graphs, 16), lost))
    problems = [p for o in outcomes if not isinstance(o, _Lost) for p in o]
    dead = [o.finding for o in outcomes if isinstance(o, _Lost)]

    def unsettled(_: Any, death: Death) -> EdgeReport:
        return EdgeReport(problems, [death_finding(death, None, "edges", where="settling")])

    ((report,),) = (b for _, b in runner.map(tasks.edge_findings, engine, [Work((problems,))], unsettled))
    report.findings = group_findings([*report.findings, *dead])
    merged = fold_into_mistakes(fold_into_seed(group_findings([*result.findings, *report.findings])))
    if built_from:
        merged = group_findings(fold_into_primitives(merged, built_from))
    findings = fold_into_build_order(merged)
    report.new_findings = len(findings) - len(result.findings)
    report.seconds = time.perf_counter() - started
    ops = aggregate(result.records, findings, result.isolated)  # an edge finding may be an op's own
    return replace(result, findings=findings, edges=report, ops=ops)


# --- 8. save ------------------------------------------------------------------------------------


def save(result: CampaignResult, corpus: Corpus) -> CampaignResult:
    """Each shrunk failing graph saved into `corpus` (noted on its record), then each finding no
    saved graph stands for (not the edge phase's or the structural phase's)."""
    saved = save_failures(result, corpus)
    save_findings(saved, corpus)
    return saved


class _Clock:
    """Each phase's seconds (`start` ends the running phase) and the progress callback."""

    def __init__(self, progress: Progress | None) -> None:
        self.report: Progress = progress or (lambda phase, done, total: None)
        self.timings: dict[str, float] = {}
        self.begun = time.perf_counter()
        self.running: tuple[str, float] | None = None

    def start(self, phase: str) -> None:
        self.stop()
        self.running = (phase, time.perf_counter())

    def stop(self) -> None:
        if self.running is not None:
            phase, started = self.running
            self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - started
            self.running = None

    @contextmanager
    def step(self, phase: str) -> Iterator[None]:
        """The body as one step of `phase`: timed, its progress 0 of 1, then 1 of 1 (a context, not
        a call, so that the phases run as deep in the stack as they always have)."""
        self.start(phase)
        self.report(phase, 0, 1)
        yield
        self.report(phase, 1, 1)
        self.stop()

    def elapsed(self) -> float:
        return time.perf_counter() - self.begun
