"""The gradient-regression gate: passes on the figures it recorded, fails on planted regressions,
and refuses a baseline recorded for another engine or other settings as bad input."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from gradcheck.campaign import regression_gate, verdict
from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.report_markdown import gate_markdown
from gradcheck.cli.gate import run_parts_gate
from gradcheck.parity.kinds import Kind

# One engine name whose code changes between "builds": the environment picks the variant, the way
# a user's adapter stays `mypackage.adapter:Engine` while the engine under it changes.
ENGINES = textwrap.dedent(
    """
    import os

    import minigrad
    from minigrad.scalar_ops import Tanh
    from gradcheck.engines.minigrad_value import MinigradValue


    class SlightlyWrongTanh(Tanh):
        @staticmethod
        def backward(g, out, a):
            return (g * (1.0 - out * out) * (1.0 + 1e-7),)


    class Engine(MinigradValue):
        @property
        def ops(self):
            if os.environ.get("GATE_VARIANT") == "no-sin":
                return MinigradValue.ops - {"sin"}
            return MinigradValue.ops

        def apply(self, op, args, attrs):
            if op == "tanh" and os.environ.get("GATE_VARIANT") == "broken-tanh":
                return minigrad.apply_op(SlightlyWrongTanh, args[0])
            return super().apply(op, args, attrs)
    """
)

GRAPHS = 160  # enough to draw every scalar op


def part(graphs: int = GRAPHS) -> regression_gate.Part:
    return regression_gate.part_for("gate_engines:Engine", graphs=graphs)


def run(baseline, update=False, accept_findings=True, summary=None, graphs=GRAPHS) -> int:
    console = Console(width=80, highlight=False)
    return run_parts_gate(
        [part(graphs)], baseline, update, 1, console, accept_findings=accept_findings, summary_md=summary
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A baseline recorded once for this module (as --update-baseline does)."""
    directory = tmp_path_factory.mktemp("gate")
    (directory / "gate_engines.py").write_text(ENGINES)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(directory))
        patch.delenv("GATE_VARIANT", raising=False)
        path = directory / "recorded.json"
        assert run(path, update=True, accept_findings=False) == 0
        yield path.read_text()


@pytest.fixture
def baseline(recorded, tmp_path, monkeypatch):
    """A fresh copy of the recorded baseline, with the test engine importable."""
    (tmp_path / "gate_engines.py").write_text(ENGINES)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GATE_VARIANT", raising=False)
    path = tmp_path / "baseline.json"
    path.write_text(recorded)
    return path


def test_regressed_applies_the_factor_above_a_floor():
    m = "p99_rel_err_torch"
    assert not verdict.regressed(m, 0.0, 1e-17), "0 vs 1e-17 is noise under the floor"
    assert not verdict.regressed(m, 1e-15, 9e-14)
    assert not verdict.regressed(m, 1e-10, 9.9e-10)
    assert verdict.regressed(m, 1e-10, 1.1e-9)
    assert verdict.regressed(m, 0.0, 2e-13)
    assert verdict.regressed(m, 1e-10, math.nan)
    assert not verdict.regressed(m, math.nan, math.nan)
    assert not verdict.regressed("p99_rel_err_numeric", 1e-10, 5e-9), "the oracle's floor is 1e-8"


def test_the_gate_compares_robust_relative_figures_only():
    assert set(verdict.FLOORS) == {
        "p50_rel_err_torch",
        "p99_rel_err_torch",
        "p50_rel_err_numeric",
        "p99_rel_err_numeric",
        "p99_forward_err",
    }


def test_each_part_has_its_fixed_count_and_seed_and_float32_needs_tensor():
    assert regression_gate.part_for("micrograd") == regression_gate.Part(
        "scalar", "micrograd", False, 3000, 20240601
    )
    assert regression_gate.part_for("e", tensor=True, dtype="float32").name == "tensor-float32"
    with pytest.raises(regression_gate.CampaignError, match="--dtype float32 needs --tensor"):
        regression_gate.part_for("micrograd", dtype="float32")


def test_the_gate_passes_against_the_baseline_it_just_recorded(baseline, tmp_path, capsys):
    summary = tmp_path / "summary.md"
    assert run(baseline, summary=summary) == 0
    out = capsys.readouterr().out
    assert "gate: PASS: 18 op rows, 0 failed, 0 changed within limits" in out
    text = summary.read_text()
    assert text.startswith("## Gradient-regression gate: PASS")
    assert "0 failed, 0 changed within limits" in text
    assert "| scalar | `tanh` |" in text


def test_a_doctored_baseline_fails_the_gate_until_it_is_updated_on_purpose(
    baseline, tmp_path, capsys, monkeypatch
):
    data = json.loads(baseline.read_text())
    ops = data["parts"]["scalar"]["ops"]
    # A small healthy campaign may have no figure above the floors (it depends on the draws, so on
    # the registry's op set): lower the floors so that some figure is, whatever the ops.
    monkeypatch.setattr(regression_gate, "FLOORS", {m: f * 1e-6 for m, f in verdict.FLOORS.items()})
    # plant a regression: pretend the figure furthest above its floor was 1000 times smaller before
    op, metric = max(
        ((o, m) for o in ops for m in verdict.FLOORS if ops[o].get(m) is not None),
        key=lambda om: float(ops[om[0]][om[1]]) / verdict.FLOORS[om[1]],
    )
    after = float(ops[op][metric])
    assert after > verdict.FLOORS[metric]
    ops[op][metric] = after / 1000
    baseline.write_text(json.dumps(data))
    summary = tmp_path / "summary.md"
    assert run(baseline, summary=summary) == 1
    text = summary.read_text()
    assert text.startswith("## Gradient-regression gate: FAIL")
    (row,) = [line for line in text.splitlines() if f"| scalar | `{op}` |" in line]
    assert f"FAIL: {metric}" in row and "> max(10 x" in row
    assert "1 failed, 0 changed within limits" in text
    others = [line for line in text.splitlines() if line.startswith("| scalar |")]
    assert all("FAIL" not in line for line in others if line != row)
    assert f"FAIL scalar {op}: {metric}" in capsys.readouterr().out
    assert run(baseline, update=True) == 0
    assert run(baseline) == 0


def test_a_gradient_1e_7_off_fails_its_op_row_only_and_the_new_finding_is_the_first_line(
    baseline, capsys, monkeypatch
):
    monkeypatch.setenv("GATE_VARIANT", "broken-tanh")
    outcome = regression_gate.run_gate([part()], baseline, 1)
    assert [v.op for v in outcome.verdicts if v.failed] == ["tanh"], [v.reasons for v in outcome.verdicts]
    (row,) = [v for v in outcome.verdicts if v.failed]
    assert any("new finding: tanh — wrong gradient" in reason for reason in row.reasons), row.reasons
    assert len(outcome.verdicts) == 18 and not outcome.problems
    assert run(baseline) == 1
    out = capsys.readouterr().out
    assert out.startswith("new finding (scalar): tanh — wrong gradient ("), out[:200]
    assert "FAIL scalar tanh:" in out and "FAIL scalar add" not in out
    assert run(baseline, update=True, accept_findings=False) == 1
    out = capsys.readouterr().out
    assert "not updating the baseline: graphs fail their parity check" in out
    assert "accepted finding" not in out


def test_a_baseline_that_accepts_findings_passes_while_they_remain_and_once_they_are_gone(
    baseline, monkeypatch, capsys
):
    monkeypatch.setenv("GATE_VARIANT", "broken-tanh")
    assert run(baseline, update=True) == 0
    assert "accepted finding: tanh — wrong gradient" in capsys.readouterr().out
    recorded = json.loads(baseline.read_text())["parts"]["scalar"]["findings"]
    assert "tanh — wrong gradient" in [f["title"] for f in recorded]
    assert run(baseline) == 0
    assert f"{len(recorded)} finding(s) in the baseline, still present: " in capsys.readouterr().out
    monkeypatch.delenv("GATE_VARIANT")
    assert run(baseline) == 0, "a finding that is gone is good news, not a failure"
    assert "gone since the baseline (fixed? --update-baseline records it)" in capsys.readouterr().out


def test_an_op_the_campaign_stops_drawing_fails_the_gate(baseline, capsys, monkeypatch):
    monkeypatch.setenv("GATE_VARIANT", "no-sin")
    assert run(baseline) == 1
    assert "FAIL scalar sin: no longer covered" in capsys.readouterr().out


def test_an_op_the_engine_lists_but_no_graph_draws_fails_the_gate():
    figures = {"graphs": 5, "failures": 0, "failing_graphs": [], **dict.fromkeys(verdict.FLOORS, 1e-15)}
    part = {"settings": {"seed": 1}, "ops": {"add": figures}, "findings": []}
    both = {"parts": {"scalar": part}}
    outcome = verdict.compare(both, both, expected_ops=["add", "softplus"])
    assert outcome.problems == [
        "op(s) ['softplus'] were never drawn by the gate's campaign: raise its graph count"
    ]
    assert [(v.op, v.failed) for v in outcome.verdicts] == [("add", False)]
    assert not outcome.passed
    assert "FAIL" in gate_markdown(outcome).splitlines()[0]


def test_findings_are_compared_by_signature():
    base = {"parts": {"scalar": {"ops": {}, "findings": [{"signature": ["breakdown", ["div"], "", "pole"]}]}}}
    current = {"parts": {"scalar": {"ops": {}, "findings": []}}}
    graph = {"inputs": [], "nodes": [], "outputs": []}
    known = Finding(
        kind="exception",
        ops=("div",),
        check="gradient",
        graph=graph,
        problems=sentences(("engine raised X: a",)),
        region="pole",
    )
    other = Finding(kind="nonfinite", ops=("div",), check="gradient", graph=graph)
    assert known.signature == ("breakdown", ("div",), "", "pole")
    outcome = verdict.compare(base, current, [], {"scalar": [known, other]})
    assert [(f.finding.kind.value, f.accepted) for f in outcome.findings] == [
        ("exception", True),
        ("nonfinite", False),
    ]
    assert not outcome.passed


def test_findings_of_graphs_whose_shrinking_the_time_cap_cut_short_are_not_determined_not_failed():
    # the baseline has a pole finding of div; this run's shrinking of graph 7 hit its time cap, so
    # its finding (other) and the baseline's missing one say how fast the machine was, not the engine
    pole = {"signature": ["breakdown", ["div"], "", "pole"], "title": "div at its pole"}
    base = {"parts": {"scalar": {"ops": {}, "findings": [pole]}}}
    current = {"parts": {"scalar": {"ops": {"div": {"failing_graphs": [7, 8]}}, "findings": []}}}
    graph = {"inputs": [], "nodes": [], "outputs": []}
    other = Finding(kind="nonfinite", ops=("div",), check="gradient", graph=graph, graph_indices=(7,))
    judged = verdict.compare(base, current, [], {"scalar": [other]})
    assert not judged.passed and judged.gone == ["scalar: div at its pole"]
    capped = verdict.compare(base, current, [], {"scalar": [other]}, cut_short={"scalar": [7]})
    assert [f.finding for f in capped.findings] == [] and capped.gone == []
    assert len(capped.undetermined) == 3 and all(verdict.CUT_SHORT in line for line in capped.undetermined)
    assert [v.reasons for v in capped.verdicts] == [["1 failing graph(s) (8): no finding explains them"]]
    assert "not determined" in capped.summary() and capped.verdict_lines()[-1].startswith("not determined")


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (dict(graphs=GRAPHS + 10), f"graphs {GRAPHS} (this gate: {GRAPHS + 10})"),
        (dict(engine="micrograd"), "engine 'gate_engines:Engine' (this gate: 'micrograd')"),
    ],
)
def test_a_baseline_recorded_for_another_engine_or_settings_is_bad_input_before_any_campaign(
    baseline, monkeypatch, other, message
):
    monkeypatch.setattr(regression_gate, "run_parts", lambda *a, **k: pytest.fail("a campaign ran"))
    settings = {"engine": "gate_engines:Engine", "graphs": GRAPHS, **other}
    wanted = regression_gate.part_for(settings["engine"], graphs=settings["graphs"])
    with pytest.raises(regression_gate.CampaignError, match="was recorded with other settings") as error:
        regression_gate.run_gate([wanted], baseline, 1)
    assert message in str(error.value)
    tensor = regression_gate.part_for("minigrad-tensor", tensor=True)
    with pytest.raises(
        regression_gate.CampaignError, match=r"has part\(s\) \['scalar'\], this gate runs \['tensor'\]"
    ):
        regression_gate.run_gate([tensor], baseline, 1)


def test_a_missing_or_foreign_baseline_is_bad_input(tmp_path):
    with pytest.raises(
        regression_gate.CampaignError, match="no baseline yet; create it with --update-baseline"
    ):
        regression_gate.run_gate([part()], tmp_path / "none.json", 1)
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"schema_version": 7}')
    with pytest.raises(
        regression_gate.CampaignError, match=r"not a gate baseline of schema_version 2 \(found 7\)"
    ):
        regression_gate.run_gate([part()], foreign, 1)


# written by `gradcheck gate --update-baseline` of main at d53bb17, before an op's wrong numbers at
# ordinary inputs were one finding: its div has a wrong value and a value that is not a number apart
BEFORE_WRONG_NUMBERS_MERGED = Path(__file__).parent / "data" / "baseline_before_wrong_numbers_merged.json"


def test_a_baseline_written_before_wrong_numbers_merged_accepts_the_merged_finding():
    recorded = json.loads(BEFORE_WRONG_NUMBERS_MERGED.read_text())["parts"]["scalar"]["findings"]
    div = sorted(f["signature"][0] for f in recorded if f["signature"][1] == ["div"] and f["tier"] == "bug")
    assert div == ["wrong-type", "wrong-value"], "the earlier release kept them apart"
    parts = regression_gate.baseline_parts(
        BEFORE_WRONG_NUMBERS_MERGED, "gradcheck.testing.triage_engines:ReciprocalPowerOff"
    )
    outcome = regression_gate.run_gate(parts, BEFORE_WRONG_NUMBERS_MERGED, jobs=1)
    (merged,) = [f.finding for f in outcome.findings if f.finding.ops == ("div",) and f.finding.tier == "bug"]
    assert {Kind.WRONG_VALUE, Kind.WRONG_TYPE} <= set(merged.merged.kinds)
    assert outcome.new_findings == [] and outcome.gone == []
    assert outcome.passed


def test_earlier_signatures_of_an_ops_wrong_numbers_are_its_merged_identity():
    today = verdict.finding_identity(
        ["wrong-numbers", ["div"], "", "ordinary"], ["with a number on the left"]
    )
    for kind, check in (
        ("wrong-value", "forward"),
        ("wrong-gradient", "gradient"),
        ("wrong-type", "forward"),
    ):
        earlier = {"signature": [kind, ["div"], check, "ordinary"], "variant": ["with a number on the left"]}
        assert verdict.recorded_identity(earlier) == today
    apart = (
        ["exception", ["div"], "gradient", "ordinary"],  # raising is another fix
        ["wrong-value", ["div"], "forward", "tiny"],  # lost digits at tiny inputs are another rule
        ["convention", ["relu"], "gradient", "kink"],
    )
    for signature in apart:
        assert json.loads(verdict.finding_identity(signature)) == signature, "read as recorded"
    mul = verdict.finding_identity(["wrong-gradient", ["mul"], "gradient", "ordinary"])
    assert json.loads(mul) == ["wrong-numbers", ["mul"], "", "ordinary"], "another op's, its own"
