"""What checking every mode costs (issue 49: a torch campaign with every mode at most 3x today's).

The same random graphs checked by `check_graph` on torch, JAX and HIPS autograd four ways: reverse
mode alone (the same adapter with `forward_mode = False` and no `transforms` or `hvp_transforms`,
as before any was checked), with forward mode, with forward mode and the gradient's transforms
(torch.func's jacrev, jacfwd and vmap), and with the Hessian-vector product's other order too,
taking turns chunk by chunk in one process so that all see the same load. Prints the seconds of
each and their ratios to reverse mode alone. Then what the goal is about: a whole torch tensor
campaign (`run_campaign`: op isolation, edge values, the structural phase, shrinking and the
report) with every mode, beside the same campaign on `TorchReverseOnly`, taking turns.

    python benchmarks/bench_forward_mode.py                 # about two minutes
    python benchmarks/bench_forward_mode.py --graphs 40 --campaign 200   # a quick look

Nothing is asserted: the goal is printed beside the figures.

Not a pytest-benchmark benchmark: it sets two configurations of one check side by side over many
graphs, taking turns, and prints their ratio; today's per-graph check alone is
`test_check_per_graph.py`'s.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np

from gradcheck.campaign.checking import real_backend
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.settings import Settings
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.compare import check_graph

ENGINES = (("torch", False), ("torch", True), ("autograd", False), ("jax", False))
GOAL = 3.0


def configured(engine, **switched):
    """The same adapter with some of its modes switched off (`forward_mode=False`, `transforms=()`,
    `hvp_transforms=()`)."""
    cls = type(engine)
    return type(f"{cls.__name__}Switched", (cls,), switched)()


def timed(engine, graphs) -> float:
    start = time.process_time()
    for seed, graph in enumerate(graphs):
        check_graph(graph, engine, seed=seed)
    return time.process_time() - start


def campaign_seconds(spec: str, graphs: int) -> float:
    """Wall seconds of a torch tensor campaign of `graphs` graphs on the adapter `spec` names."""
    start = time.perf_counter()
    run_campaign(Settings(engine=spec, graphs=graphs, seed=5, tensor=True), real_backend())
    return time.perf_counter() - start


def compare_campaigns(graphs: int) -> None:
    """A torch tensor campaign with every mode beside the same on reverse mode alone, twice each."""
    specs = {"reverse alone": "gradcheck.testing.mode_engines:TorchReverseOnly", "every mode": "torch"}
    seconds = dict.fromkeys(specs, 0.0)
    for _ in range(2):
        for key, spec in specs.items():
            seconds[key] += campaign_seconds(spec, graphs)
    alone, every = seconds["reverse alone"], seconds["every mode"]
    print(f"torch tensor campaign, {graphs} graphs twice: reverse alone {alone:.1f} s,", end=" ")
    print(f"every mode {every:.1f} s, {every / alone:.2f}x (goal: at most {GOAL:g}x; wall seconds)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=150)
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--campaign", type=int, default=500, help="graphs of each campaign (0: none)")
    args = parser.parse_args()
    columns = f"{'reverse s':>10} {'+forward s':>11} {'+transforms s':>14} {'+H·v order s':>13}"
    columns += f" {'forward':>8} {'every':>6}"
    print(f"{'engine':<16} {'graphs':>6} {columns}")
    for name, tensor in ENGINES:
        if importlib.util.find_spec(name) is None:
            print(f"{name:<16} not installed")
            continue
        every = load_engine(name if not tensor else "torch")
        configs = {
            "alone": configured(every, forward_mode=False, transforms=(), hvp_transforms=()),
            "forward": configured(every, transforms=(), hvp_transforms=()),
            "transforms": configured(every, hvp_transforms=()),
            "every": every,
        }
        rng = np.random.default_rng(0)
        ops = sorted(every.ops) if tensor else None
        graphs = [random_graph(rng, ops=ops, tensor=tensor, points=4) for _ in range(args.graphs)]
        for engine in configs.values():  # imports and first compilations apart
            timed(engine, graphs[:3])
        size = max(1, len(graphs) // args.chunks)
        seconds = dict.fromkeys(configs, 0.0)
        for start in range(0, len(graphs), size):
            chunk = graphs[start : start + size]
            for key, engine in configs.items():
                seconds[key] += timed(engine, chunk)
        label = f"{name}{' tensor' if tensor else ''}"
        alone, forward, all_modes = seconds["alone"], seconds["forward"], seconds["every"]
        figures = f"{alone:>10.2f} {forward:>11.2f} {seconds['transforms']:>14.2f} {all_modes:>13.2f}"
        figures += f" {forward / alone:>7.2f}x {all_modes / alone:>5.2f}x"
        print(f"{label:<16} {len(graphs):>6} {figures}")
    print(f"goal: each ratio at most {GOAL:g}x (CPU seconds of the checks)")
    if args.campaign:
        compare_campaigns(args.campaign)


if __name__ == "__main__":
    main()
