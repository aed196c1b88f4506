"""Torch's reference batched across graphs (`batched_reference.py`) against one graph at a time:
what batching changes in the numbers.

The experiment of issue 31, kept so that its figures can be printed again: 30-node scalar graphs
of minigrad's ops with a Hessian-vector product, torch's reference of each graph computed the way
the harness does (`ScalarRun.torch`, one graph per torch pass) and in batches of B graphs, on the
same graphs: the torch calls a batch takes (its groups), the share of graphs whose every number
is the same to the bit, and the largest difference relative to the graph's largest entry of that
field.

Not a pytest-benchmark benchmark: counts and differences, not times; the time per graph of the
two ways is `test_batched_reference.py`'s.

    python benchmarks/bench_batched_reference.py                       # K = 1, 4, 16; B = 64, 256
    python benchmarks/bench_batched_reference.py --points 1 --batches 64 --graphs 512
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from batched_reference import BatchSchedule, ScalarReferenceRequest, run_torch_scalar_batches

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.parity.runs import ScalarRun
from gradcheck.parity.torch_reference import TorchResult

NODES = 30
FIELDS = ("forward", "grads", "hvp")


def runs_of(count: int, points: int, seed: int = 1) -> list[ScalarRun]:
    """`count` random 30-node scalar graphs at `points` points, each with its cotangent and
    Hessian direction drawn as a check draws them."""
    ops = sorted(load_engine("minigrad").ops)
    sizes = Sizes(nodes=(NODES, NODES), tensor_nodes=(NODES, NODES), deep_every=0)
    rng = np.random.default_rng(seed)
    graphs = [random_graph(rng, ops=ops, points=points, sizes=sizes) for _ in range(count)]
    return [ScalarRun(g, points, np.random.default_rng(i), True) for i, g in enumerate(graphs)]


def batched(runs: Sequence[ScalarRun], batch: int) -> list[TorchResult]:
    requests = [ScalarReferenceRequest(r.graph, np.array(r.batch), r.cot, r.direction) for r in runs]
    results: list[TorchResult] = []
    for start in range(0, len(requests), batch):
        results += run_torch_scalar_batches(requests[start : start + batch])
    return results


def deviation(one: TorchResult, other: TorchResult) -> tuple[bool, float]:
    """Whether two results are the same to the bit, and their largest difference relative to the
    largest entry (at least 1) of the field it is in."""
    same, worst = True, 0.0
    for field in FIELDS:
        a, b = getattr(one, field), getattr(other, field)
        if a is None and b is None:
            continue
        if np.array_equal(a, b, equal_nan=True):
            continue
        same = False
        with np.errstate(invalid="ignore"):
            scale = max(1.0, float(np.nanmax(np.abs(a), initial=0.0)))
            worst = max(worst, float(np.nanmax(np.abs(a - b), initial=0.0)) / scale)
    return same, worst


def measure(points: int, batch: int, graphs: int) -> dict[str, float]:
    runs = runs_of(graphs, points)
    single = [run.torch() for run in runs]
    compared = [deviation(s, b) for s, b in zip(single, batched(runs, batch))]
    first = runs[:batch]
    schedule = BatchSchedule([r.graph for r in first], [points] * len(first))
    return {
        "groups": len(schedule.groups),
        "identical": sum(same for same, _ in compared) / graphs,
        "worst": max(worst for _, worst in compared),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--points", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--graphs", type=int, default=512)
    args = parser.parse_args()
    print(f"torch's reference of {NODES}-node scalar graphs with H·v, batched against one by one")
    print(f"{'K':>3}{'B':>6}{'groups':>8}{'identical':>11}{'worst diff':>12}")
    for points in args.points:
        for batch in args.batches:
            r = measure(points, batch, max(args.graphs, batch))
            print(f"{points:>3}{batch:>6}{r['groups']:>8}{r['identical']:>10.0%}{r['worst']:>12.1e}")
    print(
        "(groups: torch calls of ops in the first batch; worst diff: relative to the field's largest"
        " entry, at least 1)"
    )


if __name__ == "__main__":
    main()
