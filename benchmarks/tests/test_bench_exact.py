"""bench_exact times the exact reference beside torch's on the same graphs (no timing is asserted)."""

from __future__ import annotations

from bench_scripts import script

from gradcheck.graphs.generate import Sizes

bench = script("bench_exact")


def test_each_way_is_timed_on_the_same_graphs_and_reported_side_by_side() -> None:
    timing = bench.measure(False, Sizes(nodes=(4, 4), deep_every=0), graphs=2, seed=1)
    assert timing.nodes == 4.0
    assert min(timing.torch, timing.exact, timing.again, timing.gradients_only) > 0
    assert 0.9 <= timing.settled <= 1.0
    table = bench.report({"scalar, 4 nodes": timing})
    assert "scalar, 4 nodes" in table and "10k on 2 cores" in table and "x" in table.splitlines()[1]
