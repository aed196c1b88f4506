"""bench_parity's side-by-side protocol and the goal lines it prints (no timing is asserted)."""

from __future__ import annotations

import pytest
from bench_scripts import script

bench_parity = script("bench_parity")


@pytest.mark.slow
def test_the_goal_rows_process_reports_each_chunk_with_its_generation_time() -> None:
    process = bench_parity.start_rows_process(bench_parity.REPO)
    try:
        rows = [bench_parity.chunk_in(process, points, structures) for points, structures in ((4, 2), (1, 3))]
    finally:
        process.communicate("\n")
    assert process.returncode == 0
    for row, most in zip(rows, (8, 3)):
        assert 0 < row["checked"] <= most
        assert 0 < row["generation"] < row["wall"]


def test_the_goal_lines_give_the_median_ratio_and_its_ceiling_without_generation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = {
        "per_s": 1.0,
        "structures": 1.0,
        "total": 1.0,
        "generation": 0.2,
        "numeric": 0.1,
        "torch": 0.3,
        "engine": 0.4,
    }
    # (before, now, now without its generation) per chunk: medians 1.80x and 2.25x at K=16
    pairs = {
        16: [(1000.0, 1800.0, 2250.0)] * 3 + [(1000.0, 1700.0, 2100.0)] * 2,
        1: [(200.0, 300.0, 350.0)] * 5,
    }
    bench_parity.print_goals({16: rows, 1: rows}, 0.2, pairs)
    out = capsys.readouterr().out
    assert "K=16: graph instances/s, now vs 11812d8 side by side in 5 chunks" in out
    assert "median ratio 1.80x" in out and "missed" in out
    ceilings = [line for line in out.splitlines() if "if this tree's generation cost nothing" in line]
    assert [line.split()[0] for line in ceilings] == ["K=16:", "K=1:"]
    assert ceilings[0].endswith("2.25x") and ceilings[1].endswith("1.75x")
