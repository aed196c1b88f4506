"""The command's whole time, start-up included, in report.json's `run` section (issue 48): wall
seconds since the process started (not since gradcheck was imported) and CPU seconds of the
process and of the children it waited for."""

from __future__ import annotations

import json
import subprocess
import sys

from gradcheck.campaign.report_json import build_report, figures_only
from gradcheck.campaign.tests.test_report import RECORDS, result_of
from gradcheck.command_clock import command_times

# Sleeps before importing the clock, then waits for a child that spends CPU: the wall time counts
# from the interpreter's start, the CPU time holds the child's.
PROGRAM = """
import json, subprocess, sys, time
time.sleep(0.5)
subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
from gradcheck.command_clock import command_times, cpu_seconds
import resource
child = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({**command_times(), "child": child.ru_utime + child.ru_stime}))
"""


def test_the_wall_time_counts_from_the_process_start_and_the_cpu_time_holds_the_children():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True)
    times = json.loads(done.stdout)
    assert times["command_wall_seconds"] >= 0.5  # the sleep before the clock's import is counted
    assert times["command_cpu_seconds"] >= times["child"] > 0


def test_report_json_says_the_whole_command_beside_the_phases_outside_its_figures():
    report = build_report(result_of(RECORDS, graphs=4))
    run = report["run"]
    assert set(command_times()) <= set(run)
    assert run["command_wall_seconds"] > 0 and run["command_cpu_seconds"] > 0
    assert "command_wall_seconds" not in json.dumps(figures_only(report))  # the figures stay deterministic
