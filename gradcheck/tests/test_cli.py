"""`python -m gradcheck run`: what it prints, writes and exits with, on good and on bad input."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradcheck.cli import build_parser, main
from gradcheck.graphs.ir import Graph
from gradcheck.launcher import launcher

# A minigrad engine whose tanh derivative is off by 1e-6 relative: a bug parity must catch.
BROKEN_ENGINE = textwrap.dedent(
    """
    import minigrad
    from minigrad.scalar_ops import Tanh
    from gradcheck.engines.minigrad_value import MinigradValue


    class SlightlyWrongTanh(Tanh):
        @staticmethod
        def backward(g, out, a):
            return (g * (1.0 - out * out) * (1.0 + 1e-6),)


    class BrokenTanh(MinigradValue):
        name = "broken-tanh"
        create_graph = False

        def apply(self, op, args, attrs):
            if op == "tanh":
                return minigrad.apply_op(SlightlyWrongTanh, args[0])
            return super().apply(op, args, attrs)


    class RaisesOnExp(MinigradValue):
        name = "raises-on-exp"

        def apply(self, op, args, attrs):
            if op == "exp":
                raise TypeError("exp is not wired up yet")
            return super().apply(op, args, attrs)


    class RaisesWhenBuilt(MinigradValue):
        def __init__(self):
            raise RuntimeError("cannot find the engine's shared library")
    """
)


@pytest.fixture
def engines(tmp_path, monkeypatch):
    """Make `test_engines:<Adapter>` importable here and in spawned workers."""
    (tmp_path / "test_engines.py").write_text(BROKEN_ENGINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_clean_run_opens_with_a_header_prints_the_op_table_and_writes_both_reports(tmp_path, capsys):
    out_dir = tmp_path / "out"
    argv = ["run", "--graphs", "40", "--seed", "3", "--ops", "tanh,mul,add"]
    status, out, _ = run(capsys, *argv, "--out", str(out_dir), "--corpus", str(tmp_path / "corpus"))
    assert status == 0
    assert out.startswith("╭"), "the header panel comes first"
    header = " ".join(out[: out.index("╰")].replace("│", " ").split())
    assert "engine minigrad, 40 random scalar graphs (4 input points each), seed 3" in header
    assert "torch.autograd" in out and "numerical" in out
    table = out[out.index("Per op") :]
    for op in ("add", "mul", "tanh"):
        assert re.search(rf"^ ?{op} +\d+ ", table, re.MULTILINE), f"a row for {op}"
    assert "all 40 graphs agree" in out
    report = json.loads((out_dir / "report.json").read_text())
    assert report["settings"]["ops"] == ["tanh", "mul", "add"]
    assert set(report["ops"]) <= {"tanh", "mul", "add"} and report["totals"]["failed"] == 0
    assert "--graphs 40 --seed 3" in report["run"]["command"]
    assert (out_dir / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert not (tmp_path / "corpus").exists(), "a clean run writes nothing to the corpus"


def test_the_header_names_the_ops_an_engine_supports(tmp_path, capsys):
    # --no-isolation: the isolation pass (rightly) finds micrograd's ZeroDivisionError for x**0 at 0;
    # --no-edges: micrograd differs from torch at edge values (Python floats raise at 1 / 0);
    # --no-structure: the structural phase (rightly) finds its recursion limit and its backward() twice
    argv = ["run", "--engine", "micrograd", "--graphs", "5", "--no-save", "--no-isolation", "--no-edges"]
    argv.append("--no-structure")
    status, out, _ = run(capsys, *argv, "--out", str(tmp_path))
    assert status == 0
    header = " ".join(out[: out.index("╰")].replace("│", " ").split())
    assert "all 7 scalar ops the engine supports (add, sub, mul, div, pow_const, neg, relu)" in header


@pytest.mark.supervised
def test_figures_do_not_depend_on_how_the_run_was_split_across_jobs(tmp_path, capsys):
    reports = []
    for jobs in ("1", "2"):
        out_dir = tmp_path / f"jobs{jobs}"
        status, _, _ = run(
            capsys, "run", "--graphs", "48", "--seed", "11", "--jobs", jobs, "--out", str(out_dir)
        )
        assert status == 0
        reports.append(json.loads((out_dir / "report.json").read_text()))
    one, two = reports
    assert one["run"]["jobs"] == 1 and two["run"]["jobs"] == 2
    del one["run"], two["run"]
    for finding in [*one["findings"], *two["findings"]]:  # a repro names its own report's path
        finding.pop("repro")
    assert one == two
    assert one["totals"]["graphs"] == 48


def test_the_reports_repeat_command_reproduces_every_figure(tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    argv = ["run", "--graphs", "10", "--seed", "5", "--points", "2", "--ops", "tanh,mul", "--no-save"]
    assert run(capsys, *argv, "--out", str(first))[0] == 0
    report = json.loads((first / "report.json").read_text())
    repeat = shlex.split(report["run"]["repeat_command"])
    start = [*launcher(), "run"]
    assert repeat[: len(start)] == start, "started as this gradcheck was"
    assert run(capsys, *repeat[len(start) - 1 :], "--no-save", "--out", str(second))[0] == 0
    again = json.loads((second / "report.json").read_text())
    del report["run"], again["run"]
    assert again == report


def test_a_wrong_gradient_fails_is_explained_printed_and_saved_to_the_corpus(engines, tmp_path, capsys):
    corpus, out_dir = tmp_path / "corpus", tmp_path / "out"
    argv = ["run", "--graphs", "30", "--engine", "test_engines:BrokenTanh", "--ops", "tanh,add,mul"]
    status, out, _ = run(capsys, *argv, "--out", str(out_dir), "--corpus", str(corpus))
    assert status == 1
    assert "graphs disagree" in out
    assert "tanh — wrong gradient" in out and "gradient of x0" in out
    assert "each explained by its finding above without shrinking" in out
    (saved,) = sorted(corpus.glob("*.json"))  # the finding's one-op graph, once
    graph = Graph.from_json(saved.read_text())
    assert graph.ops() == ["tanh"] and graph.meta["engine"] == "test_engines:BrokenTanh"
    report = json.loads((out_dir / "report.json").read_text())
    assert report["totals"]["failed"] >= 2 and report["unexplained"] is None
    assert report["ops"]["tanh"]["failures"] == report["totals"]["failed"]
    assert {f["finding"] for f in report["failures"]} == {0}
    assert "x0.tanh()" in (out_dir / "report.html").read_text()


def test_saving_the_same_failure_twice_keeps_one_corpus_file(engines, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    argv = [
        "run",
        "--graphs",
        "10",
        "--engine",
        "test_engines:BrokenTanh",
        "--ops",
        "tanh",
    ]
    for _ in range(2):
        status, _, _ = run(capsys, *argv, "--out", str(tmp_path / "out"), "--corpus", str(corpus))
        assert status == 1
    assert len(list(corpus.glob("*.json"))) == 1


def test_tensor_graphs_run_on_minigrads_tensor_engine_by_default(tmp_path, capsys):
    # minigrad's Tensor differs from torch at a few edge values (reported): random graphs only here
    # (the structural phase's chains 10^5 deep and the op isolation took most of this test's time)
    only_random = ["--no-edges", "--no-structure", "--no-isolation"]
    status, out, _ = run(
        capsys, "run", "--tensor", "--graphs", "12", "--no-save", *only_random, "--out", str(tmp_path)
    )
    assert status == 0
    assert "engine minigrad-tensor" in " ".join(out.split()) and "random tensor graphs" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["settings"]["tensor"] is True and report["settings"]["engine"] == "minigrad-tensor"
    assert report["totals"]["graphs"] == 12


# --- bad input: a clear message and exit status 2 -----------------------------------------------


def test_unknown_engine(tmp_path, capsys):
    status, _, err = run(capsys, "run", "--engine", "tensorflow", "--out", str(tmp_path))
    assert status == 2
    assert "unknown engine 'tensorflow'" in err and "minigrad" in err


def test_unknown_op(tmp_path, capsys):
    status, _, err = run(capsys, "run", "--ops", "tanh,softplus", "--out", str(tmp_path))
    assert status == 2
    assert "unknown op(s) ['softplus']" in err and "'tanh'" in err


def test_op_the_engine_does_not_support(tmp_path, capsys):
    status, _, err = run(capsys, "run", "--engine", "micrograd", "--ops", "tanh", "--out", str(tmp_path))
    assert status == 2
    assert "engine 'micrograd' does not support op(s) ['tanh']" in err


def test_a_malformed_corpus_file_is_named_and_nothing_is_lost(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    good = Graph.from_dict(
        {
            "format": "minigrad-graph",
            "version": 1,
            "inputs": [{"name": "x0", "value": 0.5, "shape": []}],
            "nodes": [{"op": "tanh", "args": [0], "attrs": {}}],
            "outputs": [1],
        }
    ).to_json()
    (corpus / "good.json").write_text(good)
    (corpus / "bad-op.json").write_text(good.replace('"tanh"', '"tanhh"'))
    (corpus / "truncated.json").write_text(good[:40])
    before = {p.name: p.read_text() for p in corpus.iterdir()}
    status, _, err = run(
        capsys, "run", "--graphs", "5", "--corpus", str(corpus), "--out", str(tmp_path / "out")
    )
    assert status == 2
    assert "2 malformed file(s)" in err
    assert f"{corpus / 'bad-op.json'}: node v1: unknown op 'tanhh'" in err
    assert f"{corpus / 'truncated.json'}: not valid JSON" in err
    assert "good.json" not in err
    assert {p.name: p.read_text() for p in corpus.iterdir()} == before
    assert not (tmp_path / "out").exists(), "nothing runs before the corpus is sound"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--engine", "minigrad", "--tensor"], "'minigrad' evaluates scalar graphs only; drop --tensor"),
        (["--engine", "minigrad-tensor"], "'minigrad-tensor' evaluates tensor graphs only: add --tensor"),
        (["--tensor", "--ops", "tanh,matmul,softplus"], "unknown op(s) ['softplus']"),
        (["--ops", "tanh,matmul"], "op(s) ['matmul'] are not scalar ops (add --tensor?)"),
    ],
)
def test_graph_kind_and_engine_must_match(argv, message, tmp_path, capsys):
    status, _, err = run(capsys, "run", *argv, "--out", str(tmp_path))
    assert status == 2
    assert message in err


def test_an_adapter_that_raises_on_an_op_is_an_adapter_finding_against_that_op(engines, tmp_path, capsys):
    # the adapter's own `apply` raises ("not wired up yet"): a finding of the adapter tier, not a
    # refusal of the run (exit 2) and not the engine's bug
    argv = ["run", "--engine", "test_engines:RaisesOnExp", "--graphs", "20", "--ops", "exp,add"]
    status, out, _ = run(capsys, *argv, "--out", str(tmp_path / "o"))
    assert status == 1, "the exception fails the run as a finding"
    assert "exp — adapter fault (TypeError)" in out


def test_an_adapter_that_raises_when_built(engines, tmp_path, capsys):
    status, _, err = run(
        capsys, "run", "--engine", "test_engines:RaisesWhenBuilt", "--out", str(tmp_path / "o")
    )
    assert status == 2
    assert "loading its adapter raised RuntimeError: cannot find the engine's shared library" in err


def test_an_output_directory_that_cannot_be_created_fails_before_the_campaign(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, out, err = run(capsys, "run", "--graphs", "5", "--no-save", "--out", str(blocker / "reports"))
    assert status == 2
    assert f"cannot create the report directory --out {blocker / 'reports'}" in err
    assert "checking graphs" not in out


def test_an_adapter_module_that_does_not_exist(tmp_path, capsys):
    status, _, err = run(capsys, "run", "--engine", "no_such_module:Adapter", "--out", str(tmp_path))
    assert status == 2
    assert "cannot import module 'no_such_module'" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--graphs", "0"], "expected a positive integer, got 0"),
        (["run", "--jobs", "two"], "expected a positive integer, got 'two'"),
        (["run", "--seed", "-1"], "non-negative integer seed"),
        (["run", "--ops", ","], "comma-separated list of op names"),
        (["walk"], "invalid choice: 'walk'"),
    ],
)
def test_malformed_arguments_exit_2_with_the_reason(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_help_documents_exit_statuses_and_scaling_out_with_pytest_xdist():
    text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    assert "-n auto" in text and "pytest-xdist" in text and "--tx" in text
    assert "Exit status" in text and "--jobs" in text


def test_the_module_runs_as_a_script(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck", "run", "--engine", "nope", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 2
    assert "unknown engine 'nope'" in done.stderr


UNKNOWN_ENGINE = [["run", "--engine", "nope"], ["gate", "--engine", "nope", "--baseline", "b.json"]]


@pytest.mark.parametrize("argv", UNKNOWN_ENGINE)
def test_an_unknown_engine_is_said_before_the_campaign_or_torch_is_imported(argv):
    code = (
        "import sys\n"
        "from gradcheck.cli import main\n"
        f"status = main({argv!r})\n"
        "print(status, [m for m in ('torch', 'gradcheck.campaign.phases') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["2", "[]"], done.stdout + done.stderr
    assert "unknown engine 'nope'" in done.stderr


def test_the_edge_phase_reports_findings_and_no_edges_leaves_it_out(tmp_path, capsys):
    args = (
        "run",
        "--engine",
        "micrograd",
        "--ops",
        "div",
        "--graphs",
        "3",
        "--no-save",
        "--no-structure",  # micrograd's recursion limit and backward() twice are not this test's
        "--out",
        str(tmp_path),
    )
    status, out, _ = run(capsys, *args)
    assert status == 1 and "edge-value phase" in out and "ZeroDivisionError" in " ".join(out.split())
    findings = json.loads((tmp_path / "report.json").read_text())["findings"]
    edges = [f for f in findings if f["phase"] == "edges"]
    assert edges and "exception" in {f["kind"] for f in edges}
    status, out, _ = run(capsys, *args, "--no-edges")
    assert status == 0 and "edge-value phase" not in out
