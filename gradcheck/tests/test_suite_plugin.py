"""The installed pytest plugin: from a directory outside the repository, `pytest --pyargs
gradcheck.suite --gradcheck-engine NAME` finds micrograd's x ** 0 bug and passes minigrad."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest


def _suite(tmp_path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "gradcheck.suite", *args]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("gradcheck.suite.plugin") == "gradcheck.suite.plugin"


def test_outside_the_repository_the_suite_finds_micrograds_x_to_the_zero_bug(tmp_path):
    run = _suite(tmp_path, "--gradcheck-engine", "micrograd", "-k", "kink or corpus")
    assert run.returncode == 1, run.stdout[-3000:]
    assert (
        "FAILED test_parity.py::test_kink_conventions_match_torch[pow_const(0.0, exponent=0.0)]" in run.stdout
    )
    assert "ZeroDivisionError" in run.stdout


def test_outside_the_repository_the_suite_passes_minigrad_and_replays_the_shipped_corpus(tmp_path):
    run = _suite(tmp_path, "--gradcheck-engine", "minigrad", "-k", "kink or corpus", "-v")
    assert run.returncode == 0, run.stdout[-3000:]
    assert "test_corpus_graph_still_agrees[seed-deep-chain.json] PASSED" in run.stdout


def test_an_unknown_engine_is_a_usage_error_naming_the_valid_ones(tmp_path):
    run = _suite(tmp_path, "--gradcheck-engine", "pytorch", "-k", "kink")
    assert run.returncode != 0
    assert "unknown engine 'pytorch'; valid: minigrad" in run.stdout + run.stderr


@pytest.mark.parametrize("option", ["--gradcheck-engine", "--gradcheck-corpus"])
def test_the_options_are_in_pytest_help(tmp_path, option):
    assert option in _suite(tmp_path, "--help").stdout


def test_the_suite_collects_under_strict_markers_with_marker_warnings_as_errors(tmp_path):
    run = _suite(
        tmp_path, "--strict-markers", "-W", "error::pytest.PytestUnknownMarkWarning", "--collect-only", "-q"
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "test_op_matches_torch_at_its_edge_values" in run.stdout
    assert "test_each_structural_check_matches_torch" in run.stdout
