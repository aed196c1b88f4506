"""The parity campaign: check N random graphs against torch and the numerical oracle, per op.

Graph `i` of a campaign is drawn from an RNG derived from `(seed, i)` alone, and results are
gathered by index, so the figures never depend on how the run was split across processes.
Failures are shrunk (in the pool too) and saved to the regression corpus by the caller.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

import numpy as np

# The four gradient figures every graph check yields, and the forward error; names as GraphCheck's.
GRAD_METRICS = ("max_abs_err_torch", "max_rel_err_torch", "max_abs_err_numeric", "max_rel_err_numeric")
METRICS = (*GRAD_METRICS, "max_forward_err")

# Error distributions are histograms over decades: bin k holds errors in [10**(k+LO), 10**(k+LO+1)).
HIST_LO, HIST_HI = -18, 2


class CampaignError(Exception):
    """Bad input to a campaign (unknown engine or op, an engine that raises): exit status 2."""


@dataclass(frozen=True)
class Settings:
    """Everything that determines a campaign's figures (jobs and chunking do not)."""

    engine: str = "minigrad"
    graphs: int = 1000
    seed: int = 0
    ops: tuple[str, ...] | None = None
    tensor: bool = False
    jobs: int = 1
    max_shrink: int = 10

    def describe(self) -> str:
        kind = "tensor" if self.tensor else "scalar"
        ops = ", ".join(self.ops) if self.ops else "all registry ops"
        return f"{self.graphs} random {kind} graphs, seed {self.seed}, engine {self.engine}, ops: {ops}"


@dataclass(frozen=True)
class Failure:
    """What a failing graph looks like, as found and after shrinking."""

    problems: tuple[str, ...]
    snippet: str
    graph: dict[str, Any]
    shrunk_snippet: str | None = None
    shrunk_graph: dict[str, Any] | None = None
    shrunk_ops: tuple[str, ...] | None = None
    corpus_file: str | None = None


@dataclass(frozen=True)
class GraphRecord:
    """One graph's outcome: which ops it used, whether it passed, and its error figures."""

    index: int
    ops: tuple[str, ...]
    passed: bool
    figures: dict[str, float | None]
    problems: tuple[str, ...] = ()
    failure: Failure | None = None


@dataclass
class OpStats:
    """Per-op aggregate: graphs that used the op, the largest error of those graphs, failures."""

    graphs: int = 0
    failures: int = 0
    maxima: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(METRICS))
    histograms: dict[str, list[int]] = field(default_factory=dict)
    failing_graphs: list[int] = field(default_factory=list)


@dataclass
class CampaignResult:
    settings: Settings
    records: list[GraphRecord]
    ops: dict[str, OpStats]
    seconds: float
    check_seconds: float

    @property
    def failures(self) -> list[GraphRecord]:
        return [r for r in self.records if not r.passed]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.records)


# --- per-graph seeding -------------------------------------------------------------------------


def graph_seed(seed: int, index: int) -> int:
    """A 64-bit seed for graph `index` of a campaign seeded `seed`: a pure function of the pair."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])


# --- aggregation -------------------------------------------------------------------------------


def _bigger(current: float | None, new: float | None) -> float | None:
    """The larger of two figures; nan beats every number (it marks a broken comparison)."""
    if new is None:
        return current
    if current is None or math.isnan(new):
        return new
    if math.isnan(current):
        return current
    return max(current, new)


def histogram_bin(value: float | None) -> int | None:
    """The bin of an error in a decade histogram: 0 holds exact zeros, -1 non-finite errors."""
    if value is None:
        return None
    if not math.isfinite(value):
        return -1
    if value == 0.0:
        return 0
    decade = math.floor(math.log10(value))
    return 1 + min(max(decade, HIST_LO), HIST_HI - 1) - HIST_LO


HIST_BINS = 1 + (HIST_HI - HIST_LO) + 1  # zeros, the decades, non-finite (the last, index -1)


def aggregate(records: Iterable[GraphRecord]) -> dict[str, OpStats]:
    """Per-op figures over graphs, in index order, ops sorted by name: independent of job split."""
    stats: dict[str, OpStats] = {}
    for record in sorted(records, key=lambda r: r.index):
        for op in record.ops:
            s = stats.setdefault(op, OpStats())
            s.graphs += 1
            if not record.passed:
                s.failures += 1
                s.failing_graphs.append(record.index)
            for metric in METRICS:
                value = record.figures.get(metric)
                s.maxima[metric] = _bigger(s.maxima[metric], value)
                b = histogram_bin(value)
                if b is not None:
                    s.histograms.setdefault(metric, [0] * HIST_BINS)[b] += 1
    return {op: stats[op] for op in sorted(stats)}


# --- running -----------------------------------------------------------------------------------

# A checker turns a graph index into its record; built once per process by a factory.
Checker = Callable[[int], GraphRecord]
Shrinker = Callable[[GraphRecord], GraphRecord]


@dataclass(frozen=True)
class Backend:
    """How a campaign checks and shrinks graphs; picklable (a module-level factory and settings)."""

    make_checker: Callable[[Settings], Checker]
    make_shrinker: Callable[[Settings], Shrinker]


_worker_state: dict[str, Any] = {}


def _worker_init(backend: Backend, settings: Settings) -> None:
    _limit_threads()
    _worker_state["checker"] = backend.make_checker(settings)
    _worker_state["shrinker"] = backend.make_shrinker(settings)


def _limit_threads() -> None:
    """One intra-op thread per worker: the pool already uses every core."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a test dependency
        return
    torch.set_num_threads(1)


def _check_chunk(indices: Sequence[int]) -> list[GraphRecord]:
    checker = _worker_state["checker"]
    return [checker(i) for i in indices]


def _shrink_one(record: GraphRecord) -> GraphRecord:
    return _worker_state["shrinker"](record)


def chunks(graphs: int, jobs: int) -> list[range]:
    """Index ranges small enough for a live progress bar and even load, large enough to be cheap."""
    size = max(1, min(100, graphs // max(1, jobs * 16)))
    return [range(start, min(start + size, graphs)) for start in range(0, graphs, size)]


Progress = Callable[[str, int, int], None]  # (phase, done, total)


def run_campaign(settings: Settings, backend: Backend, progress: Progress | None = None) -> CampaignResult:
    """Check `settings.graphs` graphs over `settings.jobs` processes; shrink the first failures."""
    report = progress or (lambda phase, done, total: None)
    start = time.perf_counter()
    parts = chunks(settings.graphs, settings.jobs)
    records: dict[int, GraphRecord] = {}
    with _pool(backend, settings) as run:
        done = 0
        report("check", 0, settings.graphs)
        for batch in run(_check_chunk, parts):
            for record in batch:
                records[record.index] = record
            done += len(batch)
            report("check", done, settings.graphs)
        check_seconds = time.perf_counter() - start
        failing = sorted(i for i, r in records.items() if not r.passed)[: settings.max_shrink]
        report("shrink", 0, len(failing))
        shrunk = 0
        for batch in run(_shrink_batch, [[records[i]] for i in failing]):
            for record in batch:
                records[record.index] = record
            shrunk += len(batch)
            report("shrink", shrunk, len(failing))
    ordered = [records[i] for i in sorted(records)]
    return CampaignResult(
        settings=settings,
        records=ordered,
        ops=aggregate(ordered),
        seconds=time.perf_counter() - start,
        check_seconds=check_seconds,
    )


def _shrink_batch(records: Sequence[GraphRecord]) -> list[GraphRecord]:
    return [_shrink_one(r) for r in records]


class _pool:
    """Run work items in this process (jobs == 1) or a spawned process pool, yielding as done."""

    def __init__(self, backend: Backend, settings: Settings) -> None:
        self.backend, self.settings = backend, settings
        self.executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> Callable[[Callable[[Any], list[GraphRecord]], Sequence[Any]], Iterator]:
        if self.settings.jobs <= 1:
            _worker_init(self.backend, self.settings)
            return self._serial
        self.executor = ProcessPoolExecutor(
            max_workers=self.settings.jobs,
            mp_context=get_context("spawn"),
            initializer=_worker_init,
            initargs=(self.backend, self.settings),
        )
        return self._parallel

    def __exit__(self, *exc: object) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
        _worker_state.clear()

    @staticmethod
    def _serial(func: Callable[[Any], list[GraphRecord]], items: Sequence[Any]) -> Iterator:
        for item in items:
            yield func(item)

    def _parallel(self, func: Callable[[Any], list[GraphRecord]], items: Sequence[Any]) -> Iterator:
        assert self.executor is not None
        pending: set[Future] = {self.executor.submit(func, item) for item in items}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


__all__ = [
    "GRAD_METRICS",
    "HIST_BINS",
    "METRICS",
    "Backend",
    "CampaignError",
    "CampaignResult",
    "Failure",
    "GraphRecord",
    "OpStats",
    "Settings",
    "aggregate",
    "chunks",
    "default_jobs",
    "graph_seed",
    "histogram_bin",
    "run_campaign",
]
