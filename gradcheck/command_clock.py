"""What the user waited for: the command's whole time, start-up included (report.json's `run`).

A campaign's phases time themselves (`seconds`, `check_seconds`...), but the user waits from the
shell prompt: the interpreter's start, the imports (torch: seconds), the worker processes' start,
the reports. `wall_seconds` counts from the process's start (Linux: /proc/self/stat's start time
against /proc/uptime; elsewhere from the first import of this module, which `gradcheck.cli`
imports first thing), `cpu_seconds` the CPU time of this process and of every child it has waited
for (the supervised workers, once closed): CPU seconds are what other jobs on a shared machine
inflate least (issue 48).
"""

from __future__ import annotations

import os
import resource
import time

_IMPORTED = time.monotonic()  # the fallback start: gradcheck.cli imports this module first


def _since_process_start() -> float | None:
    """Seconds since this process started, from /proc (None where there is no /proc)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # the name (field 2) may hold spaces
        with open("/proc/uptime", "rb") as uptime:
            up = float(uptime.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return max(0.0, up - int(fields[19]) / ticks)  # field 22, starttime, in clock ticks since boot
    except (OSError, ValueError, IndexError):
        return None


def wall_seconds() -> float:
    """Wall seconds since the command started."""
    since = _since_process_start()
    return since if since is not None else time.monotonic() - _IMPORTED


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of the children it has waited for."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def command_times() -> dict[str, float]:
    """report.json's `run` figures for the whole command (rounded to the millisecond)."""
    return {"command_wall_seconds": round(wall_seconds(), 3), "command_cpu_seconds": round(cpu_seconds(), 3)}
