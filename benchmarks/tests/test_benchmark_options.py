"""The suite's normal run executes each pytest-benchmark benchmark once, without measuring; an
option that asks for figures (`--benchmark-only`, `--benchmark-json`, `--benchmark-autosave`,
`--benchmark-compare`) measures, as pytest-benchmark documents, with no --benchmark-enable
(conftest.py overrides pyproject's --benchmark-disable)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ONE = ["benchmarks/test_gradcheck_modes.py", "-k", "30 and fast", "-p", "no:cacheprovider", "-p", "no:xdist"]


def pytest(*args: str) -> str:
    """A pytest of its own; not an xdist worker, though this test may run in one (pytest-benchmark
    reads PYTEST_XDIST_WORKER and disables itself in workers)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    command = [sys.executable, "-m", "pytest", *ONE, *args]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_plain_run_executes_the_benchmark_once_and_measures_nothing():
    out = pytest()
    assert "1 passed" in out
    assert "Rounds" not in out


def test_benchmark_only_measures_and_skips_the_rest():
    out = pytest("--benchmark-only")
    assert "benchmark 'gradcheck() of a chain of 30 Values'" in out and "Rounds" in out


def test_benchmark_json_writes_the_figures_a_ci_can_keep(tmp_path):
    pytest("--benchmark-json", str(tmp_path / "b.json"))
    (row,) = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["benchmarks"]
    assert row["group"] == "gradcheck() of a chain of 30 Values" and row["stats"]["rounds"] > 1
