"""Campaign throughput of each built-in engine adapter side by side (one process, same seed).

    python benchmarks/bench_adapters.py [--graphs 2000] [--engines minigrad,micrograd,jax,autograd]

Prints, per engine, milliseconds per graph of the campaign's checking phase (wall clock, and CPU
time of this process, which the machine's other load does not change), the ratio to minigrad's,
and how many times faster than 0.24 s a graph (JAX with a per-point, rebuild-every-time shim)
it is. Every figure includes the harness's own work per graph (torch reference, numerical oracle).

Not a pytest-benchmark benchmark: the figures are each campaign's checking phase alone, in CPU time
of the process and from the campaign's own phase clock, which a fixture timing the whole call cannot
separate.
"""

from __future__ import annotations

import argparse
import time

from gradcheck import campaign
from gradcheck.campaign import Settings

SHIM_SECONDS_PER_GRAPH = 0.24  # JAX through a 65-line object-style shim, as reported in issue 11


def measure(engine: str, graphs: int) -> tuple[float, float, int]:
    """(wall ms per graph, CPU ms per graph, failing graphs) of a --jobs 1 campaign on `engine`."""
    settings = Settings(engine=engine, graphs=graphs, seed=0, shrink_budget=1)
    campaign.validate(settings)
    cpu = time.process_time()
    result = campaign.run_campaign(settings, campaign.real_backend())
    cpu = time.process_time() - cpu
    return 1e3 * result.check_seconds / graphs, 1e3 * cpu / graphs, len(result.failures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--engines", default="minigrad,micrograd,jax,autograd")
    args = parser.parse_args()
    rows = {engine: measure(engine, args.graphs) for engine in args.engines.split(",")}
    base = rows.get("minigrad")
    print(f"{args.graphs} scalar graphs per engine, seed 0, --jobs 1")
    columns = (
        ("wall ms/graph", 15),
        ("CPU ms/graph", 14),
        ("vs minigrad", 13),
        ("vs 0.24 s", 11),
        ("failing", 9),
    )
    print(f"{'engine':<12}" + "".join(f"{name:>{width}}" for name, width in columns))
    for engine, (wall, cpu, failing) in rows.items():
        ratio = f"{cpu / base[1]:.2f}x" if base else "–"
        print(
            f"{engine:<12}{wall:>15.1f}{cpu:>14.1f}{ratio:>13}"
            f"{SHIM_SECONDS_PER_GRAPH * 1e3 / wall:>10.1f}x{failing:>9}"
        )


if __name__ == "__main__":
    main()
