"""A campaign, phase by phase, in the order the phases run (`run_campaign`).

1. structure: the engine's graph code apart from its ops, on its simplest ops (`structure`).
2. isolation: each op the campaign draws, alone: a bug in one op gets a one-op finding (`isolation`).
3. random graphs: `settings.graphs` graphs, graph i drawn from (seed, i) and checked three ways
   (`checking`), in this process, a process pool or on a Dask cluster (`pool`).
4. accounting: each failing graph explained by a finding (a node failing alone, nodes whose
   freezing makes it pass, the graph code: `explain`), or shrunk into a new one while the shrink
   budget lasts, or left among the unexplained graphs (`accounting`); each failure is classified
   once there.
5. grouping: one finding per root cause (`findings.group_findings`), the isolation's and the
   structural phase's included.
6. settling: each finding re-checked on fresh builds, and folded into the graph-code finding that
   explains it (`settling`); per-op statistics from the settled findings.
7. edges: each op at its edge values (`edges`), its findings joined to the campaign's.
8. save: the shrunk graphs and the findings no saved graph stands for, into a corpus (`corpus`).

`gradcheck run`, `gradcheck gate` and the pytest plugin (`gradcheck.suite`) run the phases from
here. Phases 1, 2 and 5-8 run in this process; 3 and 4 wherever `pool.Pool` runs work.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from gradcheck.campaign.accounting import account_for_failures
from gradcheck.campaign.corpus import Corpus, save_failures, save_findings
from gradcheck.campaign.edges import EdgeReport, findings_of
from gradcheck.campaign.findings import Finding, group_findings
from gradcheck.campaign.inspection import inspection_findings
from gradcheck.campaign.isolation import isolate
from gradcheck.campaign.pool import Backend, Pool, Run, check_chunk, chunks
from gradcheck.campaign.records import GraphRecord
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.settling import fold_into_build_order, settle_findings, with_rates
from gradcheck.campaign.statistics import CampaignResult, aggregate
from gradcheck.campaign.structure import StructureReport, run_structure
from gradcheck.campaign.tiers import ADAPTER
from gradcheck.campaign.validation import campaign_ops, load_adapter
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.parity.edges import check_edges

# (phase, done, total); the phases' names, as it and `CampaignResult.timings` know them, in order:
# structure, isolate, check, explain, shrink, group, settle, edges, save.
Progress = Callable[[str, int, int], None]


def run_campaign(
    settings: Settings, backend: Backend, progress: Progress | None = None, corpus: Corpus | None = None
) -> CampaignResult:
    """Every phase in order (see the module docstring); the settings turn the structural phase,
    the isolation and the edge phase on or off, and a `corpus` saves the failures into it."""
    clock = _Clock(progress)
    structure, isolated, one_op = None, [], []
    adapter = load_adapter(settings.engine)
    inspected = inspection_findings(adapter, campaign_ops(settings, adapter))
    if settings.structure:
        with clock.step("structure"):
            structure = structure_phase(adapter)
    if settings.isolation:
        with clock.step("isolate"):
            isolated, one_op = isolation_phase(settings)
        settings = without_adapter_faults(settings, isolated)
        one_op = [r for r in one_op if not set(r.ops) & set(settings.left_out)]  # no evidence now
    earlier = [*(structure.findings if structure is not None else ()), *isolated]
    clock.start("check")  # starting the workers counts as checking
    parts = chunks(settings.graphs, settings.jobs)
    with Pool(backend, settings, len(parts)) as run:
        records = random_graphs(settings, run, parts, clock.report)
        accounting_phase(settings, backend, run, records, earlier, clock)
    ordered = [records[i] for i in sorted(records)]
    with clock.step("group"):
        findings = grouping(ordered, earlier)
    with clock.step("settle"):
        findings = settling(settings, findings)
    if inspected:  # facts of the class, not of a graph the engine is re-run on: nothing to settle
        findings = group_findings([*inspected, *findings])
    result = CampaignResult(
        settings=settings,
        records=ordered,
        ops=aggregate(ordered, findings, one_op),
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
            result = with_edges(result)
    if corpus is not None:
        with clock.step("save"):
            result = save(result, corpus)
    return replace(result, timings=dict(clock.timings))


# --- 1. structure -------------------------------------------------------------------------------


def structure_phase(adapter: EngineAdapter, ops: Sequence[str] | None = None) -> StructureReport:
    """The engine's graph code checked apart from its ops (shared nodes, backward twice, resets,
    interior gradients, deep chains) on its simplest ops, or on those of `ops`."""
    return run_structure(adapter, ops)


# --- 2. isolation -------------------------------------------------------------------------------


def isolation_phase(settings: Settings) -> tuple[list[Finding], list[GraphRecord]]:
    """Each op the campaign draws, alone at random points and at its kink cases: the findings
    (ungrouped) and the one-op graphs' records (evidence for the per-op figures)."""
    return isolate(settings)


def without_adapter_faults(settings: Settings, isolated: Sequence[Finding]) -> Settings:
    """`settings` no longer drawing the ops whose adapter spelling failed alone (tier `adapter`):
    the fault is reported once, and the rest of the run checks what the engine can do."""
    faulty = sorted({op for f in isolated if f.tier == ADAPTER for op in f.ops})
    return replace(settings, left_out=tuple(faulty)) if faulty else settings


# --- 3. random graphs ---------------------------------------------------------------------------


def random_graphs(
    settings: Settings, run: Run, parts: Sequence[range], progress: Progress
) -> dict[int, GraphRecord]:
    """Graph i of the campaign, for every i, checked three ways: its record by index."""
    records: dict[int, GraphRecord] = {}
    progress("check", 0, settings.graphs)
    for batch in run(check_chunk, parts):
        for record in batch:
            records[record.index] = record
        progress("check", len(records), settings.graphs)
    return records


# --- 4. accounting -----------------------------------------------------------------------------


def accounting_phase(
    settings: Settings,
    backend: Backend,
    run: Run,
    records: dict[int, GraphRecord],
    known: Sequence[Finding],
    clock: _Clock,
) -> None:
    """Each failing graph explained by the `known` findings or those shrunk since, or left among
    the unexplained graphs (`gradcheck.campaign.accounting`); `records` updated in place."""
    account_for_failures(settings, backend, run, records, known, clock.start, clock.report)


# --- 5. grouping --------------------------------------------------------------------------------


def grouping(records: Sequence[GraphRecord], earlier: Sequence[Finding]) -> list[Finding]:
    """The earlier phases' findings and each explained graph's, merged into one per root cause."""
    found = [r.failure.finding for r in records if not r.passed and r.failure and r.failure.finding]
    return group_findings([*earlier, *found])


# --- 6. settling --------------------------------------------------------------------------------


def settling(settings: Settings, findings: Sequence[Finding]) -> list[Finding]:
    """The findings re-checked on fresh builds and folded into the graph-code finding that
    explains them (`gradcheck.campaign.settling`)."""
    return settle_findings(findings, load_adapter(settings.engine), settings.dtype)


# --- 7. edges -----------------------------------------------------------------------------------


def edge_phase(adapter: EngineAdapter, ops: Sequence[str], dtype: str = "float64") -> EdgeReport:
    """Each of `ops` at its edge values against torch: the differing cases and their findings,
    each re-checked on fresh builds (one that does not always fail is nondeterministic)."""
    problems = check_edges(adapter, ops)
    return EdgeReport(problems, with_rates(findings_of(problems, adapter), adapter, dtype))


def with_edges(result: CampaignResult) -> CampaignResult:
    """`result` with the edge phase over the ops it drew, its findings merged with the campaign's."""
    started = time.perf_counter()
    settings = result.settings
    adapter = load_adapter(settings.engine)
    report = edge_phase(adapter, campaign_ops(settings, adapter), settings.dtype)
    findings = fold_into_build_order(group_findings([*result.findings, *report.findings]))
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
