"""Reports and baselines written before problems were records (report.json schema 1, by main at
d176279: the files in data/schema1) are still read: their findings come back with the same title,
tier and fix, `gradcheck replay` replays them and `gradcheck gate` gates against such a baseline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradcheck.campaign.earlier_schema import problem_from_sentence
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.report_json import SCHEMA_VERSION, json_safe, load_report
from gradcheck.engines.origin import FrameKind, Producer
from gradcheck.parity.problem import What

DATA = Path(__file__).parent / "data" / "schema1"
REPORTS = sorted(DATA.glob("*_report.json"))
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_a_schema_1_report_is_read_with_the_same_titles_tiers_and_fixes(path):
    report = load_report(path)
    assert report["schema_version"] == 1 < SCHEMA_VERSION
    assert report["findings"]
    for entry in report["findings"]:
        finding = Finding.from_dict(entry)
        assert (finding.title, finding.tier, finding.fix) == (
            entry["title"],
            entry["tier"],
            entry.get("fix", ""),
        )
        assert [str(p) for p in finding.problems] == entry["problems"]
        assert json_safe(finding.to_dict().get("extra", {})) == entry.get("extra", {}), "as written"


def test_a_schema_1_adapter_fault_is_read_as_the_adapters_exception():
    sentence = (
        "point 0 (x0=2.89): adapter raised AttributeError: 'Value' object has no attribute 'sigmoid' "
        "(in gradcheck's default spelling)"
    )
    problem = problem_from_sentence(sentence)
    assert problem.what is What.EARLIER and str(problem) == sentence
    raised = problem.raised
    assert (raised.type, raised.producer, raised.frame.kind, raised.attribute) == (
        "AttributeError",
        Producer.ADAPTER,
        FrameKind.DEFAULT_SPELLING,
        "sigmoid",
    )
    engine = problem_from_sentence("point 1 (x0=3.5): engine raised OverflowError: exp")
    assert (engine.raised.type, engine.raised.producer) == ("OverflowError", Producer.ENGINE)
    assert problem_from_sentence("gradient of x0: engine 1.0, torch 2.0").raised is None


def _gradcheck(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


@pytest.mark.slow
def test_replay_replays_a_finding_of_a_schema_1_report(tmp_path):
    done = _gradcheck("replay", str(DATA / "raises_report.json"), "--finding", "0")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "still fails: exception" in done.stdout


@pytest.mark.slow
def test_the_gate_passes_against_a_baseline_written_before_records(tmp_path):
    baseline = json.loads((DATA / "baseline.json").read_text())
    assert baseline["parts"]["scalar"]["findings"], "the baseline accepts the engine's finding"
    done = _gradcheck(
        "gate",
        "--engine",
        "gradcheck.testing.kind_engines:ExpRaises",
        "--graphs",
        "30",
        "--baseline",
        str(DATA / "baseline.json"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
