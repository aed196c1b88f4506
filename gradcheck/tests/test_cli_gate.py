"""`gradcheck gate` as a user runs it in CI, from a directory outside the repository: record a
baseline once, gate each build through every launcher (the console script, `python -m gradcheck`,
the pytest plugin), fail on a gradient 1e-6 off in its op's row only; and the CI files of `gate`
and `run` (JUnit XML that a JUnit parser loads, a markdown summary) and an 80-column console."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradcheck.cli import main
from gradcheck.launcher import launcher

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # subprocesses that import torch and run campaigns
GRAPHS = "100"  # enough to draw each of micrograd's 7 ops many times
OTHER_GRAPHS = str(int(GRAPHS) + 1)
# micrograd's rules raising at a divisor of 0, in the engine's terms with every exception type raised
DIV_POLE = (
    "`x / y` at `x = 0, y = 0` raises ZeroDivisionError (elsewhere also OverflowError); "
    "torch gives gradients inf and nan"
)
POW_POLE = (
    "`x ** 0` at `x = 0` raises ZeroDivisionError (elsewhere also OverflowError); torch gives gradient 0"
)

# The user's adapter: micrograd, or (GATE_MUTANT set, a later "build") micrograd whose product rule
# is 1e-6 off, relative.
USER_ENGINE = textwrap.dedent(
    """
    import os

    from micrograd.engine import Value
    from gradcheck.engines.micrograd import MicrogradAdapter


    class Engine(MicrogradAdapter):
        def apply(self, op, args, attrs):
            out = super().apply(op, args, attrs)
            if op == "mul" and os.environ.get("GATE_MUTANT"):
                a, b = (x if isinstance(x, Value) else Value(x) for x in args)

                def backward():
                    a.grad += b.data * out.grad * (1 + 1e-6)
                    b.grad += a.data * out.grad * (1 + 1e-6)

                out._backward = backward
            return out
    """
)


# How a user launches the gate: the module, the console script, and the pytest plugin's gate test
# (with the same engine and baseline: `--gradcheck-baseline`).
MODULE = [sys.executable, "-m", "gradcheck"]
CONSOLE_SCRIPT = [str(Path(sys.executable).with_name("gradcheck"))]
PLUGIN = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",
    "--pyargs",
    "gradcheck.suite",
    "-k",
    "gate",
]


def gradcheck_cli(
    directory: Path, *argv: str, mutant: bool = False, launcher: list[str] = MODULE
) -> subprocess.CompletedProcess:
    """`python -m gradcheck ARGV` (or another `launcher`) in `directory`, importing this checkout
    and the user's adapter, with no terminal and no COLUMNS (as in a CI log)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "GATE_MUTANT")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(directory)])
    if mutant:
        env["GATE_MUTANT"] = "1"
    return subprocess.run(
        [*launcher, *argv],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def gradcheck_here(directory: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    """`gradcheck ARGV` run by `main` in this process, in `directory` with the user's adapter
    importable; its exit status, a usage error's included."""
    monkeypatch.chdir(directory)
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.delenv("GATE_MUTANT", raising=False)
    try:
        return main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        return int(exc.code)


@pytest.fixture(scope="module")
def user_ci(tmp_path_factory):
    """A user's CI outside the repository: record the baseline, gate the same build, gate a mutant."""
    directory = tmp_path_factory.mktemp("user-project")
    (directory / "user_engine.py").write_text(USER_ENGINE)
    gate = ["gate", "--engine", "user_engine:Engine", "--graphs", GRAPHS, "--baseline", "b.json"]
    ci_files = ["--junit-xml", "junit.xml", "--summary-md", "summary.md"]
    plugin = ["--gradcheck-engine", "user_engine:Engine", "--gradcheck-baseline", "b.json"]
    runs = {
        "record": gradcheck_cli(directory, *gate, "--update-baseline"),
        "same build": gradcheck_cli(directory, *gate),
        "mutant": gradcheck_cli(directory, *gate, *ci_files, mutant=True),
        "console script": gradcheck_cli(directory, *gate, launcher=CONSOLE_SCRIPT),
        "plugin": gradcheck_cli(directory, *plugin, launcher=PLUGIN),
        "plugin, mutant": gradcheck_cli(directory, *plugin, launcher=PLUGIN, mutant=True),
    }
    return directory, runs


def test_a_baseline_recorded_once_passes_the_same_engine_and_fails_a_gradient_1e_6_off(user_ci):
    directory, runs = user_ci
    assert not (ROOT / "b.json").exists() and (directory / "b.json").exists()
    statuses = [runs[k].returncode for k in ("record", "same build", "mutant")]
    assert statuses == [0, 0, 1], {k: r.stderr[-2000:] for k, r in runs.items()}
    assert f"accepted finding: {DIV_POLE}" in " ".join(runs["record"].stdout.split())  # wrapped at 80
    # micrograd sums gradients in the order of a set of nodes (memory addresses), so figures far
    # below the floors may change from run to run: "changed within limits", never a failure
    assert "gate: PASS: 7 op rows, 0 failed" in runs["same build"].stdout
    out = runs["mutant"].stdout
    assert "new finding (scalar):" in out and "mul — wrong gradient" in out
    assert "gate: FAIL" in out


def test_a_baseline_recorded_through_one_launcher_passes_through_the_others_and_the_plugin(user_ci):
    # micrograd's recursion limit is accepted in the baseline: its depth differs with the stack
    # under the harness (a console script, `python -m`, pytest), its identity does not
    directory, runs = user_ci
    recorded = (directory / "b.json").read_text()
    assert "recursion limit in backward() of deep chains" in recorded and "at depth" not in recorded
    script, plugin = runs["console script"], runs["plugin"]
    assert script.returncode == 0, script.stdout[-3000:] + script.stderr[-2000:]
    assert "gate: PASS: 7 op rows, 0 failed" in script.stdout
    assert plugin.returncode == 0, plugin.stdout[-3000:]
    assert "1 passed" in plugin.stdout and "test_gate.py" in plugin.stdout
    mutant = runs["plugin, mutant"]
    assert mutant.returncode == 1, mutant.stdout[-3000:]
    assert "new finding (scalar): mul — wrong gradient" in mutant.stdout
    assert "from micrograd.engine import Value" in mutant.stdout, "the repro in the engine's terms"


def test_a_gradient_1e_6_off_fails_its_op_row_only_with_the_new_finding_as_the_first_line(user_ci):
    directory, runs = user_ci
    lines = runs["mutant"].stdout.splitlines()
    assert lines[0].startswith("new finding (scalar): mul — wrong gradient ("), lines[:3]
    failing_rows = [line.split(":")[0] for line in lines if line.startswith("FAIL scalar ")]
    assert failing_rows == ["FAIL scalar mul"], failing_rows
    cases = ET.parse(directory / "junit.xml").getroot().find("testsuite").findall("testcase")
    failed_ops = {
        c.get("name")
        for c in cases
        if c.get("classname") == "gate.scalar.ops" and c.find("failure") is not None
    }
    assert failed_ops == {"mul"}


def test_the_console_fits_an_80_column_log_but_for_commands_and_code_printed_whole(user_ci):
    directory, runs = user_ci
    code = (directory / "summary.md").read_text()
    for run in (runs[k] for k in ("record", "same build", "mutant", "console script")):
        too_wide = [line for line in run.stdout.splitlines() if len(line) > 80]
        assert all(line.startswith("reproduce: ") or line in code for line in too_wide), too_wide
    rows = [
        line for line in runs["same build"].stdout.splitlines() if re.match(r"^ ?(add|mul|relu) +\d+ ", line)
    ]
    assert len(rows) == 3, "one line per op"


def test_the_gate_junit_file_has_a_case_per_op_and_per_finding_with_the_repro(user_ci):
    directory, _ = user_ci
    root = ET.parse(directory / "junit.xml").getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) and int(root.get("failures")) == int(suite.get("failures"))
    ops = {c.get("name") for c in cases if c.get("classname") == "gate.scalar.ops"}
    assert ops == {"add", "sub", "mul", "div", "pow_const", "neg", "relu"}
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert int(suite.get("failures")) == len(failed)
    new = failed["mul — wrong gradient"]
    assert new.get("type") == "wrong-gradient"
    assert "from micrograd.engine import Value" in new.text, "the repro is in the failure text"
    start = shlex.join(launcher("-m", sys.executable, str(directory)))  # the interpreter that ran it
    rerun = f"reproduce: {start} run --engine user_engine:Engine --graphs {GRAPHS} --seed 20240601"
    assert rerun in new.text, "and the campaign that finds it"
    accepted = [c for c in cases if c.get("name") == DIV_POLE]
    assert accepted and accepted[0].find("failure") is None
    assert "in the baseline" in accepted[0].find("system-out").text
    summary = (directory / "summary.md").read_text()
    assert summary.startswith("## Gradient-regression gate: FAIL")
    assert "- **new finding (scalar)**: mul — wrong gradient" in summary


def test_the_gate_junit_file_loads_in_junitparser(user_ci):
    junitparser = pytest.importorskip("junitparser")  # in the `test` extra
    directory, _ = user_ci
    xml = junitparser.JUnitXml.fromfile(str(directory / "junit.xml"))
    cases = [case for suite in xml for case in suite]
    failing = [case for case in cases if not case.is_passed]
    assert {case.name for case in failing} >= {"mul — wrong gradient", "mul"}
    assert all(case.result and case.result[0].message for case in failing)


@pytest.mark.parametrize("options", [["--tensor"], ["--tensor", "--dtype", "float32"]], ids=["f64", "f32"])
def test_a_tensor_engine_is_gated_the_same_way(tmp_path, options, monkeypatch, capsys, shallow_chains):
    # in this process (the launchers are the user's CI's above): two fewer imports of torch; the
    # recording and the gate build the same chains, 10^3 deep only
    gate = ["gate", "--engine", "minigrad-tensor", *options, "--graphs", "60", "--baseline", "t.json"]
    assert gradcheck_here(tmp_path, monkeypatch, *gate, "--update-baseline") == 0
    capsys.readouterr()
    status = gradcheck_here(tmp_path, monkeypatch, *gate)
    done = capsys.readouterr()
    assert status == 0, done.out + done.err
    assert "tensor" in done.out and "matmul" in done.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--engine", "no_such_module:Engine"], "no_such_module"),
        (["--engine", "micrograd"], "engine 'user_engine:Engine' (this gate: 'micrograd')"),
        (
            ["--engine", "user_engine:Engine", "--graphs", OTHER_GRAPHS],
            f"graphs {GRAPHS} (this gate: {OTHER_GRAPHS})",
        ),
        (["--engine", "minigrad-tensor", "--tensor"], "this gate runs ['tensor']"),
        (["--engine", "micrograd", "--dtype", "float32"], "--dtype float32 needs --tensor"),
        (["--engine", "micrograd", "--junit-xml", "no/dir/j.xml"], "its directory no/dir does not exist"),
        (["--engine", "micrograd", "--update-baseline"], "its directory no/dir does not exist"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(user_ci, argv, message, monkeypatch, capsys):
    # in this process: each `python -m gradcheck` imported torch for seconds before its one line
    directory, _ = user_ci
    graphs = [] if "--graphs" in argv else ["--graphs", GRAPHS]
    baseline = "no/dir/b.json" if "--update-baseline" in argv else "b.json"
    status = gradcheck_here(directory, monkeypatch, "gate", *argv, *graphs, "--baseline", baseline)
    err = capsys.readouterr().err
    assert status == 2, err
    assert message in err and err.startswith("gradcheck: error:") and err.count("\n") == 1, err


def test_run_writes_junit_and_a_markdown_summary(tmp_path, capsys):
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    argv = ["run", "--engine", "micrograd", "--graphs", "60", "--out", str(tmp_path), "--no-save"]
    assert main([*argv, "--junit-xml", str(junit), "--summary-md", str(summary)]) == 1
    capsys.readouterr()
    suite = ET.parse(junit).getroot().find("testsuite")
    findings = [c for c in suite.findall("testcase") if c.get("classname") == "gradcheck.findings"]
    ops = {c.get("name") for c in suite.findall("testcase") if c.get("classname") == "gradcheck.ops"}
    assert ops == {"add", "sub", "mul", "div", "pow_const", "neg", "relu"}
    zero = [c for c in findings if c.get("name") == POW_POLE]
    assert zero and "python -m gradcheck replay" in zero[0].find("failure").text
    text = summary.read_text()
    assert text.startswith("## gradcheck parity campaign: FAIL")
    assert POW_POLE in text and "| `relu` |" in text


@pytest.mark.parametrize(("columns", "absolute"), [(None, False), ("140", True)])
def test_the_run_table_has_one_line_per_op_in_80_columns_and_more_when_wider(
    tmp_path, capsys, monkeypatch, columns, absolute
):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["run", "--graphs", "30", "--ops", "tanh,mul,add", "--out", str(tmp_path), "--no-save"]) == 0
    out = capsys.readouterr().out
    width = int(columns or 80)
    reports = f"Reports: {tmp_path / 'report.json'}, {tmp_path / 'report.html'}"
    assert reports in out.splitlines(), "paths printed whole"
    assert max(len(line) for line in out.splitlines() if line != reports) <= width
    rows = [line for line in out.splitlines() if re.match(r"^ ?(add|mul|tanh) +\d+ ", line)]
    assert len(rows) == 3 and all(line.count("/") >= 2 for line in rows)
    assert ("abs err vs torch" in out) is absolute


def test_a_long_op_name_is_cut_in_the_gate_table_never_its_figures():
    from rich.console import Console

    from gradcheck.campaign.verdict import OpVerdict
    from gradcheck.cli.console import verdict_table

    row = {"graphs": 40, "p99_rel_err_torch": 2.0e-05, "p99_rel_err_numeric": 5.9e-05}
    verdicts = [OpVerdict("tensor", op, row, row, []) for op in ("binary_cross_entropy_with_logits", "mean")]
    console = Console(width=80, record=True)
    console.print(verdict_table("tensor", verdicts))
    lines = console.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert sum("2.0e-05 → 2.0e-05   5.9e-05 → 5.9e-05" in line for line in lines) == 2


def test_this_repositorys_gate_recorded_by_ci_gate_passes_through_the_plugin(
    tmp_path, capsys, shallow_chains
):
    # ci.gate records minigrad's three parts (its main, in this process: ci/tests/test_gate.py
    # launches it as a module and as a script; the baseline holds no structural check, so chains
    # 10^3 deep record the same one); the plugin gates those of its engine
    from ci import gate

    record = ["--update-baseline", "--baseline", str(tmp_path / "ci.json")]
    status = gate.main([*record, "--graphs", "40", "--tensor-graphs", "12", "--jobs", "1"])
    done = capsys.readouterr()
    assert status == 0, done.out[-2000:] + done.err[-2000:]
    for engine in ("minigrad", "minigrad-tensor"):
        plugin = ["--gradcheck-engine", engine, "--gradcheck-baseline", str(tmp_path / "ci.json")]
        run = gradcheck_cli(tmp_path, *plugin, launcher=PLUGIN)
        assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-3000:]
