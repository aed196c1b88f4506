"""An engine cannot take the harness down: whatever one op does (sys.exit, os._exit, a
segmentation fault, never returning, an answer whose __float__ raises, an exit at import) the
command ends with its documented exit status and one clear line or finding, no traceback, and no
worker process left behind. The engines run in watched workers, as users run them."""

from __future__ import annotations

import json
import multiprocessing
import re

import pytest

from gradcheck.campaign.checking import campaign_graph
from gradcheck.campaign.settings import Settings
from gradcheck.cli import main
from gradcheck.testing.hostile_engines import EXITS_AT_IMPORT

pytestmark = pytest.mark.supervised
HOSTILE = "gradcheck.testing.hostile_engines:"
SMALL = ["--graphs", "8", "--seed", "3", "--points", "2", "--no-save"]


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert multiprocessing.active_children() == [], "a worker outlived the command"
    return status, out, err


def findings(out_dir):
    return {f["title"]: f for f in json.loads((out_dir / "report.json").read_text())["findings"]}


@pytest.mark.parametrize(
    ("engine", "phases", "title"),
    [  # every phase runs in the worker (the first case); the others leave out the edge phase
        ("ExitsInRelu", [], r"relu — ended the engine's process: called sys\.exit\(0\)"),
        (
            "EndsProcessInRelu",
            ["--no-edges"],
            r"relu — ended the engine's process: ended the process \(os\._exit\(3\)",
        ),
        (
            "SegfaultsInRelu",
            ["--no-edges"],
            r"relu — ended the engine's process: was killed by a segmentation fault",
        ),
        ("UnreadableRelu", ["--no-edges"], r"relu( at 0)? — not a number"),
    ],
)
def test_an_op_that_ends_the_engines_process_is_a_finding_against_it(engine, phases, title, tmp_path, capsys):
    argv = ["run", "--engine", HOSTILE + engine, *SMALL, *phases, "--out", str(tmp_path)]
    status, _, _ = run(capsys, *argv)
    assert status == 1, "exit 0 only when every check passed"
    titles = list(findings(tmp_path))
    assert any(re.match(title, t) for t in titles), titles
    assert (tmp_path / "report.html").exists()


def test_the_random_graphs_go_on_and_every_graph_with_the_op_is_in_its_finding(tmp_path, capsys):
    argv = ["run", "--engine", HOSTILE + "EndsProcessInRelu", *SMALL, "--no-isolation", "--no-structure"]
    status, _, _ = run(capsys, *argv, "--no-edges", "--ops", "relu,add,mul", "--out", str(tmp_path))
    assert status == 1
    report = json.loads((tmp_path / "report.json").read_text())
    (finding,) = [f for f in report["findings"] if f["kind"] == "crash"]
    settings = Settings(graphs=8, seed=3, points=2)
    ops = ("relu", "add", "mul")  # --ops, in its order
    with_relu = [i for i in range(8) if "relu" in campaign_graph(settings, ops, None, i).ops()]
    assert with_relu and finding["graph_indices"] == with_relu
    assert finding["ops"] == ["relu"] and "while applying relu" in finding["problems"][0]
    assert report["totals"]["passed"] == 8 - len(with_relu), "the graphs without relu were checked"


def test_an_op_that_never_returns_is_a_timeout_finding(tmp_path, capsys):
    argv = ["run", "--engine", HOSTILE + "HangsInRelu", *SMALL, "--no-edges", "--graph-timeout", "3"]
    status, out, _ = run(capsys, *argv, "--out", str(tmp_path))
    assert status == 1
    (title,) = [t for t in findings(tmp_path) if t.startswith("relu — timeout")]
    assert title == "relu — timeout: gave no answer within 3 s (--graph-timeout)"
    # the first screen leads with it: a hang on ordinary inputs is a bug
    assert re.search(r"^0 +bug +relu +timeout: gave no answer within 3 s", out, re.MULTILINE), out


def test_an_engine_that_exits_while_imported_is_bad_input_in_one_line(tmp_path, capsys):
    module = tmp_path / "exits_at_import.py"
    module.write_text(EXITS_AT_IMPORT)
    status, _, err = run(capsys, "run", "--engine", f"{module}:Adapter", *SMALL, "--out", str(tmp_path / "o"))
    assert status == 2
    assert err.strip().splitlines() == [
        f"gradcheck: error: engine '{module}:Adapter': loading it, its worker process called sys.exit(0)"
    ]
    assert not (tmp_path / "o" / "report.json").exists()


def test_the_gate_fails_on_an_engine_that_ends_its_process(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    benign = HOSTILE + "Benign"  # the baseline is recorded from the same engine with relu behaving
    argv = ["gate", "--graphs", "30", "--baseline", str(baseline)]
    assert main([*argv, "--engine", benign, "--update-baseline", "--refuse-findings"]) == 0
    recorded = json.loads(baseline.read_text())
    recorded["parts"]["scalar"]["settings"]["engine"] = HOSTILE + "ExitsInRelu"
    baseline.write_text(json.dumps(recorded))
    capsys.readouterr()
    status, out, _ = run(capsys, *argv, "--engine", HOSTILE + "ExitsInRelu")
    assert status == 1
    assert "relu — ended the engine's process: called sys.exit(0)" in " ".join(out.split())
