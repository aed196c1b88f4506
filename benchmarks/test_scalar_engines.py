"""Scalar engines side by side under pytest-benchmark: minigrad `Value`, PyPI micrograd `Value` and
torch 0-d float64 tensors, on micrograd's demo network and on a tanh chain (the graphs of
`scalar_workloads.py`), forward and backward, the garbage collector on as users run it.

    pytest benchmarks/test_scalar_engines.py --benchmark-only

Each group is one graph, its rows the three engines, with pytest-benchmark's ratios to the
fastest. All three run in this one process, so torch's objects are in the heap every collection
of micrograd's reference cycles walks: micrograd's figure here includes that. `bench_scalar.py`
measures each engine in a process of its own, which this fixture cannot.
"""

from __future__ import annotations

import micrograd.engine
import pytest
from scalar_workloads import (
    ENGINES,
    MicrogradTanhValue,
    chain_graph,
    mlp_graph,
    mlp_numbers,
    run_in_big_stack,
    torch_engine,
)

CHAIN = 10_000  # steps of y = tanh(y * w + b): 30,000 nodes
# The chain of the suite's plain run (--benchmark-disable: each benchmark executed once, as a
# test): deep enough for micrograd's recursive sort to need the big stack, short enough that its
# reference cycles beside torch's heap do not cost a CI minute (the 10,000 steps took 106 s).
SMOKE_CHAIN = 1_500


@pytest.fixture(params=["minigrad", "micrograd", "torch"])
def engine(request, monkeypatch):
    """The engine measured; micrograd's results get a tanh (`MicrogradTanhValue`) for the test only."""
    if request.param == "torch":
        pytest.importorskip("torch")
        return torch_engine()
    monkeypatch.setattr(micrograd.engine, "Value", MicrogradTanhValue)
    return next(e for e in ENGINES if e.name == request.param)


def forward_backward(engine, build):
    out = build()
    engine.backward(out)
    return out


def reference(workload):
    """minigrad's loss and gradients on the workload, which every engine must reproduce."""
    minigrad_engine = ENGINES[0]
    build, params = workload(minigrad_engine)
    out = forward_backward(minigrad_engine, build)
    return out.data, [p.grad for p in params]


@pytest.mark.benchmark(group="scalar: micrograd's demo MLP(2, [16, 16, 1]), forward + backward")
def test_demo_mlp(benchmark, engine):
    def workload(e):
        return mlp_graph(e, mlp_numbers())

    build, params = workload(engine)
    out = benchmark(forward_backward, engine, build)
    loss, grads = reference(workload)
    assert engine.data(out) == pytest.approx(loss, rel=1e-12)
    # the gradients accumulate over the rounds: compare their direction, not their size
    rounds = engine.grad(params[0]) / grads[0]
    assert [engine.grad(p) for p in params] == pytest.approx([g * rounds for g in grads], rel=1e-9)


@pytest.mark.benchmark(group=f"scalar: a {CHAIN:,}-step tanh chain, forward + backward")
def test_tanh_chain(benchmark, engine):
    steps = SMOKE_CHAIN if benchmark.disabled else CHAIN
    build, _ = chain_graph(engine, steps)
    # micrograd's topological sort recurses once per node: a deep stack, as bench_scalar.py gives it
    out = run_in_big_stack(lambda: benchmark(forward_backward, engine, build))
    assert engine.data(out) == pytest.approx(reference(lambda e: chain_graph(e, steps))[0], rel=1e-12)
