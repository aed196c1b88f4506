"""Campaigns on a Dask cluster: `gradcheck run --scheduler ADDRESS` sends the random graphs, and
explaining and shrinking the failing ones, to the workers of a Dask cluster (`Cluster`, a runner
like `pool.Inline` and `supervisor.Supervisor`); the other phases stay on the command's machine.

Each task is supervised on its Dask worker exactly as `--jobs` supervises locally: the worker
runs it on a `Supervisor` of its own (one watched child process per worker thread, kept from
task to task), with the campaign's graph timeout and the ops quarantined so far. An engine that
exits, crashes or hangs ends the child, never the Dask worker: the unit's death comes back to
this process, which makes it the same finding as locally (`on_death`) and quarantines its op
for the tasks sent after, on the cluster and on this machine alike (one `Quarantine`). So Dask's
own retries of a task whose worker died are left to the cluster's faults (a machine lost).

The cluster is left as it was found: tasks are sent a few per worker thread at a time (each
carrying the quarantine as it is then), and whenever the campaign ends (finished, a signal, a
fault) its tasks are cancelled; a task still running learns it from its worker within half a
second, kills its child and returns. The scheduler going away mid-run is `ClusterLost`: the
campaign ends with the graphs checked so far, its report marked incomplete (exit status 2).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from gradcheck.campaign.settings import CampaignError
from gradcheck.campaign.supervisor import DEFAULT_TIMEOUT, Death, OnDeath, Quarantine, Supervisor, Work
from gradcheck.engines.loading import missing_module

CONNECT_TIMEOUT = "20s"  # to reach the scheduler, and for its first worker to join
TASKS_PER_THREAD = 2  # sent ahead: one running and one waiting on each worker thread
RELEASE_WAIT = 10.0  # seconds `close` waits for cancelled tasks to leave the workers
_LOOK = 0.5  # seconds between looks at the tasks' progress and at the scheduler


class ClusterLost(CampaignError):
    """The scheduler went away mid-run: the campaign stops where it is (exit status 2)."""


@dataclass(frozen=True)
class Lost:
    """A unit that died on a cluster worker: its death, for this process's `on_death`."""

    death: Death


@dataclass(frozen=True)
class Supervised:
    """A task's answer from its Dask worker: `(first, results)` batches as `Supervisor.map`
    yields them (dead units `Lost`), and the deaths its quarantine took in."""

    batches: list[tuple[int, list[Any]]]
    noted: list[Death]


class Cluster:
    """A connection to a running Dask scheduler; `map` runs a campaign's tasks on its workers,
    each supervised there with `timeout` (see the module docstring), quarantining into
    `quarantine` (the one this machine's workers use, so that an op that ended a worker here
    is not run there)."""

    def __init__(
        self, address: str, timeout: float | None = DEFAULT_TIMEOUT, quarantine: Quarantine | None = None
    ) -> None:
        try:
            from distributed import Client
        except ImportError as exc:
            raise CampaignError(
                "--scheduler needs the `distributed` package: pip install 'minigrad[cluster]'"
            ) from exc
        self.address, self.timeout = address, timeout
        self.quarantine = quarantine if quarantine is not None else Quarantine()
        self.sent: set[Any] = set()  # the futures of tasks sent and not yet answered
        self.checked: set[str] = set()  # engine specs every worker was found to have
        self.run = secrets.token_hex(3)  # in the tasks' keys: the dashboard tells campaigns apart
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise CampaignError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except TimeoutError:
            self.client.close()
            raise CampaignError(f"the Dask scheduler at {address!r} has no workers") from None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def threads(self) -> dict[str, int]:
        """Each worker's address and threads (how many tasks it runs at once)."""
        return dict(self.client.nthreads())

    def jobs(self) -> int:
        """How many tasks the cluster runs at once: its workers' threads."""
        return max(1, sum(self.threads().values()))

    def describe(self) -> str:
        """The cluster for the header and the progress bars: "ADDRESS (2 workers, 2 threads)"."""
        threads = self.threads()
        workers, total = len(threads), sum(threads.values())
        return f"{self.address} ({workers} worker{'s' * (workers != 1)}, {total} thread{'s' * (total != 1)})"

    def check_engine(self, spec: str) -> None:
        """CampaignError (exit status 2) naming the module and the worker when a worker cannot
        find engine `spec`'s module, or cannot run gradcheck at all; before any work is sent."""
        if spec in self.checked:
            return
        answers = self.client.run(missing_module, spec, on_error="return")
        for worker, answer in sorted(answers.items()):
            if isinstance(answer, BaseException):
                raise CampaignError(
                    f"the Dask worker {worker} cannot run gradcheck ({type(answer).__name__}: {answer}): "
                    "install minigrad there with the engine (docs/campaign.md)"
                )
            if answer is not None:
                raise CampaignError(
                    f"engine {spec!r}: the Dask worker {worker} cannot find {answer!r} (not on its "
                    "Python path): install the engine on every worker (docs/campaign.md)"
                )
        self.checked.add(spec)

    def map(
        self, func: Callable[..., list[Any]], engine: Any, works: Sequence[Work], on_death: OnDeath
    ) -> Iterator[tuple[int, list[Any]]]:
        """`func` over `works` on the cluster's workers, as `Supervisor.map` does on this
        machine's: `(first, results)` as each task finishes, a dead unit `on_death(unit, death)`."""
        self.check_engine(engine.settings.engine)
        waiting, running, done = deque(works), {}, queue.Queue()
        ahead = TASKS_PER_THREAD * self.jobs()
        try:
            while waiting or running:
                while waiting and len(running) < ahead:
                    work = waiting.popleft()
                    future = self._send(func, engine, work)
                    running[future] = work
                    future.add_done_callback(done.put)
                try:
                    future = done.get(timeout=_LOOK)
                except queue.Empty:
                    self._check_scheduler()
                    continue
                work = running.pop(future)
                self.sent.discard(future)
                answer = self._answer(future)
                for death in answer.noted:
                    self.quarantine.note(engine, death)
                for first, batch in answer.batches:
                    yield first, [_outcome(r, work, first + k, on_death) for k, r in enumerate(batch)]
        finally:
            self._cancel(list(running))

    def _send(self, func: Callable[..., list[Any]], engine: Any, work: Work) -> Any:
        name = getattr(func, "__name__", "task")
        key = f"gradcheck-{self.run}-{name}-{work.first}-{secrets.token_hex(4)}"
        quarantine = self.quarantine.for_engine(engine)  # as it is now: deaths since come with later tasks
        future = self.client.submit(supervised, engine, func, work, quarantine, self.timeout, key=key)
        self.sent.add(future)
        return future

    def _answer(self, future: Any) -> Supervised:
        try:
            return future.result()
        except CampaignError:
            raise
        except Exception as exc:
            name = type(exc).__name__
            if name == "KilledWorker":
                raise CampaignError(f"a Dask worker died on this campaign's work: {exc}") from None
            where = f"the Dask cluster at {self.address}"
            if name in ("CancelledError", "FutureCancelledError"):
                self._check_scheduler()
                raise ClusterLost(f"{where} cancelled a task of this campaign") from None
            raise CampaignError(f"a task failed on {where}: {name}: {exc}") from None

    def _check_scheduler(self) -> None:
        if self.client.status not in ("running", "connecting") or self.client.scheduler_comm is None:
            raise ClusterLost(f"lost the Dask scheduler at {self.address} mid-run")

    def _cancel(self, futures: list[Any]) -> None:
        if futures and self.client.status == "running":
            with contextlib.suppress(Exception):
                self.client.cancel(futures)

    def close(self) -> None:
        """Cancel every task of this campaign still out, wait (a few seconds at most) until none
        runs on any worker, and disconnect."""
        keys = {f.key for f in self.sent}
        self._cancel(list(self.sent))
        self.sent.clear()
        deadline = time.monotonic() + RELEASE_WAIT
        while keys and self.client.status == "running" and time.monotonic() < deadline:
            try:
                busy = self.client.run(running_keys, on_error="return")
            except Exception:
                break
            if not any(isinstance(b, set) and b & keys for b in busy.values()):
                break
            time.sleep(0.2)
        quiet = _quiet("distributed.client") if self.client.status != "running" else contextlib.nullcontext()
        with contextlib.suppress(Exception), quiet:  # lost: its reconnecting, cut short, logs a traceback
            self.client.close(timeout=5)


@contextlib.contextmanager
def _quiet(logger: str) -> Iterator[None]:
    """`logger` silent inside: the one line that says what happened is the command's."""
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        log.setLevel(level)


def _outcome(result: Any, work: Work, position: int, on_death: OnDeath) -> Any:
    """A unit's result, or for one lost on the cluster its `on_death` here."""
    if isinstance(result, Lost):
        return on_death(work.units[position - work.first], result.death)
    return result


# --- on the Dask workers ----------------------------------------------------------------------------

_SUPERVISORS: dict[int, Supervisor] = {}  # one per worker thread, its child kept from task to task


def supervised(
    engine: Any, func: Callable[..., list[Any]], work: Work, quarantine: Quarantine, timeout: float | None
) -> Supervised:
    """A task on a Dask worker: `func` over `work` in this thread's supervised child process,
    starting from the campaign's `quarantine` (see the module docstring)."""
    supervisor = _SUPERVISORS.get(threading.get_ident())
    if supervisor is None:
        supervisor = _SUPERVISORS[threading.get_ident()] = Supervisor(1, timeout)
    supervisor.timeout, supervisor.quarantine = timeout, quarantine
    try:
        batches = list(supervisor.map(func, engine, [work], _lost, _cancelled))
    except CampaignError as exc:
        raise CampaignError(f"{exc} (on the Dask worker {_worker_address()})") from None
    return Supervised(batches, quarantine.noted)


def _lost(unit: Any, death: Death) -> Lost:
    return Lost(death)


def _cancelled() -> bool:
    """Whether this thread's Dask task is no longer wanted (cancelled, or its worker closing)."""
    try:
        from distributed import get_worker
        from distributed.worker import thread_state

        worker = get_worker()
        task = worker.state.tasks.get(thread_state.key)
    except (ImportError, ValueError, AttributeError):  # not in a Dask task
        return False
    return task is None or task.state not in ("executing", "long-running")


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "?"


def running_keys(dask_worker: Any) -> set[Any]:
    """The keys of the tasks a worker's threads are still running (cancelled ones included)."""
    return {key for key, task in dask_worker.state.tasks.items() if task.state in _RUNNING}


_RUNNING = ("executing", "long-running", "cancelled", "resumed")
