"""`gradcheck run` leads with findings; `replay` re-runs one; `corpus add` adds one on purpose."""

import json
import shlex

import numpy as np
import pytest

from gradcheck.cli import main
from gradcheck.engines.micrograd import MicrogradAdapter
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.launcher import launcher
from gradcheck.parity import torch_reference

RELU_TWO = "gradcheck.testing.kind_engines:ReluTimesTwo"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def two_corpus_files(out) -> list[str]:
    """The run's corpus file (one per finding: the relu one) and a copy of it at another point."""
    (saved,) = sorted((out / "corpus").glob("*.json"))
    other = out / "another-point.json"
    data = json.loads(saved.read_text())
    data["inputs"][0]["value"] = 0.75 if data["inputs"][0]["value"] != 0.75 else 0.5
    other.write_text(json.dumps(data))
    return [str(saved), str(other)]


@pytest.fixture(scope="module")
def relu_two_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("relu-two")
    argv = ["run", "--engine", RELU_TWO, "--graphs", "60", "--ops", "relu,add,mul", "--out", str(out)]
    status = main(argv)
    return status, out


def test_the_report_leads_with_one_finding_and_saves_findings_under_out(relu_two_run):
    status, out = relu_two_run
    assert status == 1
    report = json.loads((out / "report.json").read_text())
    (finding,) = report["findings"]
    assert finding["kind"] == "wrong-gradient" and finding["ops"] == ["relu"]
    assert finding["graphs"] >= len(finding["graph_indices"]) > 10
    assert finding["repro"] == shlex.join(
        [*launcher(), "replay", str(out / "report.json"), "--engine", RELU_TWO, "--finding", "0"]
    )
    assert [n["op"] for n in finding["graph"]["nodes"]] == ["relu"]
    assert report["ops"]["add"]["failures"] == 0 and report["ops"]["mul"]["failures"] == 0
    assert all(f["finding"] == 0 for f in report["failures"])
    assert sorted(p.parent for p in (out / "corpus").glob("*.json")) != [], "findings go to OUT/corpus"
    assert "1 bug" in (out / "report.html").read_text()


def test_replay_shows_the_numbers_and_exits_1_while_it_fails_and_0_once_fixed(relu_two_run, capsys):
    _, out = relu_two_run
    status, text, _ = run(capsys, "replay", str(out / "report.json"), "--finding", "0")
    assert status == 1
    assert "engine" in text and "torch" in text and "oracle" in text and "grad x0" in text
    assert "still fails: wrong-gradient" in text
    status, text, _ = run(capsys, "replay", str(out / "report.json"), "--engine", "minigrad")
    assert status == 0 and "agrees" in text
    saved = sorted((out / "corpus").glob("*.json"))[0]
    assert run(capsys, "replay", str(saved))[0] == 1, "a corpus file names its engine"
    assert run(capsys, "replay", str(saved), "--engine", "minigrad")[0] == 0


def test_replay_of_something_unusable_exits_2_in_one_line(tmp_path, relu_two_run, capsys):
    _, out = relu_two_run
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": "minigrad-graph", "version": 1, "inputs": [], "nodes": [], "outputs": [0], "meta": 1}'
    )
    for argv in (
        ["replay", str(bad)],
        ["replay", str(out / "report.json"), "--finding", "7"],
        ["replay", str(tmp_path / "missing.json")],
    ):
        status, _, err = run(capsys, *argv)
        assert status == 2 and err.count("\n") == 1 and err.startswith("gradcheck: error:")


def test_corpus_add_validates_and_adds_each_graph_once(tmp_path, relu_two_run, capsys):
    _, out = relu_two_run
    target = tmp_path / "suite-corpus"
    target.mkdir()
    files = two_corpus_files(out)
    status, text, _ = run(capsys, "corpus", "add", *files, "--to", str(target))
    assert status == 0 and text.count("added:") == 2
    status, text, _ = run(capsys, "corpus", "add", files[0], "--to", str(target))
    assert status == 0 and "already in the corpus" in text
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    status, _, err = run(capsys, "corpus", "add", files[1], str(bad), "--to", str(tmp_path / "other"))
    assert status == 2 and "does not exist" in err
    (tmp_path / "other").mkdir()
    status, _, err = run(capsys, "corpus", "add", files[1], str(bad), "--to", str(tmp_path / "other"))
    assert status == 2 and str(bad) in err and "nothing was added" in err
    assert list((tmp_path / "other").iterdir()) == []


def test_corpus_add_writes_into_corpus_in_the_current_directory_unless_told(
    tmp_path, relu_two_run, capsys, monkeypatch
):
    _, out = relu_two_run
    files = two_corpus_files(out)
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    status, _, err = run(capsys, "corpus", "add", files[0], str(bad))
    assert status == 2 and "nothing was added" in err
    assert not (tmp_path / "corpus").exists(), "a malformed file: not even the directory is made"
    status, text, _ = run(capsys, "corpus", "add", *files)
    assert status == 0 and " ".join(text.split()).count("added: corpus/") == 2
    assert len(list((tmp_path / "corpus").glob("*.json"))) == 2
    assert "--to DIR" in run_help(capsys, "corpus", "add") and "./corpus" in run_help(capsys, "corpus", "add")


def run_help(capsys, *argv):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_an_unusable_corpus_directory_fails_before_the_campaign(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, out, err = run(
        capsys, "run", "--graphs", "5", "--out", str(tmp_path / "o"), "--corpus", str(blocker / "c")
    )
    assert status == 2 and "cannot save findings to --corpus" in err and "checking graphs" not in out


def test_a_clean_run_leaves_no_corpus_directory_behind(tmp_path, capsys):
    status, _, _ = run(capsys, "run", "--graphs", "5", "--ops", "tanh", "--out", str(tmp_path / "o"))
    assert status == 0 and not (tmp_path / "o" / "corpus").exists()


def test_subgradient_conventions_turn_a_kink_convention_into_a_note(tmp_path, capsys):
    engine = "gradcheck.testing.kind_engines:ReluHalfAtZero"
    argv = ["run", "--engine", engine, "--graphs", "10", "--ops", "relu,mul", "--no-save"]
    status, out, _ = run(capsys, *argv, "--out", str(tmp_path))
    assert status == 1 and "relu at 0 — convention at a kink" in out
    assert "FAIL: all 10 random graphs agree; 1 convention" in out  # what is right comes first
    status, out, _ = run(capsys, *argv, "--out", str(tmp_path), "--conventions", "subgradient")
    assert status == 0 and "PASS: all 10 graphs agree; 1 convention" in out


def test_the_micrograd_adapter_spells_its_repro_in_micrograds_api():
    graph = Graph(
        [Input("x0", 0.7), Input("x1", -1.2)],
        [OpNode("mul", (0, 1)), OpNode("relu", (2,))],
        [3],
        cotangent=[1.5],
    )
    code = MicrogradAdapter().snippet(graph)
    # the lone output itself, as the harness differentiates it, its gradients scaled by 1.5 after
    assert "from micrograd.engine import Value" in code and "v3.backward()" in code and "loss" not in code
    names: dict = {}
    exec(code, names)
    assert [names["x0"].grad, names["x1"].grad] == [0.0, 0.0]  # relu(-0.84) has slope 0
    graph.inputs[1] = Input("x1", 1.2)
    names = {}
    exec(MicrogradAdapter().snippet(graph), names)
    assert [names["x0"].grad, names["x1"].grad] == pytest.approx([1.2, 0.7])
    assert list(names["engine_grads"]) == pytest.approx([1.5 * 1.2, 1.5 * 0.7])


def test_the_micrograd_repro_runs_with_non_finite_inputs_and_constants():
    # relu(inf) and 2.5 - x1: a value micrograd must be given as float('inf'), and a constant operand
    graph = Graph(
        [Input("x0", float("inf")), Input("x1", 0.5)],
        [OpNode("relu", (0,)), OpNode("sub", (1,), consts=(Constant(0, 2.5),))],
        [2, 3],
    )
    code = MicrogradAdapter().snippet(graph)
    assert "float('inf')" in code and "2.5 - x1" in code
    names: dict = {}
    exec(code, names)
    assert names["v2"].data == float("inf") and names["v3"].data == 2.0
    assert [names["x0"].grad, names["x1"].grad] == [1.0, -1.0]


@pytest.mark.parametrize("target", ["torch", "minigrad"])
def test_a_second_derivative_repro_is_second_order_code(target):
    graph = Graph([Input("x0", 0.4)], [OpNode("tanh", (0,))], [1], cotangent=[1.0])
    names: dict = {}
    exec(graph_snippet(graph, target, second_order=True), names)
    one = np.array([[1.0]])
    expected = torch_reference.run_torch_batch(graph, [np.array([0.4])], one, one).hvp[0, 0]
    assert float(names["hvp"][0]) == pytest.approx(expected)


def test_an_edge_value_finding_replays_against_torch_with_its_inf_inputs(tmp_path, capsys):
    # micrograd's d(x/y)/dy at x = inf is nan where torch gives -inf: an edge-phase finding
    status, _, _ = run(capsys, "run", "--engine", "micrograd", "--graphs", "5", "--out", str(tmp_path))
    assert status == 1
    report = tmp_path / "report.json"
    findings = json.loads(report.read_text())["findings"]
    index = next(
        k
        for k, f in enumerate(findings)
        if f["phase"] == "edges" and f["kind"] == "nonfinite" and "inf" in json.dumps(f["graph"]["inputs"])
    )
    status, out, err = run(capsys, "replay", str(report), "--engine", "micrograd", "--finding", str(index))
    assert status == 1 and "still fails: nonfinite" in out and "torch" in out, err
    status, out, _ = run(capsys, "replay", str(report), "--engine", "minigrad", "--finding", str(index))
    assert status == 0 and "matches torch at this edge value" in out
