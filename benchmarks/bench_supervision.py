"""What running the engine in a watched worker process costs: the same `gradcheck run` on minigrad,
supervised (as users run it), in gradcheck's own process (GRADCHECK_UNSUPERVISED=1: what --jobs 1
did before issue 29) and, with --against, another checkout (e.g. main before the change), side
by side, taking turns, each a fresh process timed from start to exit.

    python benchmarks/bench_supervision.py [--graphs 2000] [--jobs 1] [--repeats 3] [--against DIR]

Prints each run's wall and CPU seconds (every process: workers included), the medians, each mode's
ratio to the supervised one, and whether every mode gave the same per-op figures. The machine may
be shared: compare medians of runs that took turns, not single runs.

Not a pytest-benchmark benchmark: each run is a fresh process timed from start to exit, workers
included, which the fixture (a call in its own process) cannot time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from older_harness import gradcheck_in

ROOT = Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(checkout: Path, env: dict[str, str], argv: list[str], out: Path) -> tuple[float, float, dict]:
    """One campaign in a fresh process: wall seconds, CPU seconds, the report's figures."""
    cpu = children_cpu()
    wall, report = gradcheck_in(checkout, argv, out, env)
    return wall, children_cpu() - cpu, {k: v for k, v in report.items() if k != "run"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None, help="another checkout to time alike")
    args = parser.parse_args()
    argv = ["run", "--graphs", str(args.graphs), "--seed", "1", "--jobs", str(args.jobs), "--no-save"]
    modes = {"supervised": (ROOT, {}), "in-process": (ROOT, {"GRADCHECK_UNSUPERVISED": "1"})}
    if args.against is not None:
        modes[f"{args.against}"] = (args.against.resolve(), {})
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"gradcheck {' '.join(argv)}; load average {load}")
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for mode, (checkout, env) in modes.items():
                out = Path(tmp) / f"{mode.replace('/', '_')}-{repeat}"
                wall, cpu, figures[mode] = run_once(checkout, env, argv, out)
                times[mode].append((wall, cpu))
                print(f"  {mode:>12}: {wall:6.1f} s wall, {cpu:6.1f} s CPU", flush=True)
    base = statistics.median(w for w, _ in times["supervised"])
    for mode, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        ratio = f"supervised / this: {base / wall:.2f}"
        print(f"{mode:>12}: median {wall:6.1f} s wall, {cpu:6.1f} s CPU; {ratio}")
    same = all(f == figures["supervised"] for f in figures.values())
    print(f"identical per-op figures and findings in every mode: {same}")


if __name__ == "__main__":
    main()
