"""Where a campaign's graphs are checked, shrunk and blamed: in this process, a spawned process
pool or on a Dask cluster (`gradcheck.campaign.cluster`), in chunks.

Graph `i` of a campaign is drawn from an RNG derived from `(seed, i)` alone, and results are
gathered by index, so the figures never depend on how the run was split across processes. The
order of the work is the campaign's (`gradcheck.campaign.phases`); here is only where it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from gradcheck.campaign.cluster import DaskCluster
from gradcheck.campaign.records import GraphRecord
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.workers import worker_count
from gradcheck.parity.torch_reference import set_torch_threads

# A checker turns a graph index into its record; built once per process by a factory.
Checker = Callable[[int], GraphRecord]
Shrinker = Callable[[GraphRecord], GraphRecord]
Blamer = Callable[[GraphRecord, Sequence[str]], GraphRecord]  # (record, ops to try first)
# A task (one of check_chunk, shrink_batch, blame_batch) over work items, results yielded as done.
Run = Callable[[Callable[[Any], list[GraphRecord]], Sequence[Any]], Iterator[list[GraphRecord]]]


@dataclass(frozen=True)
class Backend:
    """How a campaign checks, shrinks and blames graphs, in whichever process runs the work;
    picklable (module-level factories, called once per process).

    make_blamer: assigns failing graphs past `max_shrink` to findings cheaply (None: they stay
    unassigned).
    """

    make_checker: Callable[[Settings], Checker]
    make_shrinker: Callable[[Settings], Shrinker]
    make_blamer: Callable[[Settings], Blamer] | None = None


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


def check_chunk(indices: Sequence[int]) -> list[GraphRecord]:
    """The task of the random graphs: check graphs `indices`."""
    checker = _worker_state["checker"]
    return [checker(i) for i in indices]


def shrink_batch(records: Sequence[GraphRecord]) -> list[GraphRecord]:
    """The task of shrinking: each failing record shrunk to a small graph with its finding."""
    shrinker = _worker_state["shrinker"]
    return [shrinker(r) for r in records]


def blame_batch(item: tuple[tuple[str, ...], Sequence[GraphRecord]]) -> list[GraphRecord]:
    """The task of blaming: each failing record with its finding, the ops `item[0]` tried first."""
    prefer, records = item
    blamer = _worker_state["blamer"]
    return [blamer(r, prefer) for r in records]


def chunks(graphs: int, jobs: int) -> list[range]:
    """Index ranges small enough for a live progress bar and even load, large enough to be cheap."""
    size = max(1, min(100, graphs // max(1, jobs * 16)))
    return [range(start, min(start + size, graphs)) for start in range(0, graphs, size)]


def blame_batches(indices: Sequence[int], jobs: int) -> list[list[int]]:
    """Groups of failing graphs' indices to blame, a few per task."""
    size = max(1, min(20, len(indices) // max(1, jobs * 4)))
    return [list(indices[i : i + size]) for i in range(0, len(indices), size)]


class Pool:
    """Run work items in this process (jobs == 1), a spawned process pool, or on a Dask cluster
    (`settings.scheduler`), yielding as done."""

    def __init__(self, backend: Backend, settings: Settings, items: int) -> None:
        self.backend, self.settings = backend, settings
        self.workers = worker_count(settings.jobs, items)
        self.executor: Executor | None = None
        self.cluster: DaskCluster | None = None
        self.threads: int | None = None

    def __enter__(self) -> Run:
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
