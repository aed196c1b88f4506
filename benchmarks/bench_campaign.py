"""Campaign throughput with --jobs 1 and --jobs 2 side by side, and the gate's wall time.

    python benchmarks/bench_campaign.py [--graphs 2000] [--no-gate]

Prints graphs per second (whole run, including process start-up, and the checking phase alone),
CPU time per graph over all processes (what the machine's load does not change, so the rate on
idle cores can be estimated), the jobs-2 / jobs-1 speed-up, whether both runs gave identical
per-op figures, and how long `python -m ci.gate` takes end to end.

Not a pytest-benchmark benchmark: `--jobs 1` against `--jobs 2` is CPU time over several processes
and the gate's wall time end to end, neither a call in this process.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from gradcheck import campaign
from gradcheck.campaign import Settings
from gradcheck.campaign.report_json import build_report, figures_only

ROOT = Path(__file__).resolve().parents[1]


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(graphs: int, jobs: int, seed: int, tensor: bool = False) -> tuple[float, float, float, dict]:
    """Wall time, checking-phase wall time, CPU time (all processes) and the report's figures."""
    engine = "minigrad-tensor" if tensor else "minigrad"
    settings = Settings(engine=engine, graphs=graphs, seed=seed, jobs=jobs, tensor=tensor)
    campaign.validate(settings)
    cpu, start = cpu_seconds(), time.perf_counter()
    result = campaign.run_campaign(settings, campaign.real_backend())
    wall = time.perf_counter() - start
    return wall, result.check_seconds, cpu_seconds() - cpu, figures_only(build_report(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tensor-graphs", type=int, default=300, help="tensor graphs (0: skip)")
    parser.add_argument("--no-gate", action="store_true", help="skip timing the gate")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"cores available: {len(os.sched_getaffinity(0))} (load average {load}); engine minigrad")
    print(f"{args.graphs} scalar graphs:")
    rows = {}
    for jobs in (1, 2):
        wall, check, cpu, figures = measure(args.graphs, jobs, args.seed)
        rows[jobs] = (wall, check, figures)
        print(
            f"--jobs {jobs}: {wall:6.1f} s wall, {args.graphs / wall:6.0f} graphs/s overall, "
            f"{args.graphs / check:6.0f} graphs/s while checking; "
            f"CPU {1000 * cpu / args.graphs:.2f} ms/graph "
            f"(on {jobs} idle core(s): ~{args.graphs * jobs / cpu:.0f} graphs/s)"
        )
    speedup = rows[1][0] / rows[2][0]
    print(f"jobs 2 / jobs 1 speed-up: {speedup:.2f}x (wall)")
    print(f"identical per-op figures for jobs 1 and 2: {rows[1][2] == rows[2][2]}")
    if args.tensor_graphs:
        wall, check, cpu, _ = measure(args.tensor_graphs, 2, args.seed, tensor=True)
        print(
            f"tensor graphs, --jobs 2: {wall:6.1f} s wall for {args.tensor_graphs}, "
            f"{args.tensor_graphs / wall:6.0f} graphs/s overall, "
            f"{args.tensor_graphs / check:6.0f} while checking; "
            f"CPU {1000 * cpu / args.tensor_graphs:.1f} ms/graph"
        )
    if not args.no_gate:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ci.gate", "--summary-md", os.devnull],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        print(
            f"gate (python -m ci.gate): {time.perf_counter() - start:.1f} s wall, "
            f"exit status {done.returncode}"
        )


if __name__ == "__main__":
    main()
