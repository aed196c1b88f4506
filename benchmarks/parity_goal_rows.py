"""Issue 14's two harness rows, measured in whatever tree is on PYTHONPATH: this one or 11812d8's.

30-node scalar graphs with second derivatives, checked three ways on one core: graph instances
at 16 points per graph and graphs at one point. `bench_parity.py` starts this script twice, on the
tree before issue 14 (extracted from git) and on the current one, and has the two processes take
turns chunk by chunk, so that both see the same load and the ratio is measured in one run.

    PYTHONPATH=<tree> python benchmarks/parity_goal_rows.py

After warming up it prints `ready`, then reads lines `K N` from stdin: it checks the next N graphs
of its stream at K points (one seeded stream per K, the same graphs in both trees) and prints one
JSON line {"checked": instances, "wall": seconds, "cpu": seconds, "generation": wall seconds of
them spent generating the graphs, "numeric", "torch", "engine": the checks' own split of their
time (central differences, torch, the engine with the comparison)}. An empty line ends it.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

try:  # the current layout
    from gradcheck.engines.loading import load_engine
    from gradcheck.graphs.generate import Sizes, random_graph
    from gradcheck.parity.compare import check_graph
except ImportError:  # 11812d8's layout (the same functions, in the modules of that time)
    from gradcheck.backends.base import load_engine  # type: ignore[no-redef]
    from gradcheck.generate import Sizes, random_graph  # type: ignore[no-redef]

    from gradcheck.parity import check_graph  # type: ignore[no-redef]

NODES = 30


def main() -> None:
    adapter = load_engine("minigrad")
    ops = sorted(adapter.ops)
    sizes = Sizes(nodes=(NODES, NODES), tensor_nodes=(NODES, NODES), deep_every=0)
    warm = np.random.default_rng(99)
    for i in range(120):  # torch's first ~100 autograd calls are 10x slower (lazy kernel setup)
        check_graph(random_graph(warm, ops=ops, points=4, sizes=sizes), adapter, seed=i, second_order=True)
    streams: dict[int, tuple[np.random.Generator, list[int]]] = {}
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        points, count = map(int, line.split())
        rng, index = streams.setdefault(points, (np.random.default_rng(1), [0]))
        checked, generation = 0, 0.0
        phases = {"numeric": 0.0, "torch": 0.0, "engine": 0.0}
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(count):
            began = time.perf_counter()
            graph = random_graph(rng, ops=ops, points=points, sizes=sizes)
            generation += time.perf_counter() - began
            result = check_graph(graph, adapter, seed=index[0], second_order=True)
            checked += result.points_checked
            for phase, seconds in getattr(result, "timings", {}).items():
                phases[phase] = phases.get(phase, 0.0) + seconds
            index[0] += 1
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        row = {"checked": checked, "wall": wall, "cpu": cpu, "generation": generation, **phases}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
