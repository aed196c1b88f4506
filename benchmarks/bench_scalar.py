"""Scalar engines side by side: minigrad `Value` vs PyPI micrograd `Value` vs torch 0-d float64 tensors.

Two graphs, built by hand for every engine from the same numbers:
  (a) micrograd's demo: MLP(2, [16, 16, 1]) over 32 points, SVM hinge loss + L2 penalty;
  (b) a 100,000-step chain y = tanh(y * w + b) (300,000 ops).
For each engine and graph it measures microseconds per node for the forward pass (building the
graph), the backward pass, and freeing the graph, with the garbage collector ON (as users run
it) and OFF (for reference), plus bytes per node held by the graph (tracemalloc).

Each engine runs in a process of its own (a user of one engine has only that engine imported:
torch alone brings some 170,000 objects that every full collection of the garbage collector walks),
and the processes take turns round by round, so all engines see the same load on the machine.
`--shared-process` runs every engine in this one process instead, torch's objects in every heap.

    python benchmarks/bench_scalar.py [--reps 7] [--chain 100000] [--chain-reps 3] [--without-torch]
                                      [--shared-process]

Before timing, every engine's loss and gradients are checked to agree with minigrad's.

Not a pytest-benchmark benchmark: each engine runs in a process of its own, so that torch's heap
does not slow micrograd's collector, and the fixture times calls in the process it runs in; the same
graphs in one process, side by side, are `test_scalar_engines.py`'s.
"""

from __future__ import annotations

import argparse
import gc
import math
import multiprocessing
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from scalar_workloads import (
    ENGINES,
    Engine,
    chain_graph,
    give_micrograd_tanh,
    mlp_graph,
    mlp_numbers,
    run_in_big_stack,
    torch_engine,
)

from minigrad.autograd import topological_order

give_micrograd_tanh()  # the chain's tanh, in every engine process (each imports this module)

# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Result:
    fwd: float
    bwd: float
    free: float
    collector: float  # of the three, the time the garbage collector's passes took

    @property
    def total(self) -> float:
        return self.fwd + self.bwd + self.free


WORKLOADS: dict[str, Callable[[Engine, int], tuple[Any, list[Any]]]] = {
    "mlp": lambda engine, _size: mlp_graph(engine, mlp_numbers()),
    "chain": chain_graph,
}


def engine_named(name: str) -> Engine:
    if name == "torch":
        return torch_engine()
    return next(engine for engine in ENGINES if engine.name == name)


class EngineServer:
    """One engine's side of the measurement, command by command: load a workload, check its
    numbers, count bytes, time rounds. It runs in the engine's own process, or in this one."""

    def __init__(self, name: str) -> None:
        self.engine = engine_named(name)
        self.make: Callable[[], tuple[Any, list[Any]]] = lambda: ((lambda: None), [])
        self.build: Callable[[], Any] = lambda: None
        self.collecting = 0.0  # CPU seconds in the collector's passes since the round began
        self.pass_began = 0.0
        gc.callbacks.append(self.time_collector)

    def time_collector(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.pass_began = time.process_time()
        else:
            self.collecting += time.process_time() - self.pass_began

    def handle(self, command: str, *args: Any) -> Any:
        return getattr(self, command)(*args)

    def load(self, workload: str, size: int) -> None:
        self.make = lambda: WORKLOADS[workload](self.engine, size)
        self.build = self.make()[0]

    def objects(self) -> int:
        """How many objects the collector tracks in this process before any graph."""
        gc.collect()
        return len(gc.get_objects())

    def numbers(self) -> tuple[float, list[float]]:
        """The loss and the parameters' gradients, to check every engine computes the same."""
        build, params = self.make()
        out = build()
        self.engine.backward(out)
        return self.engine.data(out), [self.engine.grad(p) for p in params]

    def nodes(self) -> int:
        out = self.build()
        return sum(1 for n in topological_order([out]) if n._prev)

    def bytes_per_node(self, nodes: int) -> float:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        out = self.build()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del out
        gc.collect()
        return (after - before) / nodes

    def start(self, gc_on: bool) -> None:
        """A clean heap, then one untimed round."""
        gc.collect()
        self.round(gc_on)

    def round(self, gc_on: bool) -> tuple[float, float, float, float]:
        """Build, backward and free once: process CPU seconds of each, and of the collector's
        passes among them. Rounds run back to back as
        in a training loop: with the collector on, one round's garbage (micrograd's graphs are
        reference cycles) is collected during the next ones, and counts; with it off, it is
        reclaimed after the round, untimed."""
        clock = time.process_time
        gc.enable() if gc_on else gc.disable()
        self.collecting = 0.0
        try:
            t0 = clock()
            out = self.build()
            t1 = clock()
            self.engine.backward(out)
            t2 = clock()
            del out
            t3 = clock()
            collecting = self.collecting
        finally:
            gc.enable()
        if not gc_on:
            gc.collect()
        return t1 - t0, t2 - t1, t3 - t2, collecting


def serve(conn: Any, name: str) -> None:
    """An engine's own process: answer the parent's commands until told to stop."""

    def loop() -> None:
        server = EngineServer(name)
        while (command := conn.recv()) != ("stop",):
            try:
                reply = server.handle(*command)
            except Exception as exc:  # shown by the parent
                reply = RuntimeError(f"{name}: {type(exc).__name__}: {exc}")
            conn.send(reply)

    run_in_big_stack(loop)


class EngineProcess:
    """The parent's handle on an engine running in a process of its own (started fresh, so it
    imports only what its engine needs)."""

    def __init__(self, name: str) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, name), daemon=True)
        self.process.start()

    def ask(self, *command: Any) -> Any:
        self.conn.send(command)
        reply = self.conn.recv()
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def stop(self) -> None:
        self.conn.send(("stop",))
        self.process.join()


class EngineHere:
    """An engine measured in this process (`--shared-process`)."""

    def __init__(self, name: str) -> None:
        self.server = EngineServer(name)

    def ask(self, *command: Any) -> Any:
        return self.server.handle(*command)

    def stop(self) -> None:
        pass


def check_agreement(engines: dict[str, Any]) -> None:
    """Every engine's loss and parameter gradients equal minigrad's (to 1e-9 relative)."""
    results = {name: engine.ask("numbers") for name, engine in engines.items()}
    ref_loss, ref_grads = results["minigrad"]
    for name, (loss, grads) in results.items():
        ok = math.isclose(loss, ref_loss, rel_tol=1e-9) and all(
            math.isclose(g, r, rel_tol=1e-9, abs_tol=1e-12) for g, r in zip(grads, ref_grads)
        )
        if not ok:
            sys.exit(f"{name} disagrees with minigrad: loss {loss} vs {ref_loss}")


def measure_workload(
    engines: dict[str, Any], workload: str, size: int, reps: int, take_turns: bool
) -> tuple[int, dict, dict]:
    """Check agreement, then µs per node for each engine with GC on and off, and bytes per node.

    Engines in processes of their own take turns round by round (one round of each, then the
    next), so a change of load on the machine falls on all of them alike while each engine's rounds
    still run back to back in its own heap. Engines sharing this process run one after the other
    (taking turns there would leave one engine's garbage to the next one's rounds)."""
    for engine in engines.values():
        engine.ask("load", workload, size)
    check_agreement(engines)
    nodes = engines["minigrad"].ask("nodes")
    memory = {name: engine.ask("bytes_per_node", nodes) for name, engine in engines.items()}
    rows: dict[tuple[str, bool], Result] = {}
    per = 1e6 / nodes
    for gc_on in (True, False):
        rounds: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in engines}
        groups = [list(engines)] if take_turns else [[name] for name in engines]
        for group in groups:
            for name in group:
                engines[name].ask("start", gc_on)
            for _ in range(reps):
                for name in group:
                    rounds[name].append(engines[name].ask("round", gc_on))
        for name in engines:
            rows[name, gc_on] = Result(*(statistics.fmean(phase) * per for phase in zip(*rounds[name])))
    return nodes, rows, memory


def print_workload(console: Console, title: str, nodes: int, rows: dict, memory: dict) -> None:
    table = Table(title=f"{title}: {nodes:,} nodes")
    columns = ("engine", "GC", "fwd µs/node", "bwd µs/node", "free µs/node", "total µs/node", "of which GC")
    for col in (*columns, "bytes/node"):
        table.add_column(col, justify="left" if col in ("engine", "GC") else "right")
    for gc_on in (True, False):
        for name in memory:
            r = rows[name, gc_on]
            mem = f"{memory[name]:,.0f}" + ("*" if name == "torch" else "")
            table.add_row(
                name,
                "on" if gc_on else "off",
                f"{r.fwd:.2f}",
                f"{r.bwd:.2f}",
                f"{r.free:.2f}",
                f"{r.total:.2f}",
                f"{r.collector:.2f}" if gc_on else "",
                mem if gc_on else "",
            )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--reps", type=int, default=7, help="timed rounds per measurement on the MLP (default 7)"
    )
    parser.add_argument("--chain", type=int, default=100_000, help="steps of the tanh chain (default 100000)")
    parser.add_argument("--chain-reps", type=int, default=3, help="timed rounds per measurement on the chain")
    parser.add_argument(
        "--without-torch", action="store_true", help="minigrad and micrograd only, torch never imported"
    )
    parser.add_argument(
        "--shared-process",
        action="store_true",
        help="every engine in this one process (torch's objects then in every engine's heap)",
    )
    args = parser.parse_args()
    console = Console(width=120)
    names = ["minigrad", "micrograd"] + ([] if args.without_torch else ["torch"])
    if args.shared_process:
        run_in_big_stack(lambda: measure_all(console, names, EngineHere, args))
    else:
        measure_all(console, names, EngineProcess, args)


def measure_all(console: Console, names: list[str], engine_in: Callable[[str], Any], args: Any) -> None:
    """Start the engines, measure both workloads, print the tables and the goals."""
    engines = {name: engine_in(name) for name in names}
    try:
        objects = {name: engine.ask("objects") for name, engine in engines.items()}
        where = (
            "in this one process, one after the other"
            if args.shared_process
            else "each in a process of its own, taking turns round by round"
        )
        console.print(
            "[bold]Scalar engines[/]: µs per node in process CPU time, mean of rounds run back to\n"
            "back (so the collector's passes are amortized in). forward = building the graph, free =\n"
            "dropping it. torch: 0-d float64 tensors, 1 thread. micrograd (PyPI 0.1.0) has no tanh: a\n"
            "tiny subclass adds one in its closure style. Its recursive topological sort needs a deep\n"
            "stack, so every engine runs in a thread with a 512 MiB stack and recursion limit 2,000,000.\n"
            f"Engines run {where}. Objects the collector tracks before any\n"
            "graph (every full collection walks them): "
            + ", ".join(f"{name}'s process {count:,}" for name, count in objects.items())
            + ("" if args.shared_process else " (--shared-process: all in one)")
        )
        summary = []
        workloads = [
            ("MLP(2,[16,16,1]) × 32 points", "mlp", 0, args.reps),
            (f"tanh chain × {args.chain:,}", "chain", args.chain, args.chain_reps),
        ]
        for title, workload, size, reps in workloads:
            nodes, rows, memory = measure_workload(engines, workload, size, reps, not args.shared_process)
            print_workload(console, title, nodes, rows, memory)
            summary += compare(title, rows, memory, names[1:])
    finally:
        for engine in engines.values():
            engine.stop()
    print_summary(console, summary, with_torch="torch" in names)


def compare(title: str, rows: dict, memory: dict, others: list[str]) -> list[tuple[Any, ...]]:
    """minigrad's advantage over each other engine: their µs / minigrad's, their bytes / minigrad's."""
    summary = []
    for gc_on in (True, False):
        mine = rows["minigrad", gc_on]
        for other in others:
            theirs = rows[other, gc_on]
            summary.append(
                (
                    title,
                    "on" if gc_on else "off",
                    other,
                    theirs.fwd / mine.fwd,
                    theirs.bwd / mine.bwd,
                    theirs.total / mine.total,
                    memory[other] / memory["minigrad"],
                )
            )
    return summary


def print_summary(console: Console, summary: list[tuple[Any, ...]], with_torch: bool) -> None:
    ratios = Table(title="minigrad's advantage: their µs / minigrad's µs per node, their bytes / minigrad's")
    for col in ("graph", "GC", "vs", "fwd", "bwd", "total", "bytes"):
        ratios.add_column(col, justify="left" if col in ("graph", "GC", "vs") else "right")
    for title, gc_text, other, f, b, t, m in summary:
        mem = f"{m:.2f}x" if other != "torch" else f"({m:.2f}x)*"
        ratios.add_row(title, gc_text, other, f"{f:.2f}x", f"{b:.2f}x", f"{t:.2f}x", mem)
    console.print(ratios)
    if with_torch:
        console.print(
            "* torch keeps its graph mostly in C++ allocations that tracemalloc cannot see: its bytes per "
            "node are a lower bound."
        )
    checks = [
        (t, total >= 2.5, mem >= 3.0)
        for t, g, o, _, _, total, mem in summary
        if g == "on" and o == "micrograd"
    ]
    for title, fast, small in checks:
        console.print(
            f"{title}: total ≥ 2.5x micrograd with GC on: {'[green]met' if fast else '[red]missed'}[/]; "
            f"bytes ≤ 1/3 of micrograd's: {'[green]met' if small else '[red]missed'}[/]"
        )
    print_speed_goals(console, summary)


# The speed goals of issue 14 on micrograd's demo network, GC on, read from this run's ratios.
SPEED_GOALS = [
    ("micrograd", "total", 6.0, "forward + backward ≥ 6x micrograd"),
    ("torch", "total", 7.0, "forward + backward ≥ 7x torch"),
    ("micrograd", "bwd", 1.5, "backward alone ≥ 1.5x micrograd"),
]


def print_speed_goals(console: Console, summary: list[tuple[Any, ...]]) -> None:
    """One line per goal: the ratio this run measured and whether it meets the goal."""
    for title, gc_text, other, _fwd, bwd, total, _mem in summary:
        if not title.startswith("MLP") or gc_text != "on":
            continue
        for vs, column, goal, text in SPEED_GOALS:
            if vs != other:
                continue
            ratio = total if column == "total" else bwd
            verdict = "[green]met" if ratio >= goal else "[red]missed"
            console.print(f"{title}, GC on: {text}: {ratio:.2f}x, {verdict}[/]")


if __name__ == "__main__":
    main()
