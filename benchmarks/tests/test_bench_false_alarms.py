"""bench_false_alarms resumes from its results file and sums only the parts asked for now."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from bench_scripts import script

bench = script("bench_false_alarms")


def test_the_summary_counts_the_parts_asked_for_and_a_part_of_another_size_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "false-alarms.json"
    earlier = [  # a smaller run on the same seeds, and one on other seeds
        {"kind": "scalar", "seed": 5, "graphs": 10, "false_alarms": 1, "graphs_with_settled_points": 0},
        {"kind": "scalar", "seed": 9, "graphs": 50, "false_alarms": 7, "graphs_with_settled_points": 0},
    ]
    results.write_text(json.dumps(earlier))
    ran = []

    def run_part(kind: str, graphs: int, seed: int, jobs: int) -> dict:
        ran.append((kind, seed, graphs))
        return {
            **dict.fromkeys(("settled_points", "seconds"), 0),
            "kind": kind,
            "seed": seed,
            "graphs": graphs,
            "false_alarms": 0,
            "graphs_with_settled_points": 1,
        }

    monkeypatch.setattr(bench, "run_part", run_part)
    argv = ["bench_false_alarms.py", "--scalar", "40", "--tensor", "0", "--parts", "2", "--seed", "5"]
    monkeypatch.setattr(sys, "argv", [*argv, "--results", str(results)])
    bench.main()
    assert ran == [("scalar", 5, 20), ("scalar", 6, 20)]
    assert "      40  scalar                           2             0" in capsys.readouterr().out
    bench.main()  # everything asked for is in the file now: nothing runs again
    assert len(ran) == 2


def test_other_engines_run_on_their_own_kind_of_graph_and_their_bug_findings_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = []

    def run_part(kind: str, graphs: int, seed: int, jobs: int, engine: str | None = None) -> dict:
        ran.append((engine, kind, seed, graphs))
        finding = {"title": "add ∘ div — wrong gradient", "graphs": 2, "problem": "engine 1e-16, torch 0.0"}
        return {
            **dict.fromkeys(("settled_points", "seconds", "graphs_with_settled_points"), 0),
            "engine": engine,
            "kind": kind,
            "seed": seed,
            "graphs": graphs,
            "false_alarms": 2,
            "bug_findings": [finding] if engine and engine.endswith("PathSum") else [],
        }

    monkeypatch.setattr(bench, "run_part", run_part)
    results = str(tmp_path / "out.json")
    argv = ["--engines", "reordered", "--scalar", "20", "--tensor", "4", "--parts", "2", "--seed", "7"]
    monkeypatch.setattr(sys, "argv", ["bench_false_alarms.py", *argv, "--results", results])
    bench.main()
    spec = "gradcheck.testing.reordered_engines:"
    assert (spec + "PathSum", "scalar", 8, 10) in ran and (
        spec + "ExplicitJacobianTensor",
        "tensor",
        7,
        2,
    ) in ran
    assert len(ran) == 2 * len(bench.ENGINE_SETS["reordered"])
    out = capsys.readouterr().out
    assert "      20  scalar                           0             4         2  " + spec + "PathSum" in out
    assert "PathSum seed 7: add ∘ div — wrong gradient (2 graphs)\n      engine 1e-16, torch 0.0" in out
