"""The gate's input: its arguments and the baseline's shape are checked before any campaign runs,
and figures that differ only in their last bits read "unchanged"."""

from __future__ import annotations

import json
import math

import pytest

from gradcheck.campaign import regression_gate, verdict, workers
from gradcheck.campaign.baseline import SCHEMA_VERSION, load_baseline
from gradcheck.campaign.report_markdown import gate_markdown
from gradcheck.cli import main

FIGURES = {"graphs": 5, "failures": 0, "failing_graphs": [], **dict.fromkeys(verdict.FLOORS, 2.5e-15)}
SETTINGS = regression_gate.part_for("minigrad").recorded_settings()
FINDING = {"signature": ["exception", ["div"], "gradient", "ZeroDivisionError"], "title": "div", "graphs": 1}


def good_baseline() -> dict:
    part = {
        "settings": dict(SETTINGS),
        "totals": {"graphs": 5, "failed": 0},
        "ops": {"add": dict(FIGURES)},
        "findings": [dict(FINDING)],
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "factor": 10.0,
        "floors": verdict.FLOORS,
        "parts": {"scalar": part},
    }


@pytest.fixture
def no_campaign(monkeypatch):
    """Fail the test if the gate gets as far as running a campaign."""

    def refuse(*args, **kwargs):
        raise AssertionError("a campaign ran before the input was checked")

    monkeypatch.setattr(regression_gate, "run_parts", refuse)


def malformed(data: dict, where: str, value: object) -> dict:
    """`data` with the field at dotted path `where` set to `value` (or removed when value is ...)."""
    *parents, last = where.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    key = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return data


@pytest.mark.parametrize(
    ("where", "value", "field", "expected"),
    [
        ("parts", [], "parts", "a non-empty object of campaign parts"),
        ("parts", {}, "parts", "a non-empty object of campaign parts"),
        ("parts.scalar", {}, "parts.scalar.settings", "a value"),
        ("parts.scalar", [1], "parts.scalar", "an object with settings, ops and findings"),
        ("parts.scalar.settings", "x", "parts.scalar.settings", "an object"),
        ("parts.scalar.settings.seed", ..., "parts.scalar.settings.seed", "a value"),
        ("parts.scalar.settings.seed", -1, "parts.scalar.settings.seed", "a non-negative integer"),
        ("parts.scalar.settings.dtype", "float16", "parts.scalar.settings.dtype", "one of"),
        ("parts.scalar.settings.tensor", "no", "parts.scalar.settings.tensor", "true or false"),
        ("parts.scalar.settings.graphs", 0, "parts.scalar.settings.graphs", "a positive integer"),
        ("parts.scalar.settings.engine", "", "parts.scalar.settings.engine", "an engine name"),
        ("parts.scalar.findings", ..., "parts.scalar.findings", "a value"),
        ("parts.scalar.findings", {}, "parts.scalar.findings", "a list of findings"),
        ("parts.scalar.findings.0", "x", "parts.scalar.findings[0]", "an object with signature and title"),
        ("parts.scalar.findings.0.signature", "s", "parts.scalar.findings[0].signature", "a list"),
        ("parts.scalar.findings.0.title", ..., "parts.scalar.findings[0].title", "a value"),
        ("parts.scalar.ops.add.failures", 1.5, "parts.scalar.ops.add.failures", "a non-negative integer"),
        ("parts.scalar.ops", None, "parts.scalar.ops", "an object of per-op figures"),
        ("parts.scalar.ops.add", 3, "parts.scalar.ops.add", "an object of figures"),
        ("parts.scalar.ops.add.graphs", -1, "parts.scalar.ops.add.graphs", "a non-negative integer"),
        (
            "parts.scalar.ops.add.p99_rel_err_torch",
            "abc",
            "parts.scalar.ops.add.p99_rel_err_torch",
            "a number",
        ),
        (
            "parts.scalar.ops.add.p50_rel_err_numeric",
            ...,
            "parts.scalar.ops.add.p50_rel_err_numeric",
            "a value",
        ),
        ("parts.scalar.ops.add.p99_forward_err", True, "parts.scalar.ops.add.p99_forward_err", "a number"),
    ],
)
def test_a_baseline_of_the_wrong_shape_is_exit_2_naming_file_and_field_before_any_campaign(
    tmp_path, capsys, no_campaign, where, value, field, expected
):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(malformed(good_baseline(), where, value)))
    assert main(["gate", "--engine", "minigrad", "--baseline", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"gradcheck: error: {path}: field {field}: expected {expected}")


def test_a_well_shaped_baseline_with_non_finite_and_missing_figures_loads(tmp_path):
    data = good_baseline()
    data["parts"]["scalar"]["ops"]["add"].update(p50_rel_err_torch="nan", p99_rel_err_torch=None)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(data))
    assert load_baseline(path, verdict.FLOORS) == data


@pytest.mark.parametrize(
    "argv",
    [["--graphs", "-5"], ["--graphs", "0"], ["--jobs", "-3"], ["--jobs", "0"]],
)
def test_counts_that_are_not_positive_are_exit_2_before_any_campaign(argv, capsys, no_campaign):
    with pytest.raises(SystemExit) as exit_info:
        main(["gate", "--engine", "minigrad", "--baseline", "b.json", *argv])
    assert exit_info.value.code == 2
    assert f"{argv[0]}: expected a positive integer, got {argv[1]}" in capsys.readouterr().err


def test_more_jobs_than_cpus_are_lowered_with_a_note(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    used = []

    def record_jobs(parts, jobs, announce=None, runner=None):
        used.append(jobs)
        raise regression_gate.CampaignError("stop here")

    monkeypatch.setattr(regression_gate, "run_parts", record_jobs)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(good_baseline()))
    assert main(["gate", "--engine", "minigrad", "--baseline", str(path), "--jobs", "1000"]) == 2
    assert used == [2]
    assert "gate: note: --jobs 1000 lowered to 2" in capsys.readouterr().err


def last_bits(x: float, ulps: int) -> float:
    """x moved by `ulps` units in the last place."""
    for _ in range(abs(ulps)):
        x = math.nextafter(x, math.inf if ulps > 0 else -math.inf)
    return x


@pytest.mark.parametrize("ulps", [1, -2, 3, -4])
def test_figures_that_differ_in_their_last_bits_are_unchanged(ulps):
    before = good_baseline()
    after = json.loads(json.dumps(before))
    for metric in verdict.FLOORS:
        after["parts"]["scalar"]["ops"]["add"][metric] = last_bits(FIGURES[metric], ulps)
    outcome = verdict.compare(before, after, expected_ops=["add"])
    assert not outcome.problems and [v.changed for v in outcome.verdicts] == [False]
    assert "1 op rows compared: 0 failed, 0 changed within limits, 1 unchanged." in gate_markdown(outcome)


def test_a_difference_above_the_noise_floor_is_a_change():
    before = good_baseline()
    after = json.loads(json.dumps(before))
    after["parts"]["scalar"]["ops"]["add"]["p99_rel_err_torch"] = 2.5e-15 * (1 + 1e-6)
    outcome = verdict.compare(before, after, expected_ops=["add"])
    assert [v.changed for v in outcome.verdicts] == [True]


def test_the_noise_floor_is_a_few_ulps_or_a_relative_1e_9():
    assert verdict.within_noise(1.0, 1.0 + 0.9e-9) and not verdict.within_noise(1.0, 1.0 + 1.1e-9)
    assert verdict.within_noise(0.0, 0.0) and not verdict.within_noise(0.0, 1e-300)
    tiny = 5e-324  # subnormal: 1e-9 relative is below one ulp, the ulps decide
    assert verdict.within_noise(tiny, 4 * tiny) and not verdict.within_noise(tiny, 6 * tiny)
