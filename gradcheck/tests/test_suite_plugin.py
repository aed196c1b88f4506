"""The installed pytest plugin: from a directory outside the repository, `pytest --pyargs
gradcheck.suite --gradcheck-engine NAME` finds micrograd's x ** 0 bug and passes minigrad, and a
failure of a user's own engine shows the campaign's repro, built through that engine."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

# A user's micrograd-style engine, with no adapter, whose tanh derivative is written 1 - t.
PLAIN_ENGINE = Path(__file__).resolve().parents[1] / "engines" / "tests" / "data" / "plain_engine.py"
TANH_CLONE = PLAIN_ENGINE.read_text().replace("(1 - out.data**2) * out.grad", "(1 - out.data) * out.grad")


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


@pytest.mark.parametrize("option", ["--gradcheck-engine", "--gradcheck-corpus", "--gradcheck-baseline"])
def test_the_options_are_in_pytest_help(tmp_path, option):
    assert option in _suite(tmp_path, "--help").stdout


def test_the_suite_collects_under_strict_markers_with_marker_warnings_as_errors(tmp_path):
    run = _suite(
        tmp_path, "--strict-markers", "-W", "error::pytest.PytestUnknownMarkWarning", "--collect-only", "-q"
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "test_op_matches_torch_at_its_edge_values" in run.stdout
    assert "test_each_structural_check_matches_torch" in run.stdout


def test_a_failure_of_a_foreign_engine_shows_the_repro_built_through_that_engine(tmp_path):
    assert "(1 - out.data) * out.grad" in TANH_CLONE, "the planted bug"
    (tmp_path / "engine.py").write_text(TANH_CLONE)
    run = _suite(
        tmp_path, "--gradcheck-engine", "engine.py:Value", "-k", "test_seeded_random_graphs_agree", "-x"
    )
    assert run.returncode == 1, run.stdout[-3000:]
    out = run.stdout
    assert "import minigrad" not in out and "from minigrad" not in out, "no minigrad code for another engine"
    assert "finding: " in out and "tanh" in out
    torch_code = out.split("# torch, float64, on the same graph", 1)[1].split("# the engine under test", 1)[0]
    engine_code = out.split("# the engine under test", 1)[1].split("# graph JSON", 1)[0]
    assert (
        f"sys.path.insert(0, {str(tmp_path)!r})" in engine_code and "from engine import Value" in engine_code
    )
    scope: dict = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed, pytest.raises(SystemExit) as exited:
        exec(torch_code + engine_code, scope)  # torch's numbers, then the same graph through the engine
    assert exited.value.code == 1, "the repro's verdict: it exits 1 while the bug is there"
    assert "engine grads:" in printed.getvalue() and "verdict: FAIL" in printed.getvalue()
    inputs = sorted(k for k, v in scope.items() if k.startswith("x") and type(v).__name__ == "Value")
    torch_grads = [0.0 if g is None else float(g) for g in scope["grads"]]
    engine_grads = [scope[name].grad for name in inputs]
    assert len(engine_grads) == len(torch_grads)
    assert any(abs(e - t) > 1e-6 for e, t in zip(engine_grads, torch_grads)), "it reproduces the bug"


def test_the_suite_runs_in_tier_order_so_x_stops_at_the_engines_bug_before_its_edges(tmp_path):
    (tmp_path / "engine.py").write_text(TANH_CLONE)  # its only bug: tanh; Python floats raise at 1 / 0
    tiers = "test_seeded_random_graphs_agree or structural_check or edge_values"
    listed = _suite(tmp_path, "--gradcheck-engine", "engine.py:Value", "-k", tiers, "--collect-only", "-q")
    modules = [line.split("::")[0] for line in listed.stdout.splitlines() if "::" in line]
    assert modules == sorted(modules, key=["test_parity.py", "test_structure.py", "test_edges.py"].index)
    assert len(set(modules)) == 3, listed.stdout[-3000:]
    run = _suite(tmp_path, "--gradcheck-engine", "engine.py:Value", "-k", tiers, "-x")
    assert run.returncode == 1, run.stdout[-3000:]
    failed = [line.split(" - ")[0] for line in run.stdout.splitlines() if line.startswith("FAILED")]
    assert failed == ["FAILED test_parity.py::test_seeded_random_graphs_agree[0]"], run.stdout[-3000:]
    assert "finding: tanh — wrong gradient" in run.stdout


def test_a_projects_own_tests_keep_their_order_whatever_their_module_names(tmp_path):
    for name in ("test_edges.py", "test_parity.py"):
        (tmp_path / name).write_text("def test_it():\n    pass\n")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert [line for line in run.stdout.splitlines() if "::" in line] == [
        "test_edges.py::test_it",
        "test_parity.py::test_it",
    ], run.stdout + run.stderr


@pytest.mark.parametrize(
    ("mistake", "op", "words"),
    [
        ("MulNoUpstream", "mul", "mul's backward leaves out the upstream gradient"),
        ("TanhOneMinusT", "tanh", "tanh's backward behaves like (1 - t) · out.grad"),
    ],
)
def test_with_x_the_suite_stops_at_the_op_that_holds_a_learners_mistake_named(tmp_path, mistake, op, words):
    # not at a random graph of sub (built from mul here) or of another op the mistake reaches
    engine = f"gradcheck.testing.tutorial_engines:{mistake}"
    run = _suite(tmp_path, "--gradcheck-engine", engine, "-x", "-q")
    failed = [line.split(" - ")[0] for line in run.stdout.splitlines() if line.startswith("FAILED")]
    assert failed == [f"FAILED test_ops_alone.py::test_op_alone_matches_torch[{op}]"], run.stdout[-3000:]
    assert f"finding: {words}" in run.stdout
