"""Running a campaign: graphs checked in chunks, in this process, a spawned process pool or on a
Dask cluster (`gradcheck.campaign.cluster`).

Graph `i` of a campaign is drawn from an RNG derived from `(seed, i)` alone, and results are
gathered by index, so the figures never depend on how the run was split across processes.
Failures are shrunk (in the pool too) and saved to the regression corpus by the caller.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from multiprocessing import get_context
from typing import Any

from gradcheck.campaign.blame import by_pattern
from gradcheck.campaign.cluster import DaskCluster
from gradcheck.campaign.findings import Finding, group_findings
from gradcheck.campaign.records import GraphRecord
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.statistics import CampaignResult, aggregate
from gradcheck.campaign.workers import worker_count
from gradcheck.parity.torch_reference import set_torch_threads

# A checker turns a graph index into its record; built once per process by a factory.
Checker = Callable[[int], GraphRecord]
Shrinker = Callable[[GraphRecord], GraphRecord]
Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class Backend:
    """How a campaign checks, shrinks and blames graphs; picklable (module-level factories).

    make_blamer: assigns failing graphs past `max_shrink` to findings cheaply (None: they stay
    unassigned). make_isolation: the op-isolation pass run before the graphs (None: no pass).
    make_structure: the structural phase, run first (a StructureReport with its findings).
    settle: the last step on the grouped findings (re-checked on rebuilds, folded into structural ones).
    """

    make_checker: Callable[[Settings], Checker]
    make_shrinker: Callable[[Settings], Shrinker]
    make_blamer: Callable[[Settings], Shrinker] | None = None
    make_isolation: Callable[[Settings], Callable[[], list[Finding]]] | None = None
    make_structure: Callable[[Settings], Callable[[], Any]] | None = None
    settle: Callable[[Settings, list[Finding]], list[Finding]] | None = None


_worker_state: dict[str, Any] = {}


def _worker_init(backend: Backend, settings: Settings, worker: bool = True) -> None:
    if worker:
        set_torch_threads(1)  # the pool already uses every core
    _worker_state["checker"] = backend.make_checker(settings)
    _worker_state["shrinker"] = backend.make_shrinker(settings)
    if backend.make_blamer is not None:
        _worker_state["blamer"] = backend.make_blamer(settings)


def _on_cluster_worker(backend: Backend, settings: Settings, func: Callable[[Any], Any], item: Any) -> Any:
    """A task on a Dask worker, which runs no initializer: set up its checker once per campaign."""
    if _worker_state.get("campaign") != (backend, settings):
        _worker_init(backend, settings)
        _worker_state["campaign"] = (backend, settings)
    return func(item)


def _check_chunk(indices: Sequence[int]) -> list[GraphRecord]:
    checker = _worker_state["checker"]
    return [checker(i) for i in indices]


def _shrink_batch(records: Sequence[GraphRecord]) -> list[GraphRecord]:
    shrinker = _worker_state["shrinker"]
    return [shrinker(r) for r in records]


def _blame_batch(item: tuple[tuple[str, ...], Sequence[GraphRecord]]) -> list[GraphRecord]:
    prefer, records = item
    blamer = _worker_state["blamer"]
    return [blamer(r, prefer) for r in records]


def chunks(graphs: int, jobs: int) -> list[range]:
    """Index ranges small enough for a live progress bar and even load, large enough to be cheap."""
    size = max(1, min(100, graphs // max(1, jobs * 16)))
    return [range(start, min(start + size, graphs)) for start in range(0, graphs, size)]


def run_campaign(settings: Settings, backend: Backend, progress: Progress | None = None) -> CampaignResult:
    """The structural phase and the op-isolation pass, then `settings.graphs` graphs over
    `settings.jobs` processes; the first `max_shrink` failures shrunk, the others blamed cheaply;
    findings grouped and settled (`Backend.settle`)."""
    report = progress or (lambda phase, done, total: None)
    start = time.perf_counter()
    structure = None
    if backend.make_structure is not None and settings.structure:
        report("structure", 0, 1)
        structure = backend.make_structure(settings)()
        report("structure", 1, 1)
    isolated: list[Finding] = list(structure.findings) if structure is not None else []
    isolation_start = time.perf_counter()
    if backend.make_isolation is not None and settings.isolation:
        report("isolate", 0, 1)
        isolated += backend.make_isolation(settings)()
        report("isolate", 1, 1)
    isolation_seconds = time.perf_counter() - isolation_start
    parts = chunks(settings.graphs, settings.jobs)
    records: dict[int, GraphRecord] = {}
    with _Pool(backend, settings, len(parts)) as run:
        done = 0
        report("check", 0, settings.graphs)
        for batch in run(_check_chunk, parts):
            for record in batch:
                records[record.index] = record
            done += len(batch)
            report("check", done, settings.graphs)
        check_seconds = time.perf_counter() - isolation_start - isolation_seconds
        failing = sorted(i for i, r in records.items() if not r.passed)
        to_shrink, to_blame = failing[: settings.max_shrink], failing[settings.max_shrink :]
        grouping_start = time.perf_counter()
        _run_phase(run, _shrink_batch, "shrink", [[records[i]] for i in to_shrink], records, report)
        if backend.make_blamer is not None and to_blame:
            known = sorted({op for i in to_shrink for op in _finding_ops(records[i])} | _ops_of(isolated))
            batches = [
                (tuple(known), [records[i] for i in part]) for part in _batches(to_blame, settings.jobs)
            ]
            _run_phase(run, _blame_batch, "blame", batches, records, report)
        shrink_seconds = time.perf_counter() - grouping_start
    ordered = [records[i] for i in sorted(records)]
    grouping_start = time.perf_counter()
    findings = group_findings(isolated + assign_by_pattern(ordered))
    if backend.settle is not None:
        findings = backend.settle(settings, findings)
    grouping_seconds = shrink_seconds + time.perf_counter() - grouping_start
    return CampaignResult(
        settings=settings,
        records=ordered,
        ops=aggregate(ordered, findings),
        seconds=time.perf_counter() - start,
        check_seconds=check_seconds,
        findings=findings,
        isolation_seconds=isolation_seconds,
        grouping_seconds=grouping_seconds,
        structure=structure,
    )


def _run_phase(
    run: Callable, func: Callable, phase: str, items: list, records: dict[int, GraphRecord], report: Progress
) -> None:
    total = sum(len(item[1] if isinstance(item, tuple) else item) for item in items)
    report(phase, 0, total)
    done = 0
    for batch in run(func, items):
        for record in batch:
            records[record.index] = record
        done += len(batch)
        report(phase, done, total)


def _finding_ops(record: GraphRecord) -> tuple[str, ...]:
    """The ops of a shrunk record's finding (the blame phase tries these first)."""
    f = record.failure
    return f.finding.ops if f is not None and f.finding is not None else ()


def _ops_of(findings: Sequence[Finding]) -> set[str]:
    return {op for f in findings for op in f.ops}


def _batches(indices: Sequence[int], jobs: int) -> list[list[int]]:
    size = max(1, min(20, len(indices) // max(1, jobs * 4)))
    return [list(indices[i : i + size]) for i in range(0, len(indices), size)]


def assign_by_pattern(records: Sequence[GraphRecord]) -> list[Finding]:
    """Each failing record's finding; an unshrunk one joins a known finding whose pattern it contains."""
    found = [r.failure.finding for r in records if not r.passed and r.failure and r.failure.finding]
    known = [f for f in found if not f.extra.get("unshrunk")]
    out = []
    for f in found:
        if f.extra.get("unshrunk"):
            match = by_pattern(f, known)
            if match is not None:
                f = replace(match, graphs=1, graph_indices=f.graph_indices)
        out.append(f)
    return out


class _Pool:
    """Run work items in this process (jobs == 1), a spawned process pool, or on a Dask cluster
    (`settings.scheduler`), yielding as done."""

    def __init__(self, backend: Backend, settings: Settings, items: int) -> None:
        self.backend, self.settings = backend, settings
        self.workers = worker_count(settings.jobs, items)
        self.executor: Executor | None = None
        self.cluster: DaskCluster | None = None
        self.threads: int | None = None

    def __enter__(self) -> Callable[[Callable[[Any], list[GraphRecord]], Sequence[Any]], Iterator]:
        if self.settings.scheduler is not None:
            self.cluster = DaskCluster(self.settings.scheduler)
            self.executor = self.cluster.executor
            return self._parallel
        if self.workers <= 1:
            _worker_init(self.backend, self.settings, worker=False)
            self.threads = set_torch_threads(1)  # tiny tensors: extra threads only cost CPU
            return self._serial
        self.executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=get_context("spawn"),
            initializer=_worker_init,
            initargs=(self.backend, self.settings),
        )
        return self._parallel

    def __exit__(self, *exc: object) -> None:
        if self.cluster is not None:
            self.cluster.close()
        elif self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
        if self.threads is not None:
            set_torch_threads(self.threads)
        _worker_state.clear()

    @staticmethod
    def _serial(func: Callable[[Any], list[GraphRecord]], items: Sequence[Any]) -> Iterator:
        for item in items:
            yield func(item)

    def _parallel(self, func: Callable[[Any], list[GraphRecord]], items: Sequence[Any]) -> Iterator:
        assert self.executor is not None
        if self.cluster is not None:
            submit = lambda item: self.executor.submit(
                _on_cluster_worker, self.backend, self.settings, func, item
            )
        else:
            submit = lambda item: self.executor.submit(func, item)
        pending: set[Future] = {submit(item) for item in items}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    yield future.result()
                except BrokenProcessPool as exc:
                    raise CampaignError(
                        f"a worker process died ({exc}); rerun with --jobs 1 to see the engine's error"
                    ) from exc
