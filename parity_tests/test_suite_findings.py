"""The suite's own options: a failing run saves its graphs to a temporary directory it names (never
into the repository), `--corpus DIR` replays more graph files, and a missing DIR is a usage error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from parity_tests import CORPUS

ROOT = Path(__file__).resolve().parents[1]
RELU_TWO = "gradcheck.testing.kind_engines:ReluTimesTwo"


def pytest_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT), "HYPOTHESIS_PROFILE": "ci"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_a_failing_run_saves_its_graphs_to_a_named_temporary_directory(tmp_path):
    before = sorted(p.name for p in CORPUS.iterdir())
    test = "gradcheck/suite/test_parity.py::test_seeded_random_graphs_agree[0]"
    result = pytest_run(tmp_path, test, "--engine", RELU_TWO)
    assert result.returncode == 1, result.stdout[-2000:]
    (directory,) = tmp_path.glob("gradcheck-findings-*")
    assert f"parity findings: failing graphs saved to {directory}" in result.stdout
    (saved,) = directory.glob("*.json")
    assert json.loads(saved.read_text())["meta"]["engine"] == "relu-times-two"
    assert sorted(p.name for p in CORPUS.iterdir()) == before, "nothing lands in the repository"


def test_corpus_directories_given_are_replayed_too(tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    graph = {
        "format": "minigrad-graph",
        "version": 1,
        "inputs": [{"name": "x0", "value": 0.75, "shape": []}],
        "nodes": [{"op": "relu", "args": [0], "attrs": {}}],
        "outputs": [1],
    }
    (extra / "relu.json").write_text(json.dumps(graph))
    result = pytest_run(tmp_path, "gradcheck/suite/test_parity.py", "-k", "corpus", "--corpus", str(extra))
    assert result.returncode == 0 and f"{extra / 'relu.json'}" not in result.stdout
    result = pytest_run(
        tmp_path,
        "gradcheck/suite/test_parity.py",
        "-k",
        "corpus",
        "--corpus",
        str(extra),
        "--engine",
        RELU_TWO,
    )
    assert result.returncode == 1 and f"{extra / 'relu.json'}" in result.stdout
    missing = pytest_run(
        tmp_path, "gradcheck/suite/test_parity.py", "-k", "corpus", "--corpus", str(tmp_path / "no")
    )
    assert missing.returncode != 0 and "not a directory" in missing.stdout + missing.stderr
