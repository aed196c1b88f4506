"""`check_engine` from Python: the campaign of `gradcheck run` on the class itself, its result (the
verdict, the findings as records, the reports, the first screen as HTML and text), each finding's
replay, where the engine runs (spawned, forked or this process, said in a line), and bad input
refused naming what was passed."""

from __future__ import annotations

import json
import os
import sys

import pytest

import gradcheck
from gradcheck.campaign.pool import Inline
from gradcheck.campaign.settings import CampaignError
from gradcheck.campaign.supervisor import Supervisor
from gradcheck.cli import main
from gradcheck.engines.loading import UnknownEngineError, load_engine, spec_of
from gradcheck.notebook import check
from gradcheck.testing.broken_engines import TinyAdapter
from gradcheck.testing.tutorial_engines import TanhOneMinusT, TutorialValue
from gradcheck.testing.tutorial_mistakes import MISTAKES

MISTAKE = next(m for m in MISTAKES if m.engine == "TanhOneMinusT")
SMALL = {"graphs": 40, "edges": False, "progress": False}


@pytest.fixture(scope="module")
def checked():
    """A small check of the tutorial engine with tanh's derivative written 1 - t, in this process
    (conftest.py sets GRADCHECK_UNSUPERVISED=1)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADCHECK_UNSUPERVISED", "1")
        return gradcheck.check_engine(TanhOneMinusT, **SMALL)


def test_the_result_says_it_failed_and_what_to_fix_first(checked):
    assert checked.passed is False
    first = checked.first_to_fix
    assert first is not None and first.tier in MISTAKE.tiers and first.ops == (MISTAKE.op,)
    assert MISTAKE.named in first.title
    assert all(f.number == i for i, f in enumerate(checked.findings))
    assert checked.findings[first.number].record is checked.result.findings[first.number]


def test_the_first_screen_in_html_leads_with_the_verdict_and_the_top_finding(checked):
    html = checked._repr_html_()
    assert (
        html.index('class="verdict fail"')
        < html.index("What to fix first")
        < html.index('<div class="finding')
    )
    top = html.split('<div class="finding')[1]
    assert "x0 = TanhOneMinusT(" in top and f"result.findings[{checked.first_to_fix.number}].replay()" in top
    assert "body {" not in html and "<body" not in html, "a fragment that styles only itself"


def test_the_first_screen_as_text_is_the_command_lines_summary(checked):
    text = repr(checked)
    assert text.lstrip().startswith("gradcheck: the engine ran in this process")
    assert "FAIL:" in text and "tanh" in text and "x0 = TanhOneMinusT(" in text


def test_a_finding_replays_on_the_class_as_it_is(checked):
    replayed = checked.first_to_fix.replay()
    assert replayed.fixed is False and "still fails: wrong-gradient" in replayed.text
    assert replayed.number == checked.first_to_fix.number and "still fails" in replayed._repr_html_()


COUNTS = ("graphs", "passed", "failed", "findings", "failing_findings")


def summary(finding: dict) -> tuple:
    """What a finding is, apart from the figures of its example."""
    keys = ("title", "tier", "kind", "check", "ops", "phase", "graphs", "graph_indices")
    return tuple(str(finding.get(k)) for k in keys)


def test_the_same_campaign_and_report_files_as_gradcheck_run(tmp_path, capsys):
    spec = MISTAKE.spec
    ours = gradcheck.check_engine(spec, graphs=40, out=tmp_path / "ours", progress=False)
    assert main(["run", "--engine", spec, "--graphs", "40", "--out", str(tmp_path / "cli")]) == 1
    capsys.readouterr()
    mine, theirs = (json.loads((tmp_path / d / "report.json").read_text()) for d in ("ours", "cli"))
    assert ours.reports == (tmp_path / "ours" / "report.json", tmp_path / "ours" / "report.html")
    assert (tmp_path / "ours" / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert mine.keys() == theirs.keys() and mine["settings"] == theirs["settings"]
    assert [summary(f) for f in mine["findings"]] == [summary(f) for f in theirs["findings"]]
    # the figures alone may differ in their last bits: the tutorial's backward sums in set order
    assert {k: mine["totals"][k] for k in COUNTS} == {k: theirs["totals"][k] for k in COUNTS}
    assert (tmp_path / "ours" / "corpus").is_dir()


def test_an_adapter_instance_and_a_class_made_in_a_function_are_checked(capsys):
    adapter = gradcheck.check_engine(TinyAdapter(), **SMALL)
    assert adapter.result.settings.engine.startswith("object:TinyAdapter#")
    assert adapter.report["totals"]["failed"] == 0  # its one finding is of its graph code

    def lesson() -> type:
        class Value(TutorialValue):  # not reachable by its module and name: held by this process
            pass

        return Value

    held = gradcheck.check_engine(lesson(), **SMALL)
    assert held.result.settings.engine.startswith("object:Value#")
    assert held.first_to_fix.ops == ("pow_const",)  # the tutorial's own x ** 0 at x = 0


def test_an_object_held_by_another_process_is_refused_in_words():
    with pytest.raises(UnknownEngineError, match="only that process and its forked workers"):
        load_engine("object:Value#999")


def test_where_the_engine_runs(monkeypatch):
    monkeypatch.delenv("GRADCHECK_UNSUPERVISED")
    module, note = check.engine_runner(MISTAKE.spec, 1, 60)
    assert isinstance(module, Supervisor) and module._context.get_start_method() == "spawn" and note is None
    monkeypatch.setattr(check, "fork_is_safe", lambda: True)
    forked, note = check.engine_runner("__main__:Value", 1, 60)
    assert forked._context.get_start_method() == "fork" and note is None
    monkeypatch.setattr(check, "fork_is_safe", lambda: False)
    inline, note = check.engine_runner("__main__:Value", 1, 60)
    assert isinstance(inline, Inline) and note.count("\n") == 0 and "on Linux only" in note
    for runner in (module, forked, inline):
        runner.close()


@pytest.mark.supervised
@pytest.mark.skipif(not check.fork_is_safe(), reason="workers are forked on Linux only")
def test_a_class_of_main_reaches_workers_forked_from_this_process(monkeypatch):
    made_in: set[int] = set()

    class Value(TanhOneMinusT):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made_in.add(os.getpid())

    Value.__qualname__, Value.__module__ = "Value", "__main__"  # as a notebook's cell defines it
    monkeypatch.setattr(sys.modules["__main__"], "Value", Value, raising=False)
    assert spec_of(Value) == "__main__:Value"
    result = gradcheck.check_engine(Value, **SMALL)
    assert result.notes == () and made_in == set(), "every Value was made in a forked worker"
    assert result.first_to_fix.ops == (MISTAKE.op,)
    assert result.first_to_fix.replay().fixed is False


@pytest.mark.parametrize(
    ("engine", "arguments", "error", "words"),
    [
        (
            TanhOneMinusT(1.0),
            {},
            TypeError,
            "got an instance of TanhOneMinusT .*pass the class TanhOneMinusT itself",
        ),
        (42, {}, TypeError, r"got an instance of int \(42\)"),
        (TanhOneMinusT, {"graphs": 0}, ValueError, "graphs must be an integer of at least 1, got 0"),
        (TanhOneMinusT, {"conventions": "mine"}, ValueError, r"conventions must be one of .*got 'mine'"),
        (TanhOneMinusT, {"ops": []}, ValueError, "ops must be op names"),
        (TanhOneMinusT, {"ops": "tanh,cosh"}, CampaignError, r"unknown op\(s\) \['cosh'\]"),
    ],
)
def test_bad_input_is_refused_naming_what_was_passed(engine, arguments, error, words):
    with pytest.raises(error, match=words):
        gradcheck.check_engine(engine, **{**SMALL, **arguments})


def test_progress_on_a_terminal_is_the_command_lines_bars(capsys):
    gradcheck.check_engine(TinyAdapter(), graphs=20, edges=False, structure=False)
    assert "checking graphs" in capsys.readouterr().err
