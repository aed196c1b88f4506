"""What `errors.AGREEING_ULPS` lets through unexamined: the share of entries whose allowance against
torch (BOUND_SAFETY times twice their rounding bound) is below that many ulps of the entry.

Entries within AGREEING_ULPS of torch's pass without their bound being computed. For an entry
that rounds at all the allowance is larger anyway; this counts the entries where it is not
(entries float64 computes exactly, or nearly), over random scalar graphs of minigrad's ops.

    python benchmarks/bench_agreeing_ulps.py                 # 200 graphs at 4 points
    python benchmarks/bench_agreeing_ulps.py --graphs 1000

Not a pytest-benchmark benchmark: it counts entries, it times nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.bound import EPS, RoundingBounds
from gradcheck.parity.errors import AGREEING_ULPS, BOUND_SAFETY
from gradcheck.parity.runs import ScalarRun


def allowance_in_ulps(graphs: int, points: int, seed: int) -> np.ndarray:
    """Every nonzero finite forward and gradient entry's allowance, in ulps of the entry."""
    ops = sorted(load_engine("minigrad").ops)
    rng = np.random.default_rng(seed)
    ratios = []
    for i in range(graphs):
        run = ScalarRun(random_graph(rng, ops=ops, points=points), points, np.random.default_rng(i), False)
        reference = run.torch()
        bounds = RoundingBounds(run.graph, run.batch, run.cot, full=True).full()
        for bound, entry in ((bounds.forward, reference.forward), (bounds.grads, reference.grads)):
            keep = np.isfinite(entry) & (entry != 0) & np.isfinite(bound)
            ratios.append(BOUND_SAFETY * 2.0 * bound[keep] / (EPS * np.abs(entry[keep])))
    return np.concatenate(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--graphs", type=int, default=200)
    parser.add_argument("--points", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    ulps = allowance_in_ulps(args.graphs, args.points, args.seed)
    below = ulps < AGREEING_ULPS
    print(
        f"{ulps.size} entries of {args.graphs} random scalar graphs at {args.points} points: "
        f"{below.mean():.1%} ({below.sum()}) are allowed less than AGREEING_ULPS = {AGREEING_ULPS:g} ulps "
        f"of themselves, {(ulps[below] < 0.01).sum()} of those less than 0.01 ulps; "
        f"median allowance {np.median(ulps):.0f} ulps"
    )


if __name__ == "__main__":
    main()
