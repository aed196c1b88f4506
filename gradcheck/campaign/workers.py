"""The worker processes that run engine code (`worker_main`), and how many a campaign starts.

A worker takes `Job`s from its supervisor's pipe (`gradcheck.campaign.supervisor`), runs each on
the engine state of the job's settings (loaded once, `EngineState` in `gradcheck.campaign.pool`)
and answers with a `Reply`: the results, or why a unit had none (the engine called sys.exit, an
exception escaped the harness, a quarantined op was reached), or that the input is refused
(`CampaignError`). Deaths it cannot answer for (os._exit, a signal, a hang) its supervisor reads
from the shared `Beacon`. It ignores Ctrl-C (its supervisor stops it) and dies with its parent.

Each worker imports numpy, torch and the engine (~290 MiB); more of them than CPUs only adds
memory and start-up time, and more than work items starts processes that never get any.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gradcheck.campaign.settings import CampaignError
from gradcheck.engines import tracing

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Job:
    """`func(state, units, extra)` on the state `engine.state()` makes (the engine loaded for a
    campaign's settings, once per worker: `gradcheck.campaign.pool.Campaign`); `quarantined`: the
    ops (or `tracing.ALL_UNITS`) not to run."""

    id: int
    func: Callable[..., list[Any]]
    engine: Any
    units: tuple[Any, ...]
    extra: Any
    quarantined: frozenset[str]


@dataclass(frozen=True)
class Reply:
    """A job's outcome: "done" with `results` (one per unit); "ended" (the engine called
    sys.exit), "raised" (an exception escaped the harness) or "quarantined" (unit `unit` reached
    op `op`), all about unit `unit`; "refused": the input is bad (`reason`, exit status 2)."""

    status: str
    unit: int = -1
    reason: str = ""
    op: str = ""
    results: list[Any] | None = None
    exception: str = ""  # "raised": the exception's type name


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        return max(1, os.cpu_count() or 1)


def capped_jobs(jobs: int) -> tuple[int, str | None]:
    """`jobs` capped at the available CPUs, and a note for the user when it was lowered."""
    cpus = available_cpus()
    if jobs <= cpus:
        return jobs, None
    return cpus, f"note: --jobs {jobs} lowered to {cpus}, the number of CPUs this process may use"


def worker_count(jobs: int, items: int) -> int:
    """Processes to start for `items` work items: at most `jobs`, the CPUs and the items."""
    return max(1, min(jobs, available_cpus(), items))


# --- the worker process ---------------------------------------------------------------------------


def worker_main(conn: Any, beacon: tracing.Beacon, parent: int) -> None:
    """A worker's life: set Ctrl-C aside, watch the parent, then answer jobs until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _die_with(parent)
    tracing.install(beacon)
    states: dict[Any, Any] = {}
    warmed = False
    while True:
        if not warmed and not conn.poll(0):
            warm_up()
            warmed = True
        try:
            job = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if job is None:
            os._exit(0)
        beacon.unit, beacon.op, beacon.stage = -1, b"", b"load"
        beacon.job = job.id
        if not warmed:  # a job was waiting (a worker started for it): warmed up as part of loading
            warm_up()  # (`supervisor`: no graph's time), not in its first unit
            warmed = True
        tracing.quarantine(job.quarantined)
        reply = _run(job, states, beacon)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            os._exit(0)
        except Exception as exc:  # a result that does not pickle
            conn.send(
                Reply("raised", -1, f"gave a result that cannot be sent back ({type(exc).__name__}: {exc})")
            )


def forked_worker_main(conn: Any, beacon: tracing.Beacon, parent: int) -> None:
    """`worker_main` in a forked copy of its parent (a Jupyter kernel): the engine's prints go to
    the process's own stdout and stderr, not through the parent's streams (a kernel's sends on
    sockets of threads the copy does not have)."""
    sys.stdout = sys.__stdout__ or open(os.devnull, "w")  # noqa: SIM115 - the process's for life
    sys.stderr = sys.__stderr__ or open(os.devnull, "w")  # noqa: SIM115
    worker_main(conn, beacon, parent)


def _run(job: Job, states: dict[Any, Any], beacon: tracing.Beacon) -> Reply:
    try:
        state = states.get(job.engine)
        if state is None:
            states.clear()  # one campaign at a time: the gate's parts come one after another
            state = states[job.engine] = job.engine.state()  # the engine's import, under stage "load"
        beacon.stage = b""
        return Reply("done", results=list(job.func(state, job.units, job.extra)))
    except tracing.Quarantined as q:
        return Reply("quarantined", beacon.unit, op=q.op)
    except CampaignError as exc:
        return Reply("refused", beacon.unit, str(exc))
    except SystemExit as exc:
        if beacon.stage == b"load":
            states.clear()
        return Reply("ended", beacon.unit, f"called sys.exit({exc.code!r})")
    except KeyboardInterrupt:  # the engine's own: Ctrl-C is ignored here
        return Reply("ended", beacon.unit, "raised KeyboardInterrupt")
    except BaseException as exc:
        if beacon.stage == b"load":
            states.clear()
        reason = f"raised {type(exc).__name__}: {exc}{_where(exc)}"
        return Reply("raised", beacon.unit, reason, exception=type(exc).__name__)


def _where(exc: BaseException) -> str:
    """ " (at file.py:12, in f)": where an exception that escaped the harness was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno}, in {last.name})"


def warm_up() -> None:
    """Import what checking needs (torch: seconds) while no job waits, outside any job's clock; in
    a process about to fork workers (`gradcheck.check_engine` in a notebook), once for them all."""
    try:
        # the checks every phase's task runs: the registry, parity, torch (the tasks and the pool
        # that import them are small, and importing them here would make an import circle)
        import gradcheck.campaign.isolation
        import gradcheck.campaign.settling
        import gradcheck.campaign.structure
        import gradcheck.parity.edge_check  # noqa: F401
        from gradcheck.parity.torch_reference import set_torch_threads

        set_torch_threads(1)  # tiny tensors: a second thread only adds synchronisation
    except Exception:  # a job that needs them will say what is wrong
        pass


def _die_with(parent: int) -> None:
    """End this process when `parent` ends: the kernel's parent-death signal on Linux, else a
    thread that looks every second."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # it died before the watch was set
        os._exit(0)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()


def _watch(parent: int) -> None:  # pragma: no cover - platforms without PR_SET_PDEATHSIG
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)
