"""Sensitivity: the share of random graphs that catch a gradient bug of relative size δ, per δ,
with this tree's harness and 7dfac76's side by side (issue 28).

The engine under test is `planted_value.py`, a micrograd-style value class in Python floats
whose `mul` (and so `neg`, `sub`, `/`, spelled through it) or `tanh` differentiates to (1 + δ)
times the right local derivative. Each harness runs its own campaign on it, as a user would:

    gradcheck run --engine planted_value.py:Value --graphs N --seed 1 --jobs 1 --no-structure
        --no-isolation --no-edges --shrink-budget 1   (7dfac76: --max-shrink 1)

and a graph catches the bug when the campaign reports it failing. The older harness is taken
from this clone's git history (`git archive 7dfac76`) into a temporary folder and run on this
environment's packages, so both see the same graphs (the generator is unchanged since).

    python benchmarks/bench_sensitivity.py                      # mul and tanh, δ 1e-8..1e-13, 500 graphs
    python benchmarks/bench_sensitivity.py --graphs 200 --ops mul

Issue 28's goals: δ = 1e-10 caught in at least 50% of the graphs and δ = 1e-12 in at least 10%
(for mul; tanh is in fewer graphs, so its shares are also given over the graphs that use it).

Not a pytest-benchmark benchmark: it counts the graphs that catch a bug, and the older harness runs
in a process of its own.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from older_harness import gradcheck_in, tree_of

REPO = Path(__file__).resolve().parents[1]
PLANTED = Path(__file__).resolve().with_name("planted_value.py")
BEFORE_COMMIT = "7dfac76"
DELTAS = (1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13)
GOALS = {1e-10: 0.50, 1e-12: 0.10}  # issue 28: the share of graphs that must catch mul's bug


def shrink_option(tree: Path) -> list[str]:
    """Little shrinking, spelled as the tree's harness spells it: `--shrink-budget` (seconds, now checks)
    replaced 7dfac76's `--max-shrink` (a count), which later trees refuse."""
    budget = any("shrink-budget" in p.read_text() for p in (tree / "gradcheck" / "cli").glob("*.py"))
    return ["--shrink-budget", "1"] if budget else ["--max-shrink", "1"]


def campaign(tree: Path, op: str, delta: float, graphs: int, seed: int, out: Path) -> dict[str, int]:
    """One campaign of `tree`'s harness on the planted engine: graphs, failing graphs, and how
    many graphs used the planted op and how many of those failed."""
    argv = [
        "run", "--engine", f"{PLANTED}:Value", "--graphs", str(graphs), "--seed", str(seed), "--jobs", "1",
        "--no-structure", "--no-isolation", "--no-edges", *shrink_option(tree),
    ]  # fmt: skip
    _, data = gradcheck_in(tree, argv, out, {"PLANTED_OP": op, "PLANTED_DELTA": repr(delta)})
    uses = data["ops"].get(op, {})
    return {
        "graphs": data["totals"]["graphs"],
        "failed": data["totals"]["failed"],
        "with_op": uses.get("graphs", 0) + uses.get("elsewhere", 0),  # evidence and the rest
        "with_op_failed": sum(1 for f in data["failures"] if op in f["ops"]),
    }


def shares(trees: dict[str, Path], ops: list[str], graphs: int, seed: int, work: Path) -> dict:
    """Per op, harness and δ (0 included: the correct engine): the campaign's counts."""
    table: dict = {}
    for op in ops:
        for label, tree in trees.items():
            for delta in (0.0, *DELTAS):
                out = work / f"{label}-{op}-{delta:g}"
                table[op, label, delta] = campaign(tree, op, delta, graphs, seed, out)
                row = table[op, label, delta]
                print(
                    f"  {op:5} {label:9} δ={delta:<7g} {row['failed']:4}/{row['graphs']} graphs", flush=True
                )
    return table


def print_table(table: dict, ops: list[str], labels: list[str]) -> None:
    for op in ops:
        clean = {label: table[op, label, 0.0]["failed"] for label in labels}
        used = table[op, labels[-1], 0.0]["with_op"]
        graphs = table[op, labels[-1], 0.0]["graphs"]
        print(
            f"\n{op}: share of {graphs} random scalar graphs that catch the bug ({used} use {op}); "
            f"false alarms with δ = 0: " + ", ".join(f"{label} {n}" for label, n in clean.items())
        )
        header = "".join(f"{label + ' all':>16}{label + ' using op':>18}" for label in labels)
        print(f"{'δ':>8}{header}")
        for delta in DELTAS:
            cells = ""
            for label in labels:
                row = table[op, label, delta]
                cells += f"{row['failed'] / row['graphs']:>16.1%}"
                cells += f"{row['with_op_failed'] / max(row['with_op'], 1):>18.1%}"
            print(f"{delta:>8g}{cells}")
    if "mul" in ops:
        now = labels[-1]
        for delta, goal in GOALS.items():
            row = table["mul", now, delta]
            share = row["failed"] / row["graphs"]
            verdict = "met" if share >= goal else "missed"
            print(f"goal: mul δ = {delta:g} caught in {share:.1%} of graphs (≥ {goal:.0%}): {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--graphs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ops", default="mul,tanh", help="planted ops, comma-separated (mul, tanh)")
    parser.add_argument("--before", default=BEFORE_COMMIT, help="the commit to compare with")
    args = parser.parse_args()
    ops = args.ops.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-sensitivity-") as tmp:
        work = Path(tmp)
        trees = {"now": REPO}
        before = tree_of(args.before, work / args.before)
        if before is not None:
            trees = {args.before: before, "now": REPO}
        table = shares(trees, ops, args.graphs, args.seed, work)
        print_table(table, ops, list(trees))


if __name__ == "__main__":
    main()
