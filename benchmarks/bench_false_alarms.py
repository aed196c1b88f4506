"""False alarms of the parity campaign on correct engines (minigrad, and engines that evaluate
otherwise than torch): the target is 0.

Runs campaigns of random scalar and tensor graphs (split over parts, each its own seed, so a long
measurement can stop and resume), and counts, side by side, the graphs that would have failed on
central differences alone or on a gradient or Hessian-vector product entry within its rounding
spread (points
settled by the precise oracle or by `gradcheck.parity.rounding`) and the graphs still reported as
failing after the trust step (every one a false alarm, or a minigrad bug to look at).

`--engines` names the engines (comma-separated specs, or `reordered` for every engine of
`gradcheck.testing.reordered_engines`: a backward summing over paths, accumulation in reversed
order, division through the reciprocal, other derivative formulas, explicit Jacobians). A scalar
engine gets the scalar graphs and a tensor engine the tensor graphs. minigrad's parts run as
before (no shrinking, no edge values); any other engine's run as `gradcheck run` does (failing
graphs shrunk on the default budget, the edge-value phase), and its bug-tier findings are listed
with their numbers: on a correct engine every one is a false alarm.

    python benchmarks/bench_false_alarms.py --scalar 200000 --tensor 20000 --parts 4 \
        --results out/false-alarms.json     # resumable: finished parts are kept in the file
    python benchmarks/bench_false_alarms.py --engines reordered --scalar 6000 --tensor 1500 \
        --parts 3 --seed 1 --results out/reordered-false-alarms.json

Not a pytest-benchmark benchmark: it counts false alarms over long campaigns, it times nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from path_terms import hand_check

from gradcheck.atomic import write_text
from gradcheck.campaign import Settings, real_backend, run_campaign
from gradcheck.campaign.tiers import BUG
from gradcheck.engines.loading import load_engine
from gradcheck.testing.reordered_engines import REORDERED_ENGINES

MINIGRAD = {"scalar": "minigrad", "tensor": "minigrad-tensor"}
ENGINE_SETS = {
    "minigrad": tuple(MINIGRAD.values()),
    "reordered": tuple(
        f"gradcheck.testing.reordered_engines:{cls.__name__}" for cls in REORDERED_ENGINES.values()
    ),
}


def engines_of(names: str) -> list[str]:
    """The engine specs `--engines` names: sets by name, specs as they are."""
    specs: list[str] = []
    for name in filter(None, (n.strip() for n in names.split(","))):
        specs.extend(ENGINE_SETS.get(name, (name,)))
    return list(dict.fromkeys(specs))


def kind_of(engine: str) -> str:
    """ "tensor" for an engine of tensor graphs, else "scalar"."""
    return "tensor" if load_engine(engine).tensor else "scalar"


def run_part(kind: str, graphs: int, seed: int, jobs: int, engine: str | None = None) -> dict:
    engine = engine or MINIGRAD[kind]
    as_run = engine not in MINIGRAD.values()  # another engine: shrunk and edge values, as `gradcheck run`
    settings = Settings(
        engine=engine,
        graphs=graphs,
        seed=seed,
        tensor=kind == "tensor",
        jobs=jobs,
        shrink_budget=None if as_run else 0,
        edges=as_run,
    )
    start = time.perf_counter()
    result = run_campaign(settings, real_backend())
    failing = [r for r in result.records if not r.passed]
    bugs = [f for f in result.findings if f.tier == BUG]
    tiers: dict[str, int] = {}
    for finding in result.findings:
        tiers[finding.tier] = tiers.get(finding.tier, 0) + 1
    return {
        "engine": engine,
        "kind": kind,
        "seed": seed,
        "graphs": len(result.records),
        "settled_points": sum(r.points_settled for r in result.records),
        "graphs_with_settled_points": sum(1 for r in result.records if r.points_settled),
        "false_alarms": len(failing),
        "failing_graphs": [r.index for r in failing],
        "problems": [list(r.problems) for r in failing][:20],
        "findings_by_tier": tiers,
        "bug_findings": [
            {
                "title": f.title,
                "graphs": f.graphs,
                "problem": (f.problems or ("",))[0],
                "graph": dict(f.graph),
            }
            for f in bugs
        ],
        "seconds": round(time.perf_counter() - start, 1),
    }


def part_engine(part: dict) -> str:
    """The engine of a recorded part (parts recorded before engines were named are minigrad's)."""
    return part.get("engine") or MINIGRAD[part["kind"]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scalar", type=int, default=200_000, help="scalar graphs in all (default 200000)")
    parser.add_argument("--tensor", type=int, default=20_000, help="tensor graphs in all (default 20000)")
    parser.add_argument("--parts", type=int, default=4, help="split each kind over this many seeds")
    parser.add_argument("--seed", type=int, default=900_000, help="seed of the first part")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--engines",
        default="minigrad",
        help="comma-separated engine specs, or sets: minigrad (its scalar and tensor engines, the "
        "default), reordered (gradcheck.testing.reordered_engines' correct engines)",
    )
    parser.add_argument("--results", type=Path, default=Path("out/false-alarms.json"))
    parser.add_argument(
        "--exact",
        action="store_true",
        help="hand-check each bug-tier finding of a scalar engine against its exact gradient (mpmath): "
        "the engine's and torch's distance from it in units of u · Σ|terms| (benchmarks/path_terms.py)",
    )
    args = parser.parse_args()
    done = json.loads(args.results.read_text()) if args.results.exists() else []
    finished = {(part_engine(p), p["kind"], p["seed"], p["graphs"]) for p in done}
    asked = set()  # this run's parts, done now or by an earlier run with the same arguments
    engines = [(engine, kind_of(engine)) for engine in engines_of(args.engines)]
    totals = {"scalar": args.scalar, "tensor": args.tensor}
    for engine, kind in engines:
        for part in range(args.parts):
            seed = args.seed + part
            graphs = totals[kind] // args.parts + (1 if part < totals[kind] % args.parts else 0)
            if graphs == 0:
                continue
            asked.add((engine, kind, seed, graphs))
            if (engine, kind, seed, graphs) in finished:
                continue
            if engine == MINIGRAD[kind]:
                result = run_part(kind, graphs, seed, args.jobs)
            else:
                result = run_part(kind, graphs, seed, args.jobs, engine)
            done.append(result)
            args.results.parent.mkdir(parents=True, exist_ok=True)
            write_text(args.results, json.dumps(done, indent=1) + "\n")
            print(
                f"{engine} {kind} seed {seed}: {result['graphs']} graphs, {result['false_alarms']} false "
                f"alarms, {len(result.get('bug_findings', []))} bug-tier findings, "
                f"{result['settled_points']} points settled (precise oracle or rounding spread), "
                f"{result['seconds']} s",
                flush=True,
            )
    summary(done, asked, engines, args.exact)


def summary(done: list[dict], asked: set, engines: list[tuple[str, str]], exact: bool = False) -> None:
    """Per engine, this run's parts summed; then every bug-tier finding of those parts."""
    parts_of = {
        (engine, kind): [
            p
            for p in done
            if (part_engine(p), p["kind"], p["seed"], p["graphs"]) in asked and part_engine(p) == engine
        ]
        for engine, kind in engines
    }
    print(
        f"\n{'graphs':>8} {'kind':>7} {'graphs with settled points':>27} {'false alarms':>13} "
        f"{'bug-tier':>9}  engine"
    )
    for (engine, kind), parts in parts_of.items():
        graphs = sum(p["graphs"] for p in parts)
        settled = sum(p["graphs_with_settled_points"] for p in parts)
        alarms = sum(p["false_alarms"] for p in parts)
        bugs = sum(len(p.get("bug_findings", [])) for p in parts)
        print(f"{graphs:>8} {kind:>7} {settled:>27} {alarms:>13} {bugs:>9}  {engine}")
    listed = [
        (engine, p, f)
        for (engine, _), parts in parts_of.items()
        for p in parts
        for f in p.get("bug_findings", [])
    ]
    if listed:
        print("\nbug-tier findings (on a correct engine, each a false alarm):")
    for engine, part, finding in listed:
        print(
            f"  {engine.rsplit(':', 1)[-1]} seed {part['seed']}: {finding['title']} "
            f"({finding['graphs']} graphs)"
        )
        print(f"      {finding['problem']}")
        if exact and part["kind"] == "scalar":
            for check in hand_check(finding["graph"], engine):
                print(f"      {check.line()}")


if __name__ == "__main__":
    main()
