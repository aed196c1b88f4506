"""What a user waits for: whole commands, from the shell prompt to the verdict, timed as a user
runs them (a fresh process each, its worker processes included), beside the floor (a bare
`python -c "import torch"`) and beside an older revision of the harness (issue 48).

    python benchmarks/bench_commands.py                       # every command, 3 runs each, beside 7ff1016
    python benchmarks/bench_commands.py --baseline main --repeats 5
    python benchmarks/bench_commands.py --baseline none       # this tree alone
    python benchmarks/bench_commands.py --quick --only floor,help   # fewer graphs, some commands

Each command runs `--repeats` times (the medians are printed), this tree's and the baseline's
taking turns so that a change in the machine's load falls on both. CPU seconds are the user+sys
time of the command's process and every process it waited for (its workers: the
RUSAGE_CHILDREN delta), which other jobs on a shared machine inflate far less than wall seconds.
The baseline runs from a temporary `git worktree` of REV (removed at the end), with PYTHONPATH
pointing there; every command runs in an empty temporary directory, as from a user's project.

No dataclasses here: its test loads it outside sys.modules (`benchmarks/tests/bench_scripts.py`).
Not a pytest-benchmark benchmark: each figure is a whole process and its children, which the
fixture (a call inside one process) cannot time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASELINE = "7ff1016"  # main when issue 48 was opened
# A zero-config micrograd-style engine, as a learner's own file in the directory the command runs in
# (copied there: the baseline revision may not have it).
TUTORIAL_SOURCE = ROOT / "gradcheck" / "testing" / "tutorial_engines.py"
TUTORIAL = "tutorial_engine:TutorialValue"
# The pytest plugin on one op: minigrad's relu at its kinks.
PLUGIN_ONE_OP = ["-m", "pytest", "--pyargs", "gradcheck.suite", "--gradcheck-engine", "minigrad"]
PLUGIN_ONE_OP += ["-q", "-p", "no:cacheprovider", "-k", "test_kink_conventions_match_torch and relu"]


class Command(NamedTuple):
    """One command as a user types it (after `python`): `argv(out)` with `out` a fresh directory
    it runs in and writes its reports to; `setup(tree, out)`, done untimed first (a gate's
    baseline to compare with, a learner's engine file)."""

    name: str
    argv: Callable[[Path], list[str]]
    setup: Callable[[Path, Path], object] | None = None


def commands(quick: bool) -> list[Command]:
    """The commands of issue 48, with fewer graphs under `quick` (for the benchmark's own test)."""
    main_graphs, tutorial_graphs, gate_graphs = (20, 50, 20) if quick else (500, 2000, None)
    gate = ["-m", "gradcheck", "gate", "--engine", "minigrad"]
    gate += ["--graphs", str(gate_graphs)] if gate_graphs else []

    def run(*extra: str) -> Callable[[Path], list[str]]:
        return lambda out: ["-m", "gradcheck", "run", *extra, "--no-save", "--out", str(out)]

    return [
        Command("floor", lambda out: ["-c", "import torch"]),
        Command("help", lambda out: ["-m", "gradcheck", "run", "--help"]),
        Command("one-graph", run("--engine", "minigrad", "--graphs", "1")),
        Command("main-job", run("--graphs", str(main_graphs), "--points", "16", "--jobs", "2")),
        Command(
            "tutorial",
            run("--engine", TUTORIAL, "--graphs", str(tutorial_graphs)),
            setup=lambda tree, out: shutil.copy(TUTORIAL_SOURCE, out / "tutorial_engine.py"),
        ),
        Command(
            "gate",
            lambda out: [*gate, "--baseline", str(out / "gate.json")],
            setup=lambda tree, out: timed(
                tree, [*gate, "--baseline", str(out / "gate.json"), "--update-baseline"], out
            ),
        ),
        Command("plugin-one-op", lambda out: list(PLUGIN_ONE_OP)),
    ]


class Timings:
    """A command's runs on one tree: (CPU seconds, wall seconds) each."""

    def __init__(self) -> None:
        self.runs: list[tuple[float, float]] = []

    @property
    def cpu(self) -> float:
        return statistics.median(c for c, _ in self.runs)

    @property
    def wall(self) -> float:
        return statistics.median(w for _, w in self.runs)


def children_cpu() -> float:
    """User+sys seconds of every child process waited for so far (and of the ones they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(tree: Path, argv: Sequence[str], cwd: Path) -> tuple[float, float]:
    """`python ARGV` in `cwd` with `tree`'s harness on PYTHONPATH: its CPU and wall seconds. A
    command that exits otherwise than 0 or 1 (a finding is 1) raises with the end of its stderr."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("GRADCHECK_UNSUPERVISED", None)
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode not in (0, 1):
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"python {' '.join(argv)} on {tree} exited {done.returncode}: {tail}")
    return cpu, wall


@contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """A temporary `git worktree` of `rev` (detached), removed afterwards."""
    where = Path(tempfile.mkdtemp(prefix="gradcheck-baseline-"))
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(where), rev], cwd=ROOT, check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, check=False)
        shutil.rmtree(where, ignore_errors=True)


def measure(trees: dict[str, Path], chosen: Sequence[Command], repeats: int) -> dict[str, dict[str, Timings]]:
    """Each command `repeats` times on each tree, the trees taking turns: command -> tree -> timings."""
    results = {c.name: {t: Timings() for t in trees} for c in chosen}
    with tempfile.TemporaryDirectory(prefix="gradcheck-bench-") as tmp:
        home = Path(tmp)
        dirs = {(c.name, t): home / f"{c.name}-{t}" for c in chosen for t in trees}
        for (name, tree_name), out in dirs.items():
            out.mkdir()
            command = next(c for c in chosen if c.name == name)
            if command.setup is not None:
                command.setup(trees[tree_name], out)
        for _ in range(repeats):
            for command in chosen:
                for tree_name, tree in trees.items():
                    out = dirs[command.name, tree_name]
                    results[command.name][tree_name].runs.append(timed(tree, command.argv(out), out))
    return results


def table(results: dict[str, dict[str, Timings]], baseline: str | None) -> list[str]:
    """The results as a markdown table: each command's CPU and wall medians, its CPU and wall as a
    multiple of the floor's, and (with a baseline) the baseline's figures and this tree's share."""
    floor = results.get("floor", {}).get("this")
    head = ["command", "CPU s", "wall s", "CPU / floor", "wall / floor"]
    if baseline is not None:
        head += [f"{baseline} CPU s", f"{baseline} wall s", "CPU vs base", "wall vs base"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, by_tree in results.items():
        this = by_tree["this"]
        row = [name, f"{this.cpu:.2f}", f"{this.wall:.2f}"]
        row += [f"{this.cpu / floor.cpu:.2f}x", f"{this.wall / floor.wall:.2f}x"] if floor else ["", ""]
        if baseline is not None:
            base = by_tree["base"]
            row += [f"{base.cpu:.2f}", f"{base.wall:.2f}"]
            row += [f"{this.cpu / base.cpu:.2f}x", f"{this.wall / base.wall:.2f}x"]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command (the median is kept)")
    parser.add_argument(
        "--baseline",
        default=DEFAULT_BASELINE,
        help=f"revision to compare with (default {DEFAULT_BASELINE}; none)",
    )
    parser.add_argument("--quick", action="store_true", help="fewer graphs (the benchmark's own test)")
    parser.add_argument("--only", default=None, help="comma-separated command names (default all)")
    args = parser.parse_args(argv)
    chosen = commands(args.quick)
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - {c.name for c in chosen}
        if unknown:
            parser.error(f"--only: unknown commands {sorted(unknown)}; known: {[c.name for c in chosen]}")
        chosen = [c for c in chosen if c.name in wanted]
    baseline = None if args.baseline.lower() == "none" else args.baseline
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"this tree: {ROOT} ({head.stdout.strip() or '?'}); load average before {load}; {args.repeats} runs"
    )
    trees = {"this": ROOT}
    if baseline is None:
        results = measure(trees, chosen, args.repeats)
    else:
        with worktree(baseline) as base:
            results = measure({**trees, "base": base}, chosen, args.repeats)
    lines = table(results, baseline)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print("\n".join(lines))
    print(f"load average after {load}")
    return lines


if __name__ == "__main__":
    main()
