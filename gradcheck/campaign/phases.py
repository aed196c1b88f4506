"""A campaign, phase by phase, in the order the phases run (`run_campaign`).

1. structure: the engine's graph code apart from its ops, on its simplest ops (`structure`).
2. isolation: each op the campaign draws, alone: a bug in one op gets a one-op finding (`isolation`).
3. random graphs: `settings.graphs` graphs, graph i drawn from (seed, i) and checked three ways
   (`checking`), in this process, a process pool or on a Dask cluster (`pool`).
4. shrink and blame: the first `max_shrink` failing graphs shrunk to minimal ones, the others
   blamed on a node that fails alone (`checking`, `blame`); each failure is classified once there.
5. grouping: one finding per root cause (`findings.group_findings`), the isolation's and the
   structural phase's included; an unshrunk graph joins a known finding it contains.
6. settling: each finding re-checked on fresh builds, and folded into the structural finding
   about shared nodes that explains it (`settling`); per-op statistics from the settled findings.
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

from gradcheck.campaign.blame import assign_by_pattern
from gradcheck.campaign.corpus import Corpus, save_failures, save_findings
from gradcheck.campaign.edges import EdgeReport, findings_of
from gradcheck.campaign.findings import Finding, group_findings
from gradcheck.campaign.inspection import inspection_findings
from gradcheck.campaign.isolation import isolation_findings
from gradcheck.campaign.pool import (
    Backend,
    Pool,
    Run,
    blame_batch,
    blame_batches,
    check_chunk,
    chunks,
    shrink_batch,
)
from gradcheck.campaign.records import GraphRecord
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.settling import settle_findings, with_rates
from gradcheck.campaign.statistics import CampaignResult, aggregate
from gradcheck.campaign.structure import StructureReport, run_structure
from gradcheck.campaign.tiers import ADAPTER
from gradcheck.campaign.validation import campaign_ops, load_adapter
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.parity.edges import check_edges

# (phase, done, total); the phases' names, as it and `CampaignResult.timings` know them, in order:
# structure, isolate, check, shrink, blame, group, settle, edges, save.
Progress = Callable[[str, int, int], None]


def run_campaign(
    settings: Settings, backend: Backend, progress: Progress | None = None, corpus: Corpus | None = None
) -> CampaignResult:
    """Every phase in order (see the module docstring); the settings turn the structural phase,
    the isolation and the edge phase on or off, and a `corpus` saves the failures into it."""
    clock = _Clock(progress)
    structure, isolated = None, []
    adapter = load_adapter(settings.engine)
    inspected = inspection_findings(adapter, campaign_ops(settings, adapter))
    if settings.structure:
        with clock.step("structure"):
            structure = structure_phase(adapter)
    if settings.isolation:
        with clock.step("isolate"):
            isolated = isolation_phase(settings)
        settings = without_adapter_faults(settings, isolated)
    earlier = [*(structure.findings if structure is not None else ()), *isolated]
    clock.start("check")  # starting the workers counts as checking
    parts = chunks(settings.graphs, settings.jobs)
    with Pool(backend, settings, len(parts)) as run:
        records = random_graphs(settings, run, parts, clock.report)
        shrink_and_blame(settings, backend, run, records, earlier, clock)
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
        ops=aggregate(ordered, findings),
        seconds=clock.elapsed(),
        check_seconds=clock.timings["check"],
        findings=findings,
        isolation_seconds=clock.timings.get("isolate", 0.0),
        grouping_seconds=sum(clock.timings.get(p, 0.0) for p in ("shrink", "blame", "group", "settle")),
        structure=structure,
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


def isolation_phase(settings: Settings) -> list[Finding]:
    """Each op the campaign draws, alone at random points and at its kink cases (ungrouped)."""
    return isolation_findings(settings)


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


# --- 4. shrink and blame ------------------------------------------------------------------------


def shrink_and_blame(
    settings: Settings,
    backend: Backend,
    run: Run,
    records: dict[int, GraphRecord],
    known: Sequence[Finding],
    clock: _Clock,
) -> None:
    """The first `max_shrink` failing graphs (by index) shrunk, the others blamed, nodes with the
    ops of the shrunk ones' and the `known` findings tried first; `records` updated in place."""
    failing = sorted(i for i, r in records.items() if not r.passed)
    to_shrink, to_blame = failing[: settings.max_shrink], failing[settings.max_shrink :]
    clock.start("shrink")
    _through(run, shrink_batch, "shrink", [[records[i]] for i in to_shrink], records, clock.report)
    clock.start("blame")
    if backend.make_blamer is not None and to_blame:
        shrunk_ops = {op for i in to_shrink for op in _finding_ops(records[i])}
        prefer = tuple(sorted(shrunk_ops | {op for f in known for op in f.ops}))
        batches = [(prefer, [records[i] for i in part]) for part in blame_batches(to_blame, settings.jobs)]
        _through(run, blame_batch, "blame", batches, records, clock.report)


def _through(
    run: Run, task: Callable, phase: str, items: list, records: dict[int, GraphRecord], progress: Progress
) -> None:
    """Run `task` over `items` where `run` runs work, each record it returns replacing its own."""
    total = sum(len(item[1] if isinstance(item, tuple) else item) for item in items)
    progress(phase, 0, total)
    done = 0
    for batch in run(task, items):
        for record in batch:
            records[record.index] = record
        done += len(batch)
        progress(phase, done, total)


def _finding_ops(record: GraphRecord) -> tuple[str, ...]:
    """The ops of a shrunk record's finding (the blame phase tries these first)."""
    f = record.failure
    return f.finding.ops if f is not None and f.finding is not None else ()


# --- 5. grouping --------------------------------------------------------------------------------


def grouping(records: Sequence[GraphRecord], earlier: Sequence[Finding]) -> list[Finding]:
    """The earlier phases' findings and each failing graph's, merged into one per root cause."""
    return group_findings([*earlier, *assign_by_pattern(records)])


# --- 6. settling --------------------------------------------------------------------------------


def settling(settings: Settings, findings: Sequence[Finding]) -> list[Finding]:
    """The findings re-checked on fresh builds and folded into the structural finding about shared
    nodes that explains them (`gradcheck.campaign.settling`)."""
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
    findings = group_findings([*result.findings, *report.findings])
    report.new_findings = len(findings) - len(result.findings)
    report.seconds = time.perf_counter() - started
    return replace(result, findings=findings, edges=report)


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
