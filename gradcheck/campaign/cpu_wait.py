"""How long a process has waited for a CPU: the time a loaded machine adds to its work.

A unit's graph timeout is counted in the time its worker could run (`supervisor`): on a machine
whose cores are all busy, a worker ready to run waits in the kernel's run queue, and that wait is
no sign of a hang. Linux counts it per thread in /proc/PID/schedstat (its second field, in
nanoseconds); the engine runs on the worker's main thread, whose counter that file is.
"""

from __future__ import annotations

import functools


def queued_seconds(pid: int) -> float:
    """Seconds process `pid`'s main thread has spent ready to run but waiting for a CPU; 0.0 where
    the kernel does not say (not Linux, no scheduler statistics, or the process is gone)."""
    if not _readable():
        return 0.0
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


@functools.cache
def _readable() -> bool:
    try:
        with open("/proc/self/schedstat", "rb") as stat:
            return len(stat.read().split()) >= 2
    except OSError:
        return False
