"""This repository's gate: its committed baseline matches its parts, and it runs as a module, as a
script from any directory, and refuses bad input with exit status 2 before any campaign."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci import gate
from gradcheck.campaign.baseline import load_baseline
from gradcheck.campaign.regression_gate import expected_ops
from gradcheck.campaign.verdict import FLOORS

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_baseline_covers_every_op_with_the_gate_settings_and_no_finding():
    data = load_baseline(gate.BASELINE, FLOORS)
    parts = gate.parts()
    assert sorted(data["parts"]) == sorted(p.name for p in parts) == ["scalar", "tensor", "tensor-float32"]
    covered = {op for part in data["parts"].values() for op in part["ops"]}
    assert set(expected_ops(parts)) <= covered
    for part in parts:
        recorded = data["parts"][part.name]
        assert recorded["settings"] == part.recorded_settings()
        assert recorded["totals"]["failed"] == 0 and recorded["findings"] == []


@pytest.mark.parametrize(
    ("launch", "directory"),
    [(["-m", "ci.gate"], ROOT), (["ci/gate.py"], ROOT), ([str(ROOT / "ci" / "gate.py")], None)],
    ids=["module", "script", "script-from-elsewhere"],
)
def test_the_gate_runs_as_a_module_and_as_a_script_from_any_directory(launch, directory, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the script imports its checkout
    done = subprocess.run(
        [sys.executable, *launch, "--baseline", str(tmp_path / "none.json")],
        cwd=directory or tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "no baseline yet; create it with --update-baseline" in done.stderr


def test_a_baseline_of_other_graph_counts_is_bad_input(tmp_path):
    assert gate.main(["--graphs", "5", "--baseline", str(gate.BASELINE)]) == 2
