"""Engine code under watch: worker processes that run it, and what happens when one misbehaves.

Every command that runs an engine (`run`, `gate`, `replay`) runs it in worker processes started
here (`Supervisor`), at any `--jobs`: the engine's import, its adapter, its ops and backward never
run in the process that writes the reports and decides the exit status. The work goes out as
tasks over units (`Work`: a chunk of graph indices, a list of isolation cases...); each worker
writes the unit it begins and the op it applies into shared memory (`gradcheck.engines.tracing`),
so when it dies, calls `sys.exit`, raises through the harness or gives no sign of progress for
`timeout` seconds (then it is killed; loading the engine, torch and a checker is the worker's
start, with `START_LIMIT`), the supervisor knows which unit and which op it was on. The timeout
counts the seconds the worker could run: those it waited for a CPU on a loaded machine are left
out (`cpu_wait`), so a busy machine makes no timeout a quiet one would not.
That unit's outcome is the caller's `on_death(unit, death)` (a finding, in the campaign), the rest
of its task is sent again, and a fresh worker takes over. An op that ended a worker is quarantined:
later units that apply it are reported without running it (a crash costs a new process, a hang
the whole time limit, and the outcome would be the same; a campaign on a Dask cluster shares its
`Quarantine` with the cluster's tasks, each run there on a `Supervisor` of its own:
`gradcheck.campaign.cluster`). A worker that dies while loading the
engine, or a task that refuses its input (`CampaignError`), stops the command with exit status 2.
Workers are started by spawn (they import the engine by its spec), or forked (`start_method`:
`gradcheck.check_engine` on a class of a notebook's cell, which only a copy of the kernel has).

Workers die with this process: they ignore SIGINT (Ctrl-C reaches the whole process group; this
process stops them), the kernel kills them when it exits (Linux: PR_SET_PDEATHSIG), and `close`
kills any still running, as an `atexit` hook does should `close` be skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing import current_process, get_context
from multiprocessing.connection import Connection, wait
from typing import Any

from gradcheck.campaign.cpu_wait import queued_seconds
from gradcheck.campaign.settings import CampaignError
from gradcheck.campaign.workers import Job, Reply, forked_worker_main, worker_main
from gradcheck.choices import DEFAULT_TIMEOUT
from gradcheck.engines.tracing import ALL_UNITS, Beacon
from gradcheck.interrupts import signals_held

UNATTRIBUTED_DEATHS = 5  # deaths no op explains before every further unit is refused
FAILED_STARTS = 3  # workers in a row that die before taking a job: they cannot start here
START_LIMIT = 300.0  # seconds a worker may take to start and load the engine (import numpy, torch)
_TICK = 0.5  # how often a busy worker's progress is looked at
_STOP_GRACE = 2.0  # seconds a worker gets to stop by itself before it is killed
START_METHODS = ("spawn", "fork")


@dataclass(frozen=True)
class Death:
    """What went wrong in a unit: `kind` "crash" (the process ended, or the engine called
    sys.exit), "timeout" or "raised" (an exception escaped the harness's checks); `reason` in
    words; the `op` the engine was applying ("" unknown) and the harness's `stage` ("forward",
    "backward", "load", a structural check...). `skipped`: the unit was not run at all, because
    `op` ended a worker before (this is that earlier death)."""

    kind: str
    reason: str
    op: str = ""
    stage: str = ""
    skipped: bool = False
    exception: str = ""  # kind "raised": the exception's type name

    @property
    def describe(self) -> str:
        """What happened, after "the worker process": "called sys.exit(0) while applying relu"
        ("... in an earlier case", for a unit not run because of it)."""
        where = f"while applying {self.op}" if self.op and self.stage == "forward" else f"during {self.stage}"
        text = f"{self.reason} {where}" if self.stage else self.reason
        return f"{text} in an earlier case" if self.skipped else text


@dataclass(frozen=True)
class Work:
    """One task's units, with what every unit of it shares (`extra`); `first`: the position of
    its first unit among all the units sent, so that results can be put back in order."""

    units: tuple[Any, ...]
    extra: Any = None
    first: int = 0

    def split(self, at: int) -> list[Work]:
        """The units before and after unit `at`, as works of their own (empty ones left out)."""
        before = Work(self.units[:at], self.extra, self.first)
        after = Work(self.units[at + 1 :], self.extra, self.first + at + 1)
        return [w for w in (before, after) if w.units]


def works_of(units: Sequence[Any], size: int, extra: Any = None) -> list[Work]:
    """`units` in chunks of `size`."""
    size = max(1, size)
    return [Work(tuple(units[i : i + size]), extra, i) for i in range(0, len(units), size)]


OnDeath = Callable[[Any, Death], Any]


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Connection
    beacon: Beacon
    job: int = 0  # the id of the job it is running (0: idle)
    work: Work | None = None
    seen: int = 0  # the beacon's progress when last looked at
    since: float = 0.0  # when the progress last moved (or the job was taken)
    queued: float = 0.0  # the seconds it had waited for a CPU then (`cpu_wait`)
    taken: bool = False  # the worker has begun the job (its clock runs)
    sent: float = 0.0  # when the job was sent


@dataclass
class _Task:
    """One `map` call: its task function, the campaign it runs for, how a dead unit turns out."""

    func: Callable[..., list[Any]]
    engine: Any
    on_death: OnDeath
    pending: deque[Work] = field(default_factory=deque)


class Quarantine:
    """The ops that ended a worker, per engine (a gate's parts may check two), each with the death
    that quarantined it; after `UNATTRIBUTED_DEATHS` deaths no op explains, every unit
    (`tracing.ALL_UNITS`). A campaign on a Dask cluster shares one between this machine's
    workers and the cluster's (`gradcheck.campaign.cluster`): `noted` lists the deaths taken in,
    `for_engine` is what a task on the cluster starts from."""

    def __init__(self) -> None:
        self.ops: dict[Any, dict[str, Death]] = {}  # engine's key -> op -> the death that quarantined it
        self.unattributed: dict[Any, int] = {}
        self.noted: list[Death] = []

    def of(self, engine: Any) -> dict[str, Death]:
        """The ops quarantined for `engine`, each with its death."""
        return self.ops.get(_key(engine), {})

    def note(self, engine: Any, death: Death) -> None:
        """Quarantine the op that ended a worker; after too many deaths no op explains, everything."""
        if death.kind == "raised":
            return
        self.noted.append(death)
        key = _key(engine)
        quarantined = self.ops.setdefault(key, {})
        if death.op and death.stage == "forward":
            quarantined.setdefault(death.op, death)
            return
        self.unattributed[key] = self.unattributed.get(key, 0) + 1
        if self.unattributed[key] >= UNATTRIBUTED_DEATHS:
            quarantined.setdefault(ALL_UNITS, death)

    def for_engine(self, engine: Any) -> Quarantine:
        """A copy holding only `engine`'s entries, with nothing noted yet."""
        copy, key = Quarantine(), _key(engine)
        if key in self.ops:
            copy.ops[key] = dict(self.ops[key])
        if key in self.unattributed:
            copy.unattributed[key] = self.unattributed[key]
        return copy


_LIVE: weakref.WeakSet[Supervisor] = weakref.WeakSet()
_SPAWNING = threading.Lock()
_READY: list[_Worker] = []  # started ahead of need (`prestart`), for the first supervisor


def prestart() -> None:
    """Start a worker now, before the command line imports the rest of gradcheck and torch: its
    own start-up (numpy, torch: seconds) then overlaps this process's. The first `Supervisor`
    takes it; one nobody takes is killed at exit."""
    if not _READY:
        _READY.append(_spawn(get_context("spawn")))


@atexit.register
def _kill_all() -> None:  # pragma: no cover - only when `close` was skipped
    for supervisor in list(_LIVE):
        supervisor.close(grace=0)
    while _READY:
        _discard(_READY.pop())


def _restart_clock(worker: _Worker, now: float) -> None:
    worker.since, worker.queued = now, queued_seconds(worker.process.pid)


def _could_run(worker: _Worker, now: float) -> float:
    """Seconds since the worker's clock started, less those it spent waiting for a CPU."""
    return now - worker.since - (queued_seconds(worker.process.pid) - worker.queued)


class Supervisor:
    """Up to `jobs` watched worker processes; `map` runs tasks on them, `call` one unit."""

    def __init__(
        self, jobs: int = 1, timeout: float | None = DEFAULT_TIMEOUT, start_method: str = "spawn"
    ) -> None:
        """`start_method` "spawn" (the default: workers import the engine by its spec) or "fork"
        (workers are copies of this process: an engine defined in `__main__`, a notebook's cell,
        reaches them; `gradcheck.notebook.check` uses it where forking is safe)."""
        if start_method not in START_METHODS:
            raise ValueError(f"start_method must be one of {START_METHODS}, got {start_method!r}")
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.workers: list[_Worker] = []
        self.quarantine = Quarantine()
        self.deaths = 0  # workers lost (killed or ended), for the console and the tests
        self.failed_starts = 0
        self._jobs = 0
        self._context = get_context(start_method)
        _LIVE.add(self)

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(grace=0 if exc[0] is not None else _STOP_GRACE)

    def close(self, grace: float = _STOP_GRACE) -> None:
        """Stop every worker: asked to stop, then killed after `grace` seconds (at once when 0)."""
        with signals_held():
            workers, self.workers = self.workers, []
            for w in workers:
                if grace > 0 and w.job == 0:
                    with contextlib.suppress(OSError, ValueError):
                        w.conn.send(None)
                else:
                    _kill(w)
            deadline = time.monotonic() + grace
            for w in workers:
                w.process.join(max(0.0, deadline - time.monotonic()) if grace > 0 else 0.5)
                if w.process.is_alive():
                    _kill(w)
                    w.process.join(1.0)
                w.conn.close()
        _LIVE.discard(self)

    # --- running work ---------------------------------------------------------------------------

    def call(self, func: Callable[..., list[Any]], engine: Any, unit: Any, extra: Any = None) -> Any:
        """`func` on one unit in a worker, a death there a CampaignError (exit status 2)."""

        def fatal(_: Any, death: Death) -> Any:
            raise CampaignError(f"engine {_name(engine)!r}: its worker process {death.describe}")

        ((_, (result,)),) = list(self.map(func, engine, [Work((unit,), extra)], fatal))
        return result

    def map(
        self,
        func: Callable[..., list[Any]],
        engine: Any,
        works: Sequence[Work],
        on_death: OnDeath,
        cancelled: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, list[Any]]]:
        """Run `func(state, units, extra)` over `works` on the workers (`state`: what
        `engine.state()` made, once per worker), yielding `(first, results)` as each finishes
        (`first`: the position of the results' first unit); a unit that dies yields `(its
        position, [on_death(unit, death)])` and the rest of its work is sent again. When
        `cancelled()` (asked every half second) says so, the busy workers are killed and the
        rest is dropped (a Dask task its campaign no longer wants: `campaign.cluster`)."""
        task = _Task(func, engine, on_death, deque(works))
        busy: list[_Worker] = []
        try:
            while task.pending or busy:
                if cancelled is not None and cancelled():
                    return
                while task.pending:
                    worker = self._idle(busy)
                    if worker is None:
                        break
                    self._send(worker, task, task.pending.popleft())
                    busy.append(worker)
                for worker in self._ready(busy):
                    yield from self._collect(worker, task, busy)
                for worker in self._stalled(busy):
                    yield from self._lost(worker, task, busy, "timeout", self._timeout_reason(worker))
        finally:
            for worker in busy:  # abandoned (an exception in the caller): its answer is of no use
                self._discard(worker)

    # --- workers --------------------------------------------------------------------------------

    def _spawn(self) -> _Worker:
        if self._context.get_start_method() == "fork":  # a copy of this process as it is now
            return _spawn(self._context, forked_worker_main)
        return _READY.pop() if _READY else _spawn(self._context)

    def _idle(self, busy: list[_Worker]) -> _Worker | None:
        for w in self.workers:
            if w.job == 0 and w not in busy:
                return w
        if len(self.workers) < self.jobs:
            self.workers.append(self._spawn())
            return self.workers[-1]
        return None

    def _send(self, worker: _Worker, task: _Task, work: Work) -> None:
        self._jobs += 1
        worker.job, worker.work, worker.taken, worker.sent = self._jobs, work, False, time.monotonic()
        quarantined = frozenset(self.quarantine.of(task.engine))
        job = Job(self._jobs, task.func, task.engine, work.units, work.extra, quarantined)
        with contextlib.suppress(OSError, ValueError):  # it died idle: the next look finds out
            worker.conn.send(job)

    def _ready(self, busy: list[_Worker]) -> list[_Worker]:
        if not busy:
            return []
        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = set(wait(handles, timeout=_TICK))
        return [w for w in busy if w.conn in ready or w.process.sentinel in ready]

    def _stalled(self, busy: list[_Worker]) -> list[_Worker]:
        now = time.monotonic()
        stalled = []
        for w in busy:
            if not w.taken:
                if w.beacon.job == w.job:  # it took the job: its clock starts
                    w.taken, w.seen = True, w.beacon.progress
                    _restart_clock(w, now)
                    self.failed_starts = 0
                elif now - w.sent > START_LIMIT:
                    stalled.append(w)
                continue
            if w.beacon.stage == b"load":  # loading the engine (and torch) is its start, not a graph
                _restart_clock(w, now)
                if now - w.sent > START_LIMIT:
                    stalled.append(w)
            elif w.beacon.progress != w.seen:
                w.seen = w.beacon.progress
                _restart_clock(w, now)
            elif self.timeout is not None and _could_run(w, now) > self.timeout:
                stalled.append(w)
        return stalled

    def _timeout_reason(self, worker: _Worker) -> str:
        if worker.beacon.stage == b"load":
            return f"gave no answer within {START_LIMIT:g} s"
        return f"gave no answer within {self.timeout:g} s (--graph-timeout)"

    def _collect(self, worker: _Worker, task: _Task, busy: list[_Worker]) -> Iterator[tuple[int, list[Any]]]:
        reply: Reply | None = None
        try:
            if worker.conn.poll():
                reply = worker.conn.recv()
        except (EOFError, OSError):
            reply = None
        except Exception as exc:  # an answer that does not unpickle: the worker's, a crash
            reply = Reply("raised", worker.beacon.unit, f"sent an answer that cannot be read ({exc})")
        if reply is None:
            worker.process.join(1.0)
            yield from self._lost(worker, task, busy, "crash", _ending(worker.process.exitcode))
            return
        work = worker.work
        assert work is not None
        worker.job, worker.work = 0, None
        busy.remove(worker)
        if reply.status == "done":
            yield work.first, reply.results
        elif reply.status == "refused":
            raise CampaignError(reply.reason)
        else:  # the worker lives on: the unit's outcome is its death
            yield from self._unit_lost(task, work, reply.unit, self._death_of(task, reply, worker.beacon))

    def _death_of(self, task: _Task, reply: Reply, beacon: Beacon) -> Death:
        if reply.status == "quarantined":
            quarantined = self.quarantine.of(task.engine)
            earlier = quarantined.get(reply.op) or quarantined.get(ALL_UNITS)
            return replace(earlier, skipped=True) if earlier else Death("crash", "was refused")
        kind = "crash" if reply.status == "ended" else "raised"
        return Death(kind, reply.reason, _text(beacon.op), _text(beacon.stage), exception=reply.exception)

    def _lost(
        self, worker: _Worker, task: _Task, busy: list[_Worker], kind: str, reason: str
    ) -> Iterator[tuple[int, list[Any]]]:
        """A worker that died or hung: killed, replaced later, its unit's outcome a death."""
        death = Death(kind, reason, _text(worker.beacon.op), _text(worker.beacon.stage))
        position, work = worker.beacon.unit, worker.work
        self._discard(worker)
        busy.remove(worker)
        self.deaths += 1
        assert work is not None
        if not (worker.taken or worker.beacon.job == worker.job):  # it never began: send it again
            self.failed_starts += 1
            if self.failed_starts >= FAILED_STARTS:
                raise CampaignError(f"worker processes cannot start here: the last one {reason}")
            task.pending.appendleft(work)
            return
        yield from self._unit_lost(task, work, position, death)

    def _unit_lost(
        self, task: _Task, work: Work, position: int, death: Death
    ) -> Iterator[tuple[int, list[Any]]]:
        if death.stage == "load":
            raise CampaignError(
                f"engine {_name(task.engine)!r}: loading it, its worker process {death.reason}"
            )
        if not 0 <= position < len(work.units):  # it died before any unit: the work is sent again
            self.quarantine.note(task.engine, death)
            task.pending.appendleft(work)
            return
        if not death.skipped:
            self.quarantine.note(task.engine, death)
        task.pending.extendleft(reversed(work.split(position)))
        yield work.first + position, [task.on_death(work.units[position], death)]

    def _discard(self, worker: _Worker) -> None:
        _discard(worker)
        if worker in self.workers:
            self.workers.remove(worker)


def _spawn(context: Any, main: Callable[..., None] = worker_main) -> _Worker:
    ours, theirs = context.Pipe(duplex=True)
    beacon = context.RawValue(Beacon)
    process = context.Process(target=main, args=(theirs, beacon, os.getpid()), name="gradcheck-worker")
    with signals_held(), _parent_of_workers(), warnings.catch_warnings():
        # the child starts with Ctrl-C held, until it has set it aside; a forked one runs only the
        # worker loop, never this process's other threads' code (Python 3.12 warns of those)
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        process.start()
    theirs.close()
    return _Worker(process, ours, beacon)


@contextlib.contextmanager
def _parent_of_workers() -> Iterator[None]:
    """This process allowed to start workers, should it be a daemonic process (a Dask worker's,
    as its nanny starts it: multiprocessing refuses children there, which it could not end at
    exit); ours end with it all the same (the parent-death signal, `close`, the atexit hook)."""
    with _SPAWNING:  # one thread at a time: the flag is the process's (a Dask worker of several threads)
        current = current_process()
        if not current.daemon:
            yield
            return
        current.daemon = False
        try:
            yield
        finally:
            current.daemon = True


def _discard(worker: _Worker) -> None:
    _kill(worker)
    worker.process.join(1.0)
    worker.conn.close()


def _key(engine: Any) -> Any:
    """What a quarantine holds for: the engine's `quarantine_key` (a campaign whatever ops it
    stopped drawing for the adapter's fault), else the engine itself."""
    return getattr(engine, "quarantine_key", engine)


def _name(engine: Any) -> str:
    settings = getattr(engine, "settings", None)
    return str(getattr(settings, "engine", engine))


def _kill(worker: _Worker) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if worker.process.is_alive():
            worker.process.kill()


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _ending(exitcode: int | None) -> str:
    """How a worker process ended, in words."""
    if exitcode is None:
        return "stopped answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        what = {
            "SIGSEGV": "a segmentation fault",
            "SIGABRT": "an abort",
            "SIGKILL": "SIGKILL (out of memory?)",
        }
        return f"was killed by {what.get(name, name)} ({name})"
    return f"ended the process (os._exit({exitcode}) or exit status {exitcode})"
