"""What checking forward mode costs (issue 49: a torch campaign with every mode at most 3x today's).

The same random graphs checked by `check_graph` on torch, JAX and HIPS autograd with their forward
mode and with it switched off (the same adapter with `forward_mode = False`: reverse mode alone,
as before forward mode was checked), the two taking turns chunk by chunk in one process so that
both see the same load. Prints the seconds of each and their ratio.

    python benchmarks/bench_forward_mode.py                 # about two minutes
    python benchmarks/bench_forward_mode.py --graphs 40     # a quick look

Nothing is asserted: the goal is printed beside the figures.

Not a pytest-benchmark benchmark: it sets two configurations of one check side by side over many
graphs, taking turns, and prints their ratio; today's per-graph check alone is
`test_check_per_graph.py`'s.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.compare import check_graph

ENGINES = (("torch", False), ("torch", True), ("autograd", False), ("jax", False))
GOAL = 3.0


def reverse_only(engine):
    """The same adapter with its forward mode switched off."""
    cls = type(engine)
    return type(f"{cls.__name__}ReverseOnly", (cls,), {"forward_mode": False})()


def timed(engine, graphs) -> float:
    start = time.process_time()
    for seed, graph in enumerate(graphs):
        check_graph(graph, engine, seed=seed)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=150)
    parser.add_argument("--chunks", type=int, default=5)
    args = parser.parse_args()
    print(f"{'engine':<16} {'graphs':>6} {'reverse s':>10} {'both modes s':>13} {'ratio':>6}")
    for name, tensor in ENGINES:
        if importlib.util.find_spec(name) is None:
            print(f"{name:<16} not installed")
            continue
        both = load_engine(name if not tensor else "torch")
        alone = reverse_only(both)
        rng = np.random.default_rng(0)
        ops = sorted(both.ops) if tensor else None
        graphs = [random_graph(rng, ops=ops, tensor=tensor, points=4) for _ in range(args.graphs)]
        timed(both, graphs[:3]), timed(alone, graphs[:3])  # imports and first compilations apart
        size = max(1, len(graphs) // args.chunks)
        seconds = {"alone": 0.0, "both": 0.0}
        for start in range(0, len(graphs), size):
            chunk = graphs[start : start + size]
            seconds["alone"] += timed(alone, chunk)
            seconds["both"] += timed(both, chunk)
        label, ratio = f"{name}{' tensor' if tensor else ''}", seconds["both"] / seconds["alone"]
        figures = f"{seconds['alone']:>10.2f} {seconds['both']:>13.2f} {ratio:>5.2f}x"
        print(f"{label:<16} {len(graphs):>6} {figures}")
    print(f"goal: each ratio at most {GOAL:g}x (CPU seconds of the checks)")


if __name__ == "__main__":
    main()
