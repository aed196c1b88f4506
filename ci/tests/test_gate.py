"""The gradient-regression gate: passes on the committed figures, fails on planted regressions."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ci import gate
from gradcheck import campaign

ENGINES = textwrap.dedent(
    """
    import minigrad
    from minigrad.scalar_ops import Tanh
    from gradcheck.engines.minigrad_value import MinigradValue


    class SlightlyWrongTanh(Tanh):
        @staticmethod
        def backward(g, out, a):
            return (g * (1.0 - out * out) * (1.0 + 1e-6),)


    class BrokenTanh(MinigradValue):
        def apply(self, op, args, attrs):
            if op == "tanh":
                return minigrad.apply_op(SlightlyWrongTanh, args[0])
            return super().apply(op, args, attrs)


    class NoSin(MinigradValue):
        ops = MinigradValue.ops - {"sin"}
    """
)

SMALL = ["--graphs", "160", "--tensor-graphs", "60", "--jobs", "1"]  # enough to draw every op


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A baseline recorded once for this module with the small settings (as --update-baseline does)."""
    directory = tmp_path_factory.mktemp("gate")
    (directory / "gate_engines.py").write_text(ENGINES)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(directory))
        path = directory / "recorded.json"
        assert gate.main([*SMALL, "--baseline", str(path), "--update-baseline"]) == 0
        yield path.read_text()


@pytest.fixture
def baseline(recorded, tmp_path, monkeypatch):
    """A fresh copy of the recorded baseline, with the test engines importable."""
    (tmp_path / "gate_engines.py").write_text(ENGINES)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "baseline.json"
    path.write_text(recorded)
    return path


def test_regressed_applies_the_factor_above_a_floor():
    m = "p99_rel_err_torch"
    assert not gate.regressed(m, 0.0, 1e-17), "0 vs 1e-17 is noise under the floor"
    assert not gate.regressed(m, 1e-15, 9e-14)
    assert not gate.regressed(m, 1e-10, 9.9e-10)
    assert gate.regressed(m, 1e-10, 1.1e-9)
    assert gate.regressed(m, 0.0, 2e-13)
    assert gate.regressed(m, 1e-10, math.nan)
    assert not gate.regressed(m, math.nan, math.nan)
    assert not gate.regressed("p99_rel_err_numeric", 1e-10, 5e-9), "the oracle's floor is 1e-8"


def test_the_gate_compares_robust_relative_figures_only():
    assert set(gate.FLOORS) == {
        "p50_rel_err_torch",
        "p99_rel_err_torch",
        "p50_rel_err_numeric",
        "p99_rel_err_numeric",
        "p99_forward_err",
    }


def test_the_gate_passes_against_the_baseline_it_just_recorded(baseline, capsys):
    assert gate.main([*SMALL, "--baseline", str(baseline)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Gradient-regression gate: PASS")
    assert "0 failed, 0 changed within limits" in out
    assert "| scalar | `tanh` |" in out


def test_a_doctored_baseline_fails_the_gate_until_it_is_updated_on_purpose(
    baseline, tmp_path, capsys, monkeypatch
):
    data = json.loads(baseline.read_text())
    ops = data["parts"]["scalar"]["ops"]
    # A small healthy campaign may have no figure above the floors (it depends on the draws, so on
    # the registry's op set): lower the floors so that some figure is, whatever the ops.
    monkeypatch.setattr(gate, "FLOORS", {m: f * 1e-6 for m, f in gate.FLOORS.items()})
    # plant a regression: pretend the figure furthest above its floor was 1000 times smaller before
    op, metric = max(
        ((o, m) for o in ops for m in gate.FLOORS if ops[o].get(m) is not None),
        key=lambda om: float(ops[om[0]][om[1]]) / gate.FLOORS[om[1]],
    )
    after = float(ops[op][metric])
    assert after > gate.FLOORS[metric]
    ops[op][metric] = after / 1000
    baseline.write_text(json.dumps(data))
    summary = tmp_path / "summary.md"
    assert gate.main([*SMALL, "--baseline", str(baseline), "--summary", str(summary)]) == 1
    text = summary.read_text()
    assert text.startswith("## Gradient-regression gate: FAIL")
    (row,) = [line for line in text.splitlines() if f"| scalar | `{op}` |" in line]
    assert f"FAIL: {metric}" in row and "> max(10 x" in row
    assert "1 failed, 0 changed within limits" in text
    others = [line for line in text.splitlines() if line.startswith(("| scalar |", "| tensor |"))]
    assert all("FAIL" not in line for line in others if line != row)
    assert gate.main([*SMALL, "--baseline", str(baseline), "--update-baseline"]) == 0
    assert gate.main([*SMALL, "--baseline", str(baseline)]) == 0


def test_a_broken_engine_fails_the_gate_and_cannot_become_the_baseline(baseline, capsys):
    broken = [*SMALL, "--baseline", str(baseline), "--engine", "gate_engines:BrokenTanh"]
    assert gate.main(broken) == 1
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if "| scalar | `tanh` |" in line]
    assert "failing graph(s)" in row
    assert gate.main([*broken, "--update-baseline"]) == 1
    assert "not updating the baseline" in capsys.readouterr().err


def test_an_op_the_campaign_stops_drawing_fails_the_gate(baseline, capsys):
    assert gate.main([*SMALL, "--baseline", str(baseline), "--engine", "gate_engines:NoSin"]) == 1
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if "| scalar | `sin` |" in line]
    assert "no longer covered" in row


def test_a_registry_op_no_part_draws_fails_the_gate():
    figures = {"graphs": 5, "failures": 0, "failing_graphs": [], **dict.fromkeys(gate.FLOORS, 1e-15)}
    part = {"settings": {"seed": 1}, "ops": {"add": figures}}
    both = {"parts": {"scalar": part}}
    verdicts, problems = gate.compare(both, both, registry_ops=["add", "softplus"])
    assert problems == [
        "registry op(s) ['softplus'] were never drawn by the gate's campaign: raise its graph count"
    ]
    assert [(v.op, v.failed) for v in verdicts] == [("add", False)]
    assert "FAIL" in gate.markdown(verdicts, problems).splitlines()[0]


def test_figures_from_other_settings_are_not_compared(baseline, capsys):
    assert gate.main([*SMALL[:1], "170", *SMALL[2:], "--baseline", str(baseline)]) == 1
    assert "figures are not comparable" in capsys.readouterr().out


def test_a_missing_or_foreign_baseline_is_bad_input(tmp_path, capsys):
    assert gate.main([*SMALL, "--baseline", str(tmp_path / "none.json")]) == 2
    assert "no baseline yet; create it with --update-baseline" in capsys.readouterr().err
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"schema_version": 7}')
    assert gate.main([*SMALL, "--baseline", str(foreign)]) == 2
    assert "not a gate baseline" in capsys.readouterr().err


def test_the_committed_baseline_covers_every_registry_op_with_the_gate_settings():
    data = gate.load_baseline(gate.BASELINE)
    covered = {op for part in data["parts"].values() for op in part["ops"]}
    parts = [p for p in gate.PARTS if not p.tensor or campaign.tensor_ops()]
    assert sorted(data["parts"]) == sorted(p.name for p in parts), (
        "a tensor part exactly when tensor ops exist"
    )
    assert set(gate.registry_ops(parts)) <= covered
    for part in parts:
        recorded = data["parts"][part.name]["settings"]
        assert recorded == {
            "engine": part.engine,
            "graphs": part.graphs,
            "seed": part.seed,
            "points": part.settings(1).points,
            "tensor": part.tensor,
        }
        assert data["parts"][part.name]["totals"]["failed"] == 0


@pytest.mark.parametrize("launch", [["-m", "ci.gate"], ["ci/gate.py"]])
def test_the_gate_runs_as_a_module_and_as_a_script(launch, tmp_path):
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, *launch, "--baseline", str(tmp_path / "none.json")],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "no baseline yet; create it with --update-baseline" in done.stderr
