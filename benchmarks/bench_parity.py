"""Parity-harness throughput: graphs checked per second three ways, and where the time goes.

Side by side in one run: scalar graphs of 10, 30 and 50 nodes checked one point per torch pass
(K=1) and K points per torch pass; tensor graphs; the hypothesis property of the parity suite;
and, with --catch, how many graphs each deliberately broken engine survives and how many false
alarms the correct engines raise. A "graph checked" is one graph instance (a structure at one
input point) checked three ways: engine vs torch, both vs central differences.

    python benchmarks/bench_parity.py                 # throughput, issue 14 goals (about two minutes)
    python benchmarks/bench_parity.py --catch         # + catch figures (broken engines)
    python benchmarks/bench_parity.py --false-alarms 20000   # + correct engines over 20k structures

Not a pytest-benchmark benchmark: its figures set today's harness beside 11812d8's, each tree in a
process of its own (two versions of gradcheck cannot be imported in one process), taking turns;
today's per-graph check alone is `test_check_per_graph.py`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from older_harness import tree_of

from gradcheck.campaign.checking import campaign_checker
from gradcheck.campaign.settings import Settings
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.strategies import scalar_graphs
from gradcheck.parity.compare import check_graph
from gradcheck.testing.broken_engines import BROKEN_ENGINES, BROKEN_TENSOR_ENGINES
from gradcheck.testing.catching import hypothesis_examples_until_caught, stream_graphs_until_caught

# Issue 14's harness figures, measured on commit 11812d8 (one core, wall clock): 30-node scalar
# graphs with second derivatives, graph instances per second at 16 points per graph and graphs
# per second at one point. The goals: twice these, and generation at most 10% of the time.
# The ratios are measured side by side (`side_by_side`); these recorded figures are the fallback
# when 11812d8 cannot be had from git.
BEFORE_COMMIT = "11812d8"
BEFORE_PER_S = {16: 2122.0, 1: 242.0}
REPO = Path(__file__).resolve().parents[1]
GOAL_ROWS_SCRIPT = Path(__file__).resolve().parent / "parity_goal_rows.py"
GOAL_RATIO = 2.0
GOAL_GENERATION_SHARE = 0.10


def warm_up() -> None:
    """Torch's first ~100 autograd calls are 10x slower (lazy kernel setup): pay that before timing."""
    rng = np.random.default_rng(99)
    for i in range(150):
        check_graph(random_graph(rng, points=4), load_engine("minigrad"), seed=i, second_order=i % 2 == 0)
        if i % 10 == 0:
            check_graph(random_graph(rng, tensor=True, points=2), load_engine("minigrad-tensor"), seed=i)


def measure(
    engine: str,
    nodes: int | None,
    points: int,
    structures: int,
    second_order: bool = True,
    tensor: bool = False,
) -> dict[str, float]:
    adapter = load_engine(engine)
    ops = sorted(adapter.ops)
    sizes = Sizes(nodes=(nodes, nodes), tensor_nodes=(nodes, nodes), deep_every=0) if nodes else Sizes()
    rng = np.random.default_rng(1)
    split = {"generation": 0.0, "numeric": 0.0, "torch": 0.0, "engine": 0.0}
    checked = failed = 0
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(structures):
        t = time.perf_counter()
        graph = random_graph(rng, ops=ops, points=points, sizes=sizes, tensor=tensor)
        split["generation"] += time.perf_counter() - t
        result = check_graph(graph, adapter, seed=i, second_order=second_order)
        for key, value in result.timings.items():
            split[key] += value
        checked += result.points_checked
        failed += not result.passed
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "per_s": checked / total,
        "cpu_per_s": checked / cpu,  # this process's CPU time: other jobs on the machine do not count
        "checked": checked,
        "structures": structures,
        "failed": failed,
        "total": total,
        **split,
    }


def throughput(quick: bool) -> dict[int, dict[str, float]]:
    n = 40 if quick else 120
    print("graphs checked per second, one core (three checks; HVP = second derivatives vs torch too)")
    header = f"{'graphs':<34}{'K':>4}{'checked/s':>11}{'gen':>7}{'numeric':>9}{'torch':>7}{'engine':>8}"
    print(header + "   (share of time)")
    rows = []
    for nodes in (10, 30, 50):
        for points, hvp in ((1, True), (16, True), (16, False), (64, True)):
            label = f"scalar, {nodes} nodes{', HVP' if hvp else ''}"
            rows.append((label, "minigrad", nodes, points, hvp, False, max(10, n * 16 // (points * 2))))
    rows.append(("scalar, mixed 1-70 nodes, HVP", "minigrad", None, 16, True, False, n))
    rows.append(("scalar, micrograd engine", "micrograd", 30, 16, False, False, n))
    for nodes in (10, 30, 50):
        rows.append((f"tensor, {nodes} nodes, HVP", "minigrad-tensor", nodes, 8, True, True, n // 2))
        rows.append((f"tensor, {nodes} nodes", "minigrad-tensor", nodes, 8, False, True, n // 2))
    base: dict[int | None, float] = {}
    goal_rows: dict[int, dict[str, float]] = {}
    for label, engine, nodes, points, hvp, tensor, structures in rows:
        r = measure(engine, nodes, points, structures, hvp, tensor)
        if (engine, nodes, hvp, tensor) == ("minigrad", 30, True, False) and points in BEFORE_PER_S:
            goal_rows[points] = r
        share = {k: r[k] / r["total"] for k in ("generation", "numeric", "torch", "engine")}
        if points == 1 and not tensor:
            base[nodes] = r["per_s"]
        ratio = (
            f"  x{r['per_s'] / base[nodes]:.1f} vs K=1" if nodes in base and points > 1 and not tensor else ""
        )
        print(
            f"{label:<34}{points:>4}{r['per_s']:>11.0f}"
            + "".join(f"{share[k]:>{w}.0%}" for k, w in zip(share, (7, 9, 7, 8)))
            + ratio
            + (f"  FAILED {r['failed']}" if r["failed"] else "")
        )
    return goal_rows


def campaign_generation_share(graphs: int) -> float:
    """Generation's share of a campaign's checking time: graphs of `python -m gradcheck run --seed
    12345` (its default settings, minigrad), each generated and checked as the campaign does."""
    checker = campaign_checker(Settings(seed=12345, graphs=graphs))
    generation = checking = 0.0
    for index in range(graphs):
        start = time.perf_counter()
        graph = checker.graph(index)
        made = time.perf_counter()
        check_graph(graph, checker.adapter, seed=index)
        generation, checking = generation + made - start, checking + time.perf_counter() - made
    return generation / (generation + checking)


def before_tree(into: Path) -> Path | None:
    """The tree of `BEFORE_COMMIT`, extracted from this clone's git history into `into`; None (with
    the reason printed) when git or the commit is not there."""
    return tree_of(BEFORE_COMMIT, into)


def start_rows_process(tree: Path) -> subprocess.Popen[str]:
    """`parity_goal_rows.py` in a process of its own on `tree`'s gradcheck and minigrad, warmed up."""
    process = subprocess.Popen(
        [sys.executable, str(GOAL_ROWS_SCRIPT)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise RuntimeError(f"parity_goal_rows.py did not start on {tree}")
    return process


def chunk_in(process: subprocess.Popen[str], points: int, structures: int) -> dict[str, float]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{points} {structures}\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def side_by_side(chunks: int, quick: bool) -> dict[int, list[tuple[float, float, float]]] | None:
    """Issue 14's two rows in the tree before it and in this one, a process each, taking turns chunk
    by chunk on the same graphs (which goes first alternates): per K, the (before, now, now with
    its generation time left out) instances per second of each chunk."""
    sizes = {16: 10, 1: 20} if quick else {16: 30, 1: 60}  # structures per chunk: 0.1-0.3 s each
    rates: dict[int, list[tuple[float, float, float]]] = {16: [], 1: []}
    with tempfile.TemporaryDirectory(prefix=f"minigrad-{BEFORE_COMMIT}-") as tmp:
        before = before_tree(Path(tmp))
        if before is None:
            return None
        processes = {tree: start_rows_process(tree) for tree in (before, REPO)}
        try:
            for chunk in range(chunks):
                for points, structures in sizes.items():
                    trees = [before, REPO] if chunk % 2 == 0 else [REPO, before]
                    got = {tree: chunk_in(processes[tree], points, structures) for tree in trees}
                    rate = {tree: got[tree]["checked"] / got[tree]["wall"] for tree in trees}
                    now = got[REPO]
                    checking_only = now["checked"] / (now["wall"] - now["generation"])
                    rates[points].append((rate[before], rate[REPO], checking_only))
        finally:
            for process in processes.values():
                process.communicate("\n")
    return rates


def print_goals(
    goal_rows: dict[int, dict[str, float]],
    campaign_share: float,
    pairs: dict[int, list[tuple[float, float, float]]] | None,
) -> None:
    """One line per goal of issue 14 for the harness: the figure, the ratio and whether it is met."""
    print(f"\nissue 14's harness goals (before: {BEFORE_COMMIT}, 30-node scalar graphs, HVP, one core)")
    for points in (16, 1):
        unit = "graph instances/s" if points > 1 else "graphs/s"
        if pairs is not None:
            ratios = sorted(now / before for before, now, _ in pairs[points])
            ratio = statistics.median(ratios)
            before_rate = statistics.median(before for before, _, _ in pairs[points])
            now_rate = statistics.median(now for _, now, _ in pairs[points])
            quartiles = statistics.quantiles(ratios, n=4)
            print(
                f"  K={points}: {unit}, now vs {BEFORE_COMMIT} side by side in {len(ratios)} chunks taken "
                f"in turns (medians {now_rate:,.0f} vs {before_rate:,.0f}): median ratio {ratio:.2f}x, "
                f"middle half {quartiles[0]:.2f}x-{quartiles[2]:.2f}x (goal ≥ {GOAL_RATIO:g}x), "
                f"{_verdict(ratio >= GOAL_RATIO)}"
            )
            ceiling = statistics.median(free / before for before, _, free in pairs[points])
            print(
                f"  K={points}: the ratio's ceiling if this tree's generation cost nothing (the same "
                f"chunks, its generation time left out): {ceiling:.2f}x"
            )
        r = goal_rows[points]
        recorded = r["per_s"] / BEFORE_PER_S[points]
        print(
            f"  K={points}: {r['per_s']:,.0f} {unit} in the table above vs {BEFORE_PER_S[points]:,.0f} "
            f"recorded on {BEFORE_COMMIT} when the issue was filed: {recorded:.2f}x"
            + ("" if pairs is not None else f" (goal ≥ {GOAL_RATIO:g}x), {_verdict(recorded >= GOAL_RATIO)}")
        )
    for points, r in sorted(goal_rows.items(), reverse=True):
        phases = ", ".join(
            f"{label} {r[key] / r['structures'] * 1e3:.2f} ms"
            for key, label in (
                ("generation", "generation"),
                ("numeric", "central differences"),
                ("torch", "torch"),
                ("engine", "engine and comparison"),
            )
        )
        print(f"  K={points}, per graph: {phases}")
    for points, r in sorted(goal_rows.items(), reverse=True):
        share = r["generation"] / r["total"]
        print(
            f"  generation's share at K={points}: {share:.0%} "
            f"(goal ≤ {GOAL_GENERATION_SHARE:.0%}), {_verdict(share <= GOAL_GENERATION_SHARE)}"
        )
    print(
        f"  generation's share of a campaign's checking (seed 12345, default settings): "
        f"{campaign_share:.0%} (goal ≤ {GOAL_GENERATION_SHARE:.0%}), "
        f"{_verdict(campaign_share <= GOAL_GENERATION_SHARE)}"
    )


def _verdict(met: bool) -> str:
    return "met" if met else "missed"


def hypothesis_rate(examples: int) -> None:
    count = {"examples": 0, "checked": 0}

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(scalar_graphs(points=8))
    def prop(graph):
        result = check_graph(graph, load_engine("minigrad"), seed=0)
        count["examples"] += 1
        count["checked"] += result.points_checked
        assert result.passed

    start = time.perf_counter()
    prop()
    total = time.perf_counter() - start
    print(
        "\nhypothesis property of the suite (scalar_graphs, 8 points): "
        f"{count['examples'] / total:.0f} examples/s, {count['checked'] / total:.0f} graphs checked/s"
    )


def catch_figures(budget: int) -> None:
    print(f"\ngraphs needed to catch each broken engine (budget {budget}; ci runs 1,000 of each)")
    print(f"{'engine':<20}{'hypothesis':>12}{'seeded stream':>15}")
    for name, cls in {**BROKEN_ENGINES, **BROKEN_TENSOR_ENGINES}.items():
        tensor = name in BROKEN_TENSOR_ENGINES
        h = hypothesis_examples_until_caught(cls(), budget, tensor=tensor)
        s = stream_graphs_until_caught(cls(), budget, tensor=tensor)
        print(f"{name:<20}{h if h else 'MISSED':>12}{s if s else 'MISSED':>15}")


def false_alarms(structures: int) -> None:
    print(f"\nfalse alarms of correct engines over {structures} seeded structures each")
    for engine, tensor, points in (
        ("minigrad", False, 16),
        ("micrograd", False, 16),
        ("minigrad-tensor", True, 4),
    ):
        adapter = load_engine(engine)
        ops = sorted(adapter.ops)
        alarms = checked = 0
        start = time.perf_counter()
        count = structures if not tensor else structures // 10
        for i in range(count):
            graph = random_graph(np.random.default_rng([7, i]), ops=ops, points=points, tensor=tensor)
            result = check_graph(graph, adapter, seed=i)
            checked += result.points_checked
            if not result.passed:
                alarms += 1
                print(f"  {engine} graph {i}: {result.problems[0][:200]}")
        print(
            f"  {engine:<16} {alarms} false alarms in {checked} graph instances ({count} structures), "
            f"{time.perf_counter() - start:.0f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer graphs per row")
    parser.add_argument(
        "--catch", action="store_true", help="also measure how fast broken engines are caught"
    )
    parser.add_argument(
        "--false-alarms", type=int, default=0, metavar="N", help="check correct engines on N structures"
    )
    parser.add_argument(
        "--chunks",
        type=int,
        default=40,
        help=f"chunks of the side-by-side run against {BEFORE_COMMIT} (default 40, about 30 s; 0: none, "
        "compare with the figures recorded then)",
    )
    args = parser.parse_args()
    warm_up()
    goal_rows = throughput(args.quick)
    hypothesis_rate(100 if args.quick else 300)
    campaign_share = campaign_generation_share(100 if args.quick else 400)
    pairs = side_by_side(args.chunks, args.quick) if args.chunks else None
    print_goals(goal_rows, campaign_share, pairs)
    if args.catch:
        catch_figures(1000)
    if args.false_alarms:
        false_alarms(args.false_alarms)


if __name__ == "__main__":
    main()
