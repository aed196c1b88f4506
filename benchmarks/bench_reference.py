"""What `--reference exact` costs a campaign's check (issue 39): graphs per second of the whole
`check_graph` (engine, torch, central differences, bounds, and with the exact reference the exact
values) at a campaign's 4 points, against torch and against the exact values, on the same graphs.

Workloads: 30-node scalar graphs (minigrad) and tensor graphs as campaigns draw them
(minigrad-tensor), each in one process, CPU time (`process_time`: the machine's other load does
not count). The exact reference's cache of op values is emptied before its run, as a campaign's
worker starts with none.

Not a pytest-benchmark benchmark: the fixture's repeated rounds would time the exact reference's
cached repeats, not a campaign's first evaluation of each graph (as `bench_exact.py` says).
Nothing is asserted.

    python benchmarks/bench_reference.py               # about two minutes
    python benchmarks/bench_reference.py --graphs 20   # a quick look
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.parity import exact_jets
from gradcheck.parity.compare import check_graph

POINTS = 4  # a campaign's default --points
WORKLOADS: dict[str, tuple[str, bool, Sizes]] = {
    "scalar, 30 nodes": ("minigrad", False, Sizes(nodes=(30, 30), deep_every=0)),
    "tensor, as drawn": ("minigrad-tensor", True, Sizes()),
}


def seconds_per_graph(graphs: list[Graph], engine: EngineAdapter, reference: str) -> float:
    """CPU seconds per graph of checking each of `graphs` against `reference`."""
    exact_jets.clear_cache()
    start = time.process_time()
    for i, graph in enumerate(graphs):
        with np.errstate(all="ignore"):
            check_graph(graph, engine, seed=i, reference=reference)
    return (time.process_time() - start) / len(graphs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=100, help="graphs per workload (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"check_graph at {POINTS} points, gradients and H·v, CPU time per graph (one process)")
    print(f"{'workload':18} {'nodes':>5} {'torch graphs/s':>15} {'exact graphs/s':>15} {'ratio':>6}")
    for name, (spec, tensor, sizes) in WORKLOADS.items():
        engine = load_engine(spec)
        rng = np.random.default_rng(args.seed)
        graphs = [random_graph(rng, tensor=tensor, points=POINTS, sizes=sizes) for _ in range(args.graphs)]
        seconds_per_graph(graphs[:3], engine, "exact")  # warm-up: imports, mpmath's constants
        torch = seconds_per_graph(graphs, engine, "torch")
        exact = seconds_per_graph(graphs, engine, "exact")
        nodes = np.mean([len(g.nodes) for g in graphs])
        print(f"{name:18} {nodes:5.1f} {1 / torch:15.1f} {1 / exact:15.1f} {exact / torch:5.1f}x")


if __name__ == "__main__":
    main()
