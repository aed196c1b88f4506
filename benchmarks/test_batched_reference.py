"""Torch's reference of a graph as the harness computes it (one graph per torch pass) beside the
same references batched across graphs (`batched_reference.py`, issue 31's experiment), under
pytest-benchmark: 256 graphs of 30 nodes with H·v a round, at 1, 4 and 16 points, in batches of
64 and of 256.

    pytest benchmarks/test_batched_reference.py --benchmark-only

Each K is a group of three rows (one by one, batches of 64, batches of 256), with pytest-benchmark's
ratios; what batching changes in the numbers is `bench_batched_reference.py`'s.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from bench_batched_reference import batched, runs_of

GRAPHS = 256


@pytest.fixture(scope="module")
def warm():
    """torch's first autograd calls set kernels up: made before any round."""
    for run in runs_of(50, 4, seed=9):
        run.torch()


@pytest.mark.parametrize("batch", [1, 64, 256], ids=["one by one", "batches of 64", "batches of 256"])
@pytest.mark.parametrize("points", [1, 4, 16])
def test_reference(benchmark, warm, points, batch):
    benchmark.group = f"torch's reference of {GRAPHS} graphs of 30 nodes with H·v, {points} point(s)"
    runs = runs_of(GRAPHS, points)
    if batch == 1:
        results = benchmark(lambda: [run.torch() for run in runs])
    else:
        results = benchmark(batched, runs, batch)
    assert len(results) == GRAPHS
