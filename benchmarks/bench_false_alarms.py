"""False alarms of the parity campaign on minigrad, whose gradients are right: the target is 0.

Runs campaigns of random scalar and tensor graphs (split over parts, each its own seed, so a long
measurement can stop and resume), and counts, side by side, the graphs that would have failed on
central differences alone or on a gradient or Hessian-vector product entry within its rounding
spread (points
settled by the precise oracle or by `gradcheck.parity.rounding`) and the graphs still reported as
failing after the trust step (every one a false alarm, or a minigrad bug to look at).

    python benchmarks/bench_false_alarms.py --scalar 200000 --tensor 20000 --parts 4 \
        --results out/false-alarms.json     # resumable: finished parts are kept in the file

Not a pytest-benchmark benchmark: it counts false alarms over long campaigns, it times nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from gradcheck.atomic import write_text
from gradcheck.campaign import Settings, real_backend, run_campaign


def run_part(kind: str, graphs: int, seed: int, jobs: int) -> dict:
    tensor = kind == "tensor"
    settings = Settings(
        engine="minigrad-tensor" if tensor else "minigrad",
        graphs=graphs,
        seed=seed,
        tensor=tensor,
        jobs=jobs,
        shrink_budget=0.0,
    )
    start = time.perf_counter()
    result = run_campaign(settings, real_backend())
    failing = [r for r in result.records if not r.passed]
    return {
        "kind": kind,
        "seed": seed,
        "graphs": len(result.records),
        "settled_points": sum(r.points_settled for r in result.records),
        "graphs_with_settled_points": sum(1 for r in result.records if r.points_settled),
        "false_alarms": len(failing),
        "failing_graphs": [r.index for r in failing],
        "problems": [list(r.problems) for r in failing][:20],
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scalar", type=int, default=200_000, help="scalar graphs in all (default 200000)")
    parser.add_argument("--tensor", type=int, default=20_000, help="tensor graphs in all (default 20000)")
    parser.add_argument("--parts", type=int, default=4, help="split each kind over this many seeds")
    parser.add_argument("--seed", type=int, default=900_000, help="seed of the first part")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--results", type=Path, default=Path("out/false-alarms.json"))
    args = parser.parse_args()
    done = json.loads(args.results.read_text()) if args.results.exists() else []
    finished = {(p["kind"], p["seed"], p["graphs"]) for p in done}
    asked = set()  # this run's parts, done now or by an earlier run with the same arguments
    for kind, total in (("scalar", args.scalar), ("tensor", args.tensor)):
        for part in range(args.parts):
            seed = args.seed + part
            graphs = total // args.parts + (1 if part < total % args.parts else 0)
            if graphs == 0:
                continue
            asked.add((kind, seed, graphs))
            if (kind, seed, graphs) in finished:
                continue
            result = run_part(kind, graphs, seed, args.jobs)
            done.append(result)
            args.results.parent.mkdir(parents=True, exist_ok=True)
            write_text(args.results, json.dumps(done, indent=1) + "\n")
            print(
                f"{kind} seed {seed}: {result['graphs']} graphs, {result['false_alarms']} false alarms, "
                f"{result['settled_points']} points settled (precise oracle or rounding spread), "
                f"{result['seconds']} s",
                flush=True,
            )
    print(f"\n{'graphs':>8} {'kind':>7} {'graphs with settled points':>27} {'false alarms':>13}")
    for kind in ("scalar", "tensor"):
        parts = [p for p in done if p["kind"] == kind and (p["kind"], p["seed"], p["graphs"]) in asked]
        graphs = sum(p["graphs"] for p in parts)
        settled = sum(p["graphs_with_settled_points"] for p in parts)
        alarms = sum(p["false_alarms"] for p in parts)
        print(f"{graphs:>8} {kind:>7} {settled:>27} {alarms:>13}")


if __name__ == "__main__":
    main()
