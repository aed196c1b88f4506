"""bench_throughput's figures and goal lines, from rows as its processes give them (no timing is
asserted), and one real campaign of this tree on the planted engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_scripts import script

bench_throughput = script("bench_throughput")
BEFORE = Path("/before")


def row(graphs: float, wall: float, generation: float, numeric: float, torch: float, engine: float) -> dict:
    return {
        "checked": graphs,
        "wall": wall,
        "generation": generation,
        "numeric": numeric,
        "torch": torch,
        "engine": engine,
    }


def test_the_rates_give_each_ks_median_ratio_its_goal_and_each_trees_split_per_graph(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = {
        1: {
            BEFORE: [row(10, 1.0, 0.1, 0.1, 0.5, 0.3)] * 3,
            bench_throughput.REPO: [row(10, 0.4, 0.1, 0.1, 0.1, 0.1)] * 3,
        },
        16: {
            BEFORE: [row(160, 1.0, 0.2, 0.2, 0.4, 0.2)] * 3,
            bench_throughput.REPO: [row(160, 0.8, 0.2, 0.2, 0.2, 0.2)] * 3,
        },
    }
    bench_throughput.print_rates(rows, BEFORE, "7dfac76")
    out = capsys.readouterr().out
    assert "K=1   7dfac76 10 graphs/s, now 25: median ratio 2.50x over 3 chunks (goal ≥ 2.5x), met" in out
    assert "K=16  7dfac76 160 graph instances/s, now 200: median ratio 1.25x" in out and "missed" in out
    torch_row = next(line for line in out.splitlines() if line.strip().startswith("torch"))
    # ms per graph: K=1 0.5 s / 10 graphs and 0.1 s / 10; K=16 0.4 s / 10 graphs and 0.2 s / 10
    assert [float(x) for x in torch_row.split()[1:]] == [50.0, 10.0, 40.0, 20.0]


@pytest.mark.slow
def test_a_campaign_reports_its_seconds_and_its_check_and_blame_apart() -> None:
    figures = bench_throughput.campaign(bench_throughput.REPO, 0.1, graphs=20)
    assert set(figures) == {"wall", "seconds", "check", "blame", "structure", "failed"}
    assert figures["failed"] > 0  # mul's derivative 10% off fails graphs
    assert 0 < figures["check"] < figures["seconds"] < figures["wall"]
    assert 0 < figures["structure"] < figures["seconds"]
