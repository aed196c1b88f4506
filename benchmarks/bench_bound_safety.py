"""How far correct engines sit inside the rounding bound: the measurement behind `BOUND_SAFETY` and
`HVP_SAFETY` (`gradcheck.parity.errors`).

For each engine, the campaign's random graphs (its generator, seed and sizes) are evaluated by the
engine and by torch at every point, and every forward value and gradient entry's difference is
divided by its whole rounding bound (`RoundingBounds.full`: the rounding bound of the difference
is twice one evaluation's); the Hessian-vector product at the first point likewise, for engines
with second derivatives. Prints, per engine, the distribution of each graph's largest multiple
(median, 99th and 99.9th percentiles, maximum) and the graph where the maximum was. A correct
engine needs the safety factor above its maximum; the gap is the margin.

    python benchmarks/bench_bound_safety.py --engine minigrad --graphs 2000
    PYTHONPATH=/path/to/femtograd python benchmarks/bench_bound_safety.py --engine femtograd.femtograd:value
    python benchmarks/bench_bound_safety.py --engine minigrad-tensor --tensor --graphs 500

Not a pytest-benchmark benchmark: it measures errors against the bound, not times.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.campaign.checking import campaign_checker
from gradcheck.campaign.settings import Settings, graph_seed
from gradcheck.checker.flat import flat_vector
from gradcheck.parity.bound import RoundingBounds
from gradcheck.parity.compare import run_at
from gradcheck.parity.errors import bound_ratio
from gradcheck.parity.runs import ScalarRun, TensorRun


def multiples(graph: Any, adapter: Any, seed: int) -> tuple[float, float]:
    """The graph's largest |engine - torch| over the rounding bound of the difference: forward
    values and gradients at every point, and the Hessian-vector product at the first (nan when
    the engine raised or has none)."""
    rng = np.random.default_rng(seed)
    hvp = adapter.create_graph
    run = (
        TensorRun(graph, graph.n_points, rng, hvp)
        if graph.is_tensor
        else ScalarRun(graph, graph.n_points, rng, hvp)
    )
    points = list(range(graph.n_points))
    values, cotangents = run.values(points), run.cotangents(points)
    reference = run.torch()
    try:
        results = list(adapter.run_points(graph, values, cotangents))
    except Exception:
        return float("nan"), float("nan")
    forward = np.stack([flat_vector(f) for f, _ in results], axis=1)
    grads = np.stack([flat_vector(g) for _, g in results], axis=1)
    bounds = RoundingBounds(graph, *run_at(run, np.arange(graph.n_points))).full()
    with np.errstate(invalid="ignore"):
        worst = max(
            float(
                np.nanmax(bound_ratio(np.abs(forward - reference.forward), 2 * bounds.forward), initial=0.0)
            ),
            float(np.nanmax(bound_ratio(np.abs(grads - reference.grads), 2 * bounds.grads), initial=0.0)),
        )
    second = float("nan")
    if hvp and reference.hvp is not None:
        try:
            product = flat_vector(adapter.run_hvp(graph, values[0], cotangents[0], run.direction_at(0)))
        except Exception:
            return worst, second
        batch, cot = run_at(run, np.arange(1))
        direction = [np.asarray(d, dtype=np.float64)[None] for d in run.direction_at(0)]
        bound = RoundingBounds(graph, batch, cot, direction=direction).full().grads[:, 0]
        second = float(np.max(bound_ratio(np.abs(product - reference.hvp[:, 0]), 2 * bound), initial=0.0))
    return worst, second


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engine", default="minigrad")
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--tensor", action="store_true")
    args = parser.parse_args()
    checker = campaign_checker(
        Settings(engine=args.engine, graphs=args.graphs, seed=args.seed, tensor=args.tensor)
    )
    first, second, start = [], [], time.perf_counter()
    for index in range(args.graphs):
        a, b = multiples(checker.graph(index), checker.adapter, graph_seed(args.seed, index))
        first.append(a)
        second.append(b)
    for label, found in (("values and gradients", first), ("Hessian-vector products", second)):
        x = np.array(found)
        x = x[np.isfinite(x)] if np.isfinite(x).any() else x[:0]
        if not x.size:
            continue
        where = int(np.nanargmax(np.where(np.isfinite(found), found, -1.0)))
        q = np.quantile(x, [0.5, 0.99, 0.999])
        kind = "tensor" if args.tensor else "scalar"
        print(
            f"{args.engine} {kind}, {label}: {x.size} graphs, multiple of the rounding bound p50 "
            f"{q[0]:.3g}, p99 {q[1]:.3g}, p99.9 {q[2]:.3g}, max {x.max():.3g} (graph {where})"
        )
    print(f"  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
