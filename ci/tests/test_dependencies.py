"""CI fails a test skipped for a missing test dependency; elsewhere it stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # where `ci` imports from

TEST = """
import pytest

def test_needs_a_missing_module():
    pytest.importorskip("no_such_test_dependency_xyz")

def test_skipped_on_purpose():
    pytest.skip("not on this platform")
"""


def _run(tmp_path, require: bool) -> subprocess.CompletedProcess:
    (tmp_path / "test_probe.py").write_text(TEST)
    env = {k: v for k, v in os.environ.items() if k != "GRADCHECK_REQUIRE_TEST_DEPS"}
    if require:
        env["GRADCHECK_REQUIRE_TEST_DEPS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-p", "ci.dependencies", "-p", "no:cacheprovider", "-rA"]
    return subprocess.run(
        [*command, "test_probe.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_under_ci_a_missing_test_dependency_fails_and_names_the_module(tmp_path):
    run = _run(tmp_path, require=True)
    assert run.returncode == 1, run.stdout
    assert "1 failed, 1 skipped" in run.stdout
    assert "no_such_test_dependency_xyz" in run.stdout
    assert "add it to the `test` extra" in run.stdout


def test_outside_ci_a_missing_test_dependency_is_a_skip(tmp_path):
    run = _run(tmp_path, require=False)
    assert run.returncode == 0, run.stdout
    assert "2 skipped" in run.stdout
