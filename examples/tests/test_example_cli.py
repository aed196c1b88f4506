"""Every example script answers --help through argparse (and writes nothing), and refuses unknown flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(EXAMPLES.glob("*.py"))


def run(script: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), *argv], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_there_are_examples_to_check():
    assert {p.stem for p in SCRIPTS} >= {"xor", "four_points", "moons", "digits"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_help_prints_usage_and_writes_nothing(script, tmp_path):
    done = run(script, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script.name} [-h]")
    assert list(tmp_path.iterdir()) == [], "--help must not train or write files"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_an_unknown_flag_is_refused_with_exit_2(script, tmp_path):
    done = run(script, "--bogusflag", cwd=tmp_path)
    assert done.returncode == 2
    assert "unrecognized arguments: --bogusflag" in done.stderr
    assert list(tmp_path.iterdir()) == []
