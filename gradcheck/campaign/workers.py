"""How many worker processes a campaign starts: never more than the CPUs, nor than the work items.

Each worker imports numpy, torch and the engine (~290 MiB); more of them than CPUs only adds
memory and start-up time, and more than work items starts processes that never get any.
"""

from __future__ import annotations

import os


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
