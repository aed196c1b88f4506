"""The exact reference's cost beside torch's (issue 39): graphs per second at 16 points, each graph
with its cotangent-weighted gradients and Hessian-vector products, on the same graphs, and what a
10,000-graph campaign would spend on it on two cores.

For 30-node scalar graphs, scalar graphs as campaigns draw them (1 to 30 nodes, one in ten a deep
chain) and tensor graphs as campaigns draw them, each in one process, CPU time (`process_time`:
the machine's other load does not count):

- torch: `run_torch_batch` / `run_torch_tensor_batch` (the parity check's reference);
- exact: `gradcheck.parity.exact.run_exact`, fresh (its jet cache emptied first);
- again: the same graphs evaluated again, as a shrink or a rebuild re-checks a graph (every jet
  from the cache);
- no H·v: without a direction, the gradients alone.

Not a pytest-benchmark benchmark: the exact reference's first evaluation of a graph costs more
than its later ones (its cache of every op's exact values), and the fixture's repeated rounds
would time only the later ones; this script empties the cache before each fresh graph and times
fresh, cached and without H·v apart, in CPU time. Nothing is asserted.

    python benchmarks/bench_exact.py                # about two minutes
    python benchmarks/bench_exact.py --graphs 10    # a quick look
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.parity import exact_jets
from gradcheck.parity.exact import HIGH, ExactResult, run_exact
from gradcheck.parity.runs import ScalarRun, TensorRun

POINTS = 16
CAMPAIGN = 10_000
CORES = 2
WORKLOADS: dict[str, tuple[bool, Sizes]] = {
    "scalar, 30 nodes": (False, Sizes(nodes=(30, 30), deep_every=0)),
    "scalar, as drawn": (False, Sizes()),
    "tensor, as drawn": (True, Sizes()),
}
WARM_UP = 3  # graphs evaluated first, apart: mpmath's constants at each precision, allocations


class Timing(NamedTuple):
    """Seconds per graph (CPU) of each way of evaluating the same graphs, and what was settled."""

    nodes: float
    torch: float
    exact: float
    again: float
    gradients_only: float
    settled: float  # the fraction of entries whose float64 is the exact value correctly rounded
    raised: float  # the fraction of points evaluated beyond the first two precisions


def runs_of(tensor: bool, sizes: Sizes, graphs: int, seed: int) -> list[ScalarRun | TensorRun]:
    rng = np.random.default_rng(seed)
    make = TensorRun if tensor else ScalarRun
    out = []
    for _ in range(graphs):
        graph = random_graph(rng, tensor=tensor, points=POINTS, sizes=sizes)
        out.append(make(graph, POINTS, rng, hvp=True))
    return out


def _seconds(work: Callable[[], object], count: int) -> float:
    start = time.process_time()
    work()
    return (time.process_time() - start) / count


def _exact(run: ScalarRun | TensorRun, hvp: bool = True) -> ExactResult:
    return run_exact(run.graph, run.batch, run.cot, run.direction if hvp else None)


def measure(tensor: bool, sizes: Sizes, graphs: int, seed: int = 0) -> Timing:
    """Each way's CPU seconds per graph over the same `graphs` graphs (after a warm-up)."""
    for run in runs_of(tensor, sizes, WARM_UP, seed + 1):
        run.torch()
        _exact(run)
    runs = runs_of(tensor, sizes, graphs, seed)
    torch = _seconds(lambda: [run.torch() for run in runs], graphs)
    exact_jets.clear_cache()
    results: list[ExactResult] = []
    exact = _seconds(lambda: results.extend(_exact(run) for run in runs), graphs)
    again = _seconds(lambda: [_exact(run) for run in runs], graphs)
    exact_jets.clear_cache()
    gradients_only = _seconds(lambda: [_exact(run, hvp=False) for run in runs], graphs)
    entries = np.concatenate([s for r in results for s in _settled_of(r)])
    points = np.concatenate([r.precision for r in results])
    return Timing(
        nodes=float(np.mean([len(run.graph.nodes) for run in runs])),
        torch=torch,
        exact=exact,
        again=again,
        gradients_only=gradients_only,
        settled=float(entries.mean()),
        raised=float(np.mean(points > HIGH)),
    )


def _settled_of(result: ExactResult) -> list[np.ndarray]:
    parts = [result.settled.forward, result.settled.grads, result.settled.hvp]
    return [p.ravel() for p in parts if p is not None]


def report(timings: dict[str, Timing]) -> str:
    lines = [
        f"{'workload':18} {'nodes':>5} {'torch ms':>9} {'exact ms':>9} {'ratio':>6} {'exact/s':>8} "
        f"{'again ms':>9} {'no H·v ms':>10} {'settled':>8} {'raised':>7} {'10k on 2 cores':>15}"
    ]
    for name, t in timings.items():
        campaign = CAMPAIGN * t.exact / CORES / 60
        lines.append(
            f"{name:18} {t.nodes:5.1f} {1e3 * t.torch:9.2f} {1e3 * t.exact:9.1f} {t.exact / t.torch:5.0f}x "
            f"{1 / t.exact:8.1f} {1e3 * t.again:9.1f} {1e3 * t.gradients_only:10.1f} "
            f"{100 * t.settled:7.2f}% {100 * t.raised:6.2f}% {campaign:11.1f} min"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200, help="graphs per workload (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    timings = {
        name: measure(tensor, sizes, args.graphs, args.seed) for name, (tensor, sizes) in WORKLOADS.items()
    }
    print(f"{POINTS} points a graph, gradients and H·v, CPU time per graph (one process)")
    print(report(timings))


if __name__ == "__main__":
    main()
