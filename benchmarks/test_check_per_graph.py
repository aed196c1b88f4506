"""The harness's per-graph check under pytest-benchmark, beside its floor: `check_graph` on
minigrad (values, gradients and a Hessian-vector product against torch, both against central
differences, each entry judged by its rounding bound) against torch's reference pass alone on the
same graphs (forward, gradient and double backward: what any check against torch must pay).

    pytest benchmarks/test_check_per_graph.py --benchmark-only

Twenty 30-node scalar graphs a round, at one point and at 16 points; each K is a group whose two
rows are today's check and the floor, with pytest-benchmark's ratio between them. Against an
older commit of the harness (two trees cannot be imported in one process) the comparison is
`bench_throughput.py`'s.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.parity.compare import check_graph
from gradcheck.parity.runs import ScalarRun

pytest.importorskip("torch")

GRAPHS = 20
NODES = 30


@pytest.fixture(scope="module")
def minigrad():
    """minigrad's adapter, after torch's first autograd calls (10x slower: lazy kernel setup)."""
    adapter = load_engine("minigrad")
    warm = np.random.default_rng(99)
    for i in range(60):
        check_graph(random_graph(warm, ops=sorted(adapter.ops), points=4), adapter, seed=i)
    return adapter


def graphs(adapter, points):
    sizes = Sizes(nodes=(NODES, NODES), deep_every=0)
    rng = np.random.default_rng(1)
    return [random_graph(rng, ops=sorted(adapter.ops), points=points, sizes=sizes) for _ in range(GRAPHS)]


def check_all(adapter, batch):
    return [check_graph(graph, adapter, seed=i, second_order=True) for i, graph in enumerate(batch)]


def torch_alone(runs):
    return [run.torch() for run in runs]


@pytest.mark.parametrize("points", [1, 16])
def test_the_check_of_a_graph(benchmark, minigrad, points):
    benchmark.group = f"harness: {GRAPHS} graphs of {NODES} nodes, {points} point(s), with H·v"
    batch = graphs(minigrad, points)
    checks = benchmark(check_all, minigrad, batch)
    assert all(c.passed for c in checks)
    assert sum(c.points_checked for c in checks) > GRAPHS * points // 2


@pytest.mark.parametrize("points", [1, 16])
def test_the_floor_torchs_reference_pass_alone(benchmark, minigrad, points):
    benchmark.group = f"harness: {GRAPHS} graphs of {NODES} nodes, {points} point(s), with H·v"
    batch = graphs(minigrad, points)
    runs = [ScalarRun(graph, points, np.random.default_rng(i), hvp=True) for i, graph in enumerate(batch)]
    results = benchmark(torch_alone, runs)
    assert [r.grads.shape for r in results] == [(graph.n_inputs, points) for graph in batch]
    assert all(r.hvp is not None for r in results)
