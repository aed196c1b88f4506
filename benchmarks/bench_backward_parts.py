"""Where minigrad's scalar backward pass goes, beside micrograd's whole backward pass.

On micrograd's demo network (the graph of `bench_scalar.py`), the garbage collector off, it times
minigrad's two walks separately (the topological order, and the propagation that also adds into
`.grad`) and micrograd's `backward()`, the engines alternating round by round, and prints
microseconds per node and the ratio.

Beside them, one floor for each walk, measured on the same graphs (neither is the engine):
- reachability: every node visited once with the same marker, in no particular order; a
  topological order cannot cost less than this;
- the propagation with the math of the demo's ops (Mul, Add, ReLU) written into the loop, the
  rule call taken out; what the engine would gain by writing each rule a second time there.

    python benchmarks/bench_backward_parts.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from rich.console import Console
from rich.table import Table
from scalar_workloads import ENGINES, mlp_graph, mlp_numbers

from minigrad import value_backward
from minigrad.elementwise import Add, Mul, ReLU
from minigrad.value_backward import REACHED


def reach_every_node(root: Any) -> list[Any]:
    """The floor of the topological order: each node reached once, marked as the engine marks it."""
    seen: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node._g is not None:
            continue
        node._g = REACHED
        seen.append(node)
        a, b = node._a, node._b
        if a is not None and type(a) is not float and a._g is None:
            stack.append(a)
        if b is not None and type(b) is not float and b._g is None:
            stack.append(b)
    return seen


def check_inlinable(order: list[Any]) -> None:
    """`propagate_inlined` knows only the demo's rules, with a constant only on the right."""
    others = {node._rule for node in order} - {Add, Mul, ReLU, None}
    if others or any(type(node._a) is float for node in order):
        raise ValueError(f"propagate_inlined knows Add, Mul and ReLU (constants on the right), not {others}")


def propagate_inlined(order: list[Any]) -> None:
    """The floor of the propagation: the demo network's rules (Mul, Add, ReLU; two Values or a
    Value and a constant on the right) written into the loop, so no rule is called."""
    reached = REACHED
    for node in reversed(order):
        g = node._g
        node._g = None
        node.grad += g
        a, b, rule = node._a, node._b, node._rule
        if b is None:
            if rule is ReLU:
                grad = 0.0 if node.data <= 0 else g
                old = a._g
                a._g = grad if old is reached else old + grad
            continue  # (a leaf)
        if type(b) is float:
            grad = g * b if rule is Mul else g
            old = a._g
            a._g = grad if old is reached else old + grad
            continue
        if rule is Mul:
            grad_a, grad_b = g * b.data, g * a.data
        else:
            grad_a = grad_b = g
        old = a._g
        a._g = grad_a if old is reached else old + grad_a
        old = b._g
        b._g = grad_b if old is reached else old + grad_b


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
    spent = {"order": 0.0, "propagation": 0.0, "micrograd": 0.0, "reach": 0.0, "inlined": 0.0}
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
            out = build_minigrad()
            t0 = clock()
            reached = reach_every_node(out)
            t1 = clock()
            for node in reached:
                node._g = None
            order = value_backward.topological_order([out], False)
            check_inlinable(order)
            out._g = 1.0
            t2 = clock()
            propagate_inlined(order)
            t3 = clock()
            spent["reach"] += t1 - t0
            spent["inlined"] += t3 - t2
            del out, order, reached
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
        ("floor of the order: reachability alone", per_node["reach"]),
        ("floor of the propagation: rules inlined", per_node["inlined"]),
    ]:
        table.add_row(part, f"{value:.3f}")
    console = Console(width=110)
    console.print(table)
    console.print(f"minigrad's backward is {per_node['micrograd'] / minigrad_total:.2f}x micrograd's speed")
    floors = per_node["reach"] + per_node["inlined"]
    console.print(
        f"with both floors it would be {per_node['micrograd'] / floors:.2f}x; the order is "
        f"{per_node['order'] / per_node['reach']:.2f}x its floor, the propagation "
        f"{per_node['propagation'] / per_node['inlined']:.2f}x its floor"
    )


if __name__ == "__main__":
    main()
