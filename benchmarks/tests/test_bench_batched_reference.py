"""The batching experiment computes what the harness's per-graph references compute: the same
numbers up to the rounding of a different summation order (no timing is asserted)."""

from __future__ import annotations

import pytest
from bench_scripts import script

bench = script("bench_batched_reference")


@pytest.mark.parametrize("points", [1, 4])
def test_batched_references_equal_the_per_graph_ones_up_to_rounding(points: int) -> None:
    runs = bench.runs_of(128, points, seed=5)
    together = bench.batched(runs, 48)  # batches of 48, 48 and 32 graphs
    compared = [bench.deviation(run.torch(), result) for run, result in zip(runs, together)]
    assert max(worst for _, worst in compared) < 1e-10
    assert sum(same for same, _ in compared) >= len(runs) // 5  # many are the same to the bit


def test_a_wrong_number_is_a_deviation() -> None:
    (run,) = bench.runs_of(1, 1, seed=5)
    result = run.torch()
    moved = bench.TorchResult(result.forward + 1e-6, result.grads, result.hvp)
    assert bench.deviation(result, moved) == (
        False,
        pytest.approx(1e-6 / max(1.0, abs(result.forward).max())),
    )
