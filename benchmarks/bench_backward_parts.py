"""Where minigrad's scalar backward pass goes, beside micrograd's whole backward pass.

On micrograd's demo network (the graph of `bench_scalar.py`), the garbage collector off, it times
minigrad's two walks separately (the topological order, and the propagation that also adds into
`.grad`) and micrograd's `backward()`, the engines alternating round by round, and prints
microseconds per node and the ratio.

    python benchmarks/bench_backward_parts.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import gc
import time

from rich.console import Console
from rich.table import Table
from scalar_workloads import ENGINES, mlp_graph, mlp_numbers

from minigrad import value_backward


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=40, help="timed rounds per engine (default 40)")
    args = parser.parse_args()
    minigrad_engine, micrograd_engine = ENGINES
    build_minigrad, _ = mlp_graph(minigrad_engine, mlp_numbers())
    build_micrograd, _ = mlp_graph(micrograd_engine, mlp_numbers())
    clock = time.process_time
    spent = {"order": 0.0, "propagation": 0.0, "micrograd": 0.0}
    nodes = 0
    gc.disable()
    try:
        for _ in range(args.rounds):
            out = build_minigrad()
            t0 = clock()
            order = value_backward.topological_order([out], False)
            t1 = clock()
            out._g = 1.0
            value_backward.propagate_floats(order, False, into_grad=True)
            t2 = clock()
            spent["order"] += t1 - t0
            spent["propagation"] += t2 - t1
            nodes += len(order)
            del out, order
            out = build_micrograd()
            t0 = clock()
            out.backward()
            spent["micrograd"] += clock() - t0
            del out
            gc.collect()
    finally:
        gc.enable()
    per_node = {part: seconds / nodes * 1e6 for part, seconds in spent.items()}
    graph = f"{nodes // args.rounds:,} nodes"
    table = Table(title=f"backward pass, µs per node ({graph}, collector off, {args.rounds} rounds)")
    for column in ("part", "µs per node"):
        table.add_column(column)
    minigrad_total = per_node["order"] + per_node["propagation"]
    for part, value in [
        ("minigrad: topological order", per_node["order"]),
        ("minigrad: propagation (+ .grad)", per_node["propagation"]),
        ("minigrad: backward", minigrad_total),
        ("micrograd: backward", per_node["micrograd"]),
    ]:
        table.add_row(part, f"{value:.3f}")
    console = Console(width=110)
    console.print(table)
    console.print(f"minigrad's backward is {per_node['micrograd'] / minigrad_total:.2f}x micrograd's speed")


if __name__ == "__main__":
    main()
