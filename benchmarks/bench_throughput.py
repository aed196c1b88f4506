"""The harness's throughput and its blame's cost, side by side with an older commit (issue 31).

In one run, on one core, against the tree of `--against` (default 7dfac76, taken from git):

1. graphs checked per second at one point and at 16 points (30-node scalar graphs with
   Hessian-vector products, minigrad): each tree in a process of its own (`parity_goal_rows.py`),
   the two taking turns chunk by chunk on the same graphs, so that both see the same load;
2. where a graph's time goes in each tree: generation, central differences, torch, the engine
   with the comparison (the checks' own split);
3. a campaign's time on an engine with a gradient bug in most graphs over its time on the same
   engine fixed, in each tree: `gradcheck run` on `planted_value.py` with mul's derivative 10%
   off and with it right, the same graphs, with the checking and the blaming (explaining,
   shrinking, grouping) apart.

    python benchmarks/bench_throughput.py                  # about three minutes
    python benchmarks/bench_throughput.py --chunks 10 --graphs 300   # a quick look

Nothing is asserted: the goals are printed with the figures, met or missed.

Not a pytest-benchmark benchmark: its figures set today's harness beside an older commit's, each
tree in a process of its own (two versions of gradcheck cannot be imported in one process), and time
whole `gradcheck run` campaigns; today's per-graph check alone is `test_check_per_graph.py`'s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_parity import chunk_in, start_rows_process
from older_harness import gradcheck_in, tree_of

REPO = Path(__file__).resolve().parents[1]
PLANTED = Path(__file__).resolve().parent / "planted_value.py"
AGAINST = "7dfac76"
# Issue 31's goals against 7dfac76: graphs per second at one point and at 16, and a buggy engine's
# campaign over a clean one's.
GOAL_RATIO = {1: 2.5, 16: 2.0}
GOAL_BUGGY_OVER_CLEAN = 1.5
PHASES = (
    ("generation", "generation"),
    ("numeric", "central differences"),
    ("torch", "torch"),
    ("engine", "engine and comparison"),
)
STRUCTURES = {1: 40, 16: 12}  # graphs per chunk: 0.1-0.3 s each


def side_by_side(before: Path, chunks: int) -> dict[int, dict[Path, list[dict[str, float]]]]:
    """Per K, per tree, the rows of each chunk (`parity_goal_rows.py`), the trees taking turns."""
    rows: dict[int, dict[Path, list[dict[str, float]]]] = {k: {before: [], REPO: []} for k in STRUCTURES}
    processes = {tree: start_rows_process(tree) for tree in (before, REPO)}
    try:
        for chunk in range(chunks):
            for points, structures in STRUCTURES.items():
                for tree in [before, REPO] if chunk % 2 == 0 else [REPO, before]:
                    rows[points][tree].append(chunk_in(processes[tree], points, structures))
    finally:
        for process in processes.values():
            process.communicate("\n")
    return rows


def print_rates(rows: dict[int, dict[Path, list[dict[str, float]]]], before: Path, against: str) -> None:
    print(f"graphs checked per second, 30-node scalar graphs with H·v, minigrad, one core ({against} vs now)")
    for points, by_tree in rows.items():
        ratios = [
            n["checked"] / n["wall"] / (b["checked"] / b["wall"])
            for b, n in zip(by_tree[before], by_tree[REPO])
        ]
        rate = {tree: statistics.median(r["checked"] / r["wall"] for r in by_tree[tree]) for tree in by_tree}
        ratio = statistics.median(ratios)
        unit = "graphs/s" if points == 1 else "graph instances/s"
        print(
            f"  K={points:<3} {against} {rate[before]:,.0f} {unit}, now {rate[REPO]:,.0f}: median ratio "
            f"{ratio:.2f}x over {len(ratios)} chunks (goal ≥ {GOAL_RATIO[points]:g}x), "
            f"{'met' if ratio >= GOAL_RATIO[points] else 'missed'}"
        )
    print("\nwhere a graph's time goes, ms per graph (the checks' own split)")
    print(f"  {'':<24}" + "".join(f"{f'K={k} ' + name:>16}" for k in rows for name in (against, "now")))
    for key, label in (*PHASES, ("wall", "total")):
        cells = []
        for points, by_tree in rows.items():
            for tree in (before, REPO):
                graphs = sum(r["checked"] for r in by_tree[tree]) / points
                cells.append(sum(r.get(key, 0.0) for r in by_tree[tree]) / graphs * 1e3)
        print(f"  {label:<24}" + "".join(f"{c:>16.3f}" for c in cells))


def campaign(tree: Path, delta: float, graphs: int) -> dict[str, float]:
    """`gradcheck run` of `tree` on planted_value.py (mul's derivative 1 + delta times right):
    its wall seconds and report.json's timings."""
    env = {"PLANTED_OP": "mul", "PLANTED_DELTA": str(delta), "GRADCHECK_UNSUPERVISED": "1"}
    argv = ["run", "--engine", f"{PLANTED}:Value", "--graphs", str(graphs), "--seed", "1"]
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as out:
        wall, report = gradcheck_in(tree, argv, Path(out), env)
    run = report["run"]
    return {
        "wall": wall,
        "seconds": run["seconds"],
        "check": run["check_seconds"],
        "blame": run["grouping_seconds"],
        "structure": run.get("structure_seconds", float("nan")),  # nan: a tree without the phase
        "failed": report["totals"]["failed"],
    }


def print_campaigns(before: Path, against: str, graphs: int, repeats: int) -> None:
    print(f"\n{graphs}-graph campaigns on planted_value.py: mul's derivative 10% off (buggy), right (clean)")
    header = f"{'clean s':>9}{'structure':>10}{'buggy s':>9}{'failing':>9}{'check':>8}{'blame':>8}"
    print(f"  {'':<10}{header}{'buggy/clean':>13}")
    for label, tree in ((against, before), ("now", REPO)):
        runs = {delta: [campaign(tree, delta, graphs) for _ in range(repeats)] for delta in (0.0, 0.1)}
        clean = statistics.median(r["seconds"] for r in runs[0.0])
        structure = statistics.median(r["structure"] for r in runs[0.0])
        buggy = statistics.median(r["seconds"] for r in runs[0.1])
        check = statistics.median(r["check"] for r in runs[0.1])
        blame = statistics.median(r["blame"] for r in runs[0.1])
        failing = runs[0.1][0]["failed"]
        ratio = buggy / clean
        verdict = (
            f"(goal ≤ {GOAL_BUGGY_OVER_CLEAN:g}x) {'met' if ratio <= GOAL_BUGGY_OVER_CLEAN else 'missed'}"
        )
        print(
            f"  {label:<10}{clean:>9.2f}{structure:>10.2f}{buggy:>9.2f}{failing:>9}{check:>8.2f}{blame:>8.2f}"
            f"{ratio:>12.2f}x" + (f"  {verdict}" if label == "now" else "")
        )
    print(
        "  (seconds: the campaign's own, report.json's run.seconds; structure: the clean run's structural"
        " phase; check and blame: the buggy run's)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", default=AGAINST, help=f"the older commit (default {AGAINST})")
    parser.add_argument("--chunks", type=int, default=30, help="chunks per K in turns (default 30)")
    parser.add_argument("--graphs", type=int, default=1000, help="graphs per campaign (default 1000)")
    parser.add_argument("--repeats", type=int, default=1, help="campaigns per tree and engine (median)")
    args = parser.parse_args()
    for option in ("chunks", "graphs", "repeats"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1, got {getattr(args, option)}")
    with tempfile.TemporaryDirectory(prefix=f"minigrad-{args.against}-") as tmp:
        before = tree_of(args.against, Path(tmp))
        if before is None:
            raise SystemExit(f"bench_throughput: no tree of {args.against} to compare with")
        print_rates(side_by_side(before, args.chunks), before, args.against)
        print_campaigns(before, args.against, args.graphs, args.repeats)


if __name__ == "__main__":
    main()
