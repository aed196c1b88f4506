"""Signals end everything: SIGTERM to gradcheck, Ctrl-C (SIGINT to its process group, as a terminal
sends it) or SIGKILL of gradcheck ends every worker within seconds; the first two with one line,
no traceback and exit status 143 or 130. Each test runs `gradcheck run --jobs 2` in a session of
its own and looks for the session's processes (gradcheck, its workers, multiprocessing's resource
tracker) in /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.supervised,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes from /proc"),
]
ROOT = Path(__file__).resolve().parents[2]
SLOW = "gradcheck.testing.hostile_engines:SlowRelu"  # a campaign still running when signalled


def session(sid: int) -> list[int]:
    """The processes of session `sid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # after the command: state, ppid, pgrp, session
            found.append(int(stat.parent.name))
    return found


def started(tmp_path: Path) -> subprocess.Popen:
    """`gradcheck run --jobs 2` on a slow engine, once both its workers are up."""
    argv = ["run", "--engine", SLOW, "--graphs", "400", "--jobs", "2", "--no-save", "--no-structure"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcheck", *argv, "--out", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(session(proc.pid)) < 4:  # gradcheck, two workers, the resource tracker
        assert time.monotonic() < deadline and proc.poll() is None, "the workers never started"
        time.sleep(0.2)
    time.sleep(1.0)
    return proc


def gone_within(sid: int, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while session(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = session(sid)
    for pid in left:  # the test's own clean-up, by pid
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.parametrize(
    ("signum", "to_group", "status", "line"),
    [
        (signal.SIGTERM, False, 143, "gradcheck: terminated"),
        (signal.SIGINT, True, 130, "gradcheck: interrupted"),
    ],
)
def test_a_signal_ends_the_run_and_its_workers_with_one_line(tmp_path, signum, to_group, status, line):
    proc = started(tmp_path)
    (os.killpg if to_group else os.kill)(proc.pid, signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == status
    assert err.strip().splitlines()[-1] == line
    assert "Traceback" not in out + err
    assert gone_within(proc.pid, 5) == []


def test_the_workers_die_with_gradcheck_when_it_is_killed(tmp_path):
    proc = started(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert gone_within(proc.pid, 5) == [], "no worker outlives a killed gradcheck"
