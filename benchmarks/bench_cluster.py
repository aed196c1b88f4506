"""A campaign on a Dask cluster against the same campaign under --jobs, on this machine (issue 40).

Starts a scheduler and `--workers` single-threaded workers on 127.0.0.1 (as docs/campaign.md's
`dask scheduler` and `dask worker --nthreads 1` do), then:

1. throughput: `gradcheck run` over the random graphs alone (no structural, isolation or edge
   phase: only they go to the cluster) with `--jobs W` and with `--scheduler`, taking turns,
   `--repeats` times each; prints the random graphs' rate per worker (report.json's
   graphs_per_second over W) side by side, the cluster's over --jobs', and whether both gave
   the same figures;
2. with `--hostile`: each engine of `gradcheck.testing.hostile_engines` (relu ends or hangs its
   process) under `--jobs W` and on the cluster, `--hostile-graphs` graphs with --graph-timeout 5:
   exit status and wall seconds of each, the cluster's workers before and after (a restarted
   worker has a new address), and whether each cluster report equals the --jobs one.

    python benchmarks/bench_cluster.py                       # throughput, about three minutes
    python benchmarks/bench_cluster.py --hostile --repeats 0  # the hostile engines alone

Not a pytest-benchmark benchmark: each figure is a whole `gradcheck run` in processes of its own
(a scheduler, workers, the command), which the fixture's in-process rounds cannot time.

The machine may be shared: compare medians of runs that took turns. Nothing is asserted: the goal
(the cluster's rate per worker within 15% of --jobs') is printed with the figures, met or missed.
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GRAPHS_ONLY = ["--no-isolation", "--no-structure", "--no-edges", "--no-save"]
HOSTILE = ("ExitsInRelu", "EndsProcessInRelu", "SegfaultsInRelu", "HangsInRelu", "UnreadableRelu", "Benign")
GOAL = 0.85  # the cluster's graphs per second per worker over --jobs'


def gradcheck(argv: list[str], out: Path) -> tuple[int, float, dict[str, Any] | None]:
    """`python -m gradcheck ARGV --out OUT` from this checkout: exit status, wall seconds, report."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck", *argv, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    report = out / "report.json"
    return done.returncode, wall, json.loads(report.read_text()) if report.exists() else None


def figures(report: dict[str, Any] | None, out: Path) -> str:
    """A report but its run section and its own path, to compare two runs'."""
    if report is None:
        return ""
    return json.dumps({k: v for k, v in report.items() if k != "run"}).replace(str(out), "OUT")


def throughput(address: str, workers: int, graphs: int, repeats: int, tmp: Path) -> None:
    argv = ["run", "--graphs", str(graphs), "--seed", "1", *GRAPHS_ONLY]
    modes = {f"--jobs {workers}": ["--jobs", str(workers)], "--scheduler": ["--scheduler", address]}
    rates: dict[str, list[float]] = {mode: [] for mode in modes}
    seen: dict[str, set[str]] = {mode: set() for mode in modes}
    print(f"gradcheck {' '.join(argv)}: random graphs per second per worker ({workers} workers)")
    for repeat in range(repeats):
        for mode, extra in modes.items() if repeat % 2 == 0 else reversed(list(modes.items())):
            out = tmp / f"rate-{repeat}-{mode.strip('-').replace(' ', '')}"
            status, wall, report = gradcheck([*argv, *extra], out)
            assert report is not None, f"{mode}: exit status {status}, no report"
            rate = report["run"]["graphs_per_second"] / workers
            rates[mode].append(rate)
            seen[mode].add(figures(report, out))
            print(f"  {mode:>12}: {rate:7.1f} graphs/s per worker ({wall:5.1f} s wall)", flush=True)
    if not repeats:
        return
    jobs, cluster = (statistics.median(rates[mode]) for mode in modes)
    print(f"median per worker: --jobs {workers} {jobs:.1f}, cluster {cluster:.1f} graphs/s")
    verdict = "met" if cluster / jobs >= GOAL else "missed"
    print(f"cluster / --jobs: {cluster / jobs:.2f} (goal at least {GOAL:.2f}: {verdict})")
    print(f"the same figures every run: {len(set.union(*seen.values())) == 1}")


def hostile(address: str, client: Any, workers: int, graphs: int, tmp: Path) -> None:
    print(f"hostile engines, {graphs} graphs, --graph-timeout 5: exit status, wall seconds")
    argv = ["run", "--graphs", str(graphs), "--graph-timeout", "5", "--no-save"]
    for engine in HOSTILE:
        spec = ["--engine", f"gradcheck.testing.hostile_engines:{engine}"]
        jobs_out, cluster_out = tmp / f"{engine}-jobs", tmp / f"{engine}-cluster"
        jobs = gradcheck([*argv, *spec, "--jobs", str(workers)], jobs_out)
        before = sorted(client.scheduler_info(n_workers=-1)["workers"])
        cluster = gradcheck([*argv, *spec, "--scheduler", address], cluster_out)
        after = sorted(client.scheduler_info(n_workers=-1)["workers"])
        same = figures(jobs[2], jobs_out) == figures(cluster[2], cluster_out)
        print(
            f"  {engine:>18}: --jobs {workers} exit {jobs[0]} in {jobs[1]:5.1f} s; cluster exit "
            f"{cluster[0]} in {cluster[1]:5.1f} s, workers unchanged: {before == after}, same report: {same}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hostile", action="store_true", help="also time the hostile engines")
    parser.add_argument("--hostile-graphs", type=int, default=200)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.workers} workers of 1 thread on 127.0.0.1; load average {load}")
    local = {"threads_per_worker": 1, "host": "127.0.0.1", "dashboard_address": None}
    with (
        LocalCluster(n_workers=args.workers, **local) as running,
        Client(running, set_as_default=False) as client,
        tempfile.TemporaryDirectory() as tmp,
    ):
        throughput(running.scheduler_address, args.workers, args.graphs, args.repeats, Path(tmp))
        if args.hostile:
            hostile(running.scheduler_address, client, args.workers, args.hostile_graphs, Path(tmp))


if __name__ == "__main__":
    main()
