"""What accounting for every failing graph costs: a campaign on an engine with a bug against the
same campaign on its correct twin (the same graphs: same ops, seed and sizes), side by side.

    python benchmarks/bench_accounting.py [--graphs 2000] [--seed 1] [--jobs 1]

Per pair: the wall seconds of each campaign (every phase, `gradcheck run`'s defaults), the ratio
buggy / clean, and where the buggy one's extra time went (checking, explaining and shrinking the
failures, settling), with its failing graphs, findings and unexplained graphs. The engines are
`gradcheck.testing.fragment_engines`, loaded by file path so that the same script measures an
older checkout too (run it with that checkout's python: it reports the phases that one has).

Not a pytest-benchmark benchmark: each figure is a whole `gradcheck run` in processes of its own
(its watched workers included), read from its report.json's phase times, where the fixture times a
call in its own process.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from gradcheck import campaign
from gradcheck.campaign import Settings

ENGINES = Path(__file__).resolve().parents[1] / "gradcheck" / "testing" / "fragment_engines.py"
STRUCTURAL = "gradcheck.testing.structural_engines:CorrectAdapter"
# (the engine with a bug, its correct twin)
PAIRS = [
    (f"{ENGINES}:InplaceAbsAdapter", f"{ENGINES}:AbsAdapter"),
    (f"{ENGINES}:IdOrderedBackwardAdapter", STRUCTURAL),
    (f"{ENGINES}:TanhOneMinusTAdapter", STRUCTURAL),
]


def measure(engine: str, graphs: int, seed: int, jobs: int) -> tuple[float, object]:
    fields = {f.name for f in dataclasses.fields(Settings)}
    options = {"engine": engine, "graphs": graphs, "seed": seed, "jobs": jobs, "edges": True}
    settings = Settings(**{k: v for k, v in options.items() if k in fields})
    campaign.validate(settings)
    start = time.perf_counter()
    result = campaign.run_campaign(settings, campaign.real_backend())
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.graphs} graphs, seed {args.seed}, --jobs {args.jobs}; seconds of the whole campaign")
    print(f"{'engine':26} {'clean':>7} {'buggy':>7} {'ratio':>6}  failing findings unexplained  buggy phases")
    for buggy, clean in PAIRS:
        clean_seconds, _ = measure(clean, args.graphs, args.seed, args.jobs)
        seconds, result = measure(buggy, args.graphs, args.seed, args.jobs)
        phases = getattr(result, "timings", {})
        shown = ", ".join(f"{k} {v:.1f}" for k, v in phases.items() if v >= 0.05)
        left = [r for r in result.failures if r.failure is None or r.failure.finding is None]
        name = buggy.rsplit(":", 1)[1].removesuffix("Adapter")
        print(
            f"{name:26} {clean_seconds:7.1f} {seconds:7.1f} {seconds / clean_seconds:6.2f}  "
            f"{len(result.failures):7} {len(result.findings):8} {len(left):11}  {shown}"
        )


if __name__ == "__main__":
    main()
