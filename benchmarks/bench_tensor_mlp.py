"""One training step of an MLP 784-512-512-10 in float32: minigrad vs torch vs hand-written numpy.

A step is zero_grad, forward, cross-entropy, backward and an SGD update. The hand-written numpy
step (its forward and backward derived by hand, no graph) is the floor minigrad is measured
against; torch runs with the same number of threads. Every engine starts from the same weights and batch, and
the first step's losses are checked to agree before anything is timed.

    python benchmarks/bench_tensor_mlp.py [--rounds 40] [--block 5] [--one-thread] [--calls]

Prints milliseconds per step and the ratios, for batch 64 and 256, on one thread and on the
default number of threads; with --calls, first the Python calls per part of minigrad's step.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import pstats
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import minigrad
import minigrad.functional as F
from minigrad import nn
from minigrad.optim import SGD

SIZES = (784, 512, 512, 10)
LR = 0.01


def make_weights(seed: int = 0) -> list[np.ndarray]:
    """Weights and biases in torch.nn.Linear's layout and default init: W (out, in), b (out,)."""
    rng = np.random.default_rng(seed)
    weights = []
    for n_in, n_out in itertools.pairwise(SIZES):
        bound = 1 / np.sqrt(n_in)
        weights.append(rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, n_out).astype(np.float32))
    return weights


def numpy_step_factory(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    """The floor: forward and backward of the network written out by hand with numpy."""
    params = [w.copy() for w in weights]
    rows = np.arange(len(y))

    def step() -> float:
        w1, b1, w2, b2, w3, b3 = params
        h1 = x @ w1.T
        h1 += b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T
        h2 += b2
        a2 = np.maximum(h2, 0)
        z = a2 @ w3.T
        z += b3
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        total = e.sum(axis=1, keepdims=True)
        loss = float(np.log(total[:, 0]).mean() - z[rows, y].mean())
        dz = e / total
        dz[rows, y] -= 1
        dz /= len(y)
        da2 = dz @ w3
        da2 *= h2 > 0
        da1 = da2 @ w2
        da1 *= h1 > 0
        grads = (da1.T @ x, da1.sum(0), da2.T @ a1, da2.sum(0), dz.T @ a2, dz.sum(0))
        for p, g in zip(params, grads):
            p -= LR * g
        return loss

    return step


def minigrad_step_factory(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    model = nn.TensorMLP(SIZES)
    for layer, (w, b) in zip(model.layers, zip(weights[::2], weights[1::2])):
        layer.weight.data = w.copy()
        layer.bias.data = b.copy()
    optimizer = SGD(model.parameters(), lr=LR)
    xs = minigrad.from_numpy(x)
    ys = minigrad.from_numpy(y)

    def step() -> float:
        optimizer.zero_grad()  # first, as in torch's examples: last step's grads are not kept alive
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def torch_step_factory(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    layers = []
    for n_in, n_out in itertools.pairwise(SIZES):
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for layer, (w, b) in zip(linears, zip(weights[::2], weights[1::2])):
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    xs = torch.from_numpy(x)
    ys = torch.from_numpy(y)

    def step() -> float:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def calls_per_part(batch: int) -> dict[str, int]:
    """The function calls (Python's and builtins', as cProfile counts them) in each part of one
    minigrad step: the overhead the engine adds to the numpy work, which does not depend on the batch."""
    rng = np.random.default_rng(1)
    x = minigrad.from_numpy(rng.standard_normal((batch, SIZES[0])).astype(np.float32))
    y = minigrad.from_numpy(rng.integers(0, SIZES[-1], batch).astype(np.int64))
    model = nn.TensorMLP(SIZES)
    optimizer = SGD(model.parameters(), lr=LR)
    loss = None

    def forward() -> None:
        nonlocal loss
        loss = F.cross_entropy(model(x), y)

    parts = {
        "zero_grad": optimizer.zero_grad,
        "forward": forward,
        "backward": lambda: loss.backward(),
        "optimizer": optimizer.step,
    }
    for part in parts.values():  # one step first: nothing in the counted one runs for the first time
        part()
    counts = {}
    for name, part in parts.items():
        profile = cProfile.Profile()
        profile.runcall(part)
        counts[name] = sum(row[1] for row in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]
    return counts


FLOOR = "numpy (floor)"
ENGINES = {
    FLOOR: numpy_step_factory,
    "minigrad": minigrad_step_factory,
    "torch": torch_step_factory,
}


def measure(batch: int, threads: int, rounds: int, block: int) -> tuple[dict[str, float], dict[str, float]]:
    """Per engine: the median milliseconds per step, and the median over rounds of its time
    relative to the floor's in the same round.

    Each round runs every engine (in a fresh random order) for one untimed step and then `block`
    timed steps: a timed step always follows a step of the same engine, as in real training (a
    step right after another engine's pays for the memory and caches that one left behind), and
    the engines of a round run moments apart, under the same load from other programs.
    On one thread the clock is the process's CPU time, which other programs on a busy machine
    cannot inflate; with more threads it is wall time (CPU time would add up the threads).
    """
    clock = time.process_time if threads == 1 else time.perf_counter
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], batch).astype(np.int64)
    weights = make_weights()
    torch.set_num_threads(threads)
    with threadpool_limits(limits=threads):
        step_fns = {name: factory(weights, x, y) for name, factory in ENGINES.items()}
        first = {name: fn() for name, fn in step_fns.items()}
        reference = first[FLOOR]
        for name, loss in first.items():
            if abs(loss - reference) > 1e-4 * max(1.0, abs(reference)):
                raise SystemExit(f"{name}'s first loss {loss} differs from the floor's {reference}")
        names = list(step_fns)
        times: dict[str, list[float]] = {name: [] for name in names}
        round_medians: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(rounds):
            for name in [names[i] for i in rng.permutation(len(names))]:
                fn = step_fns[name]
                fn()
                block_times = []
                for _ in range(block):
                    start = clock()
                    fn()
                    block_times.append(clock() - start)
                times[name] += block_times
                round_medians[name].append(statistics.median(block_times))
    ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    ratios = {
        name: statistics.median(a / b for a, b in zip(round_medians[name], round_medians[FLOOR]))
        for name in names
    }
    return ms, ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="rounds per setting (engines interleaved)")
    parser.add_argument("--block", type=int, default=5, help="timed steps of one engine in a row per round")
    parser.add_argument("--one-thread", action="store_true", help="only the one-thread settings (the goals)")
    parser.add_argument("--calls", action="store_true", help="first count the calls per part of a step")
    args = parser.parse_args()
    if args.calls:
        counts = calls_per_part(64)
        parts = ", ".join(f"{name} {n}" for name, n in counts.items())
        print(f"minigrad's step, Python and builtin calls: {parts}; total {sum(counts.values())}")
    default_threads = torch.get_num_threads()
    print(f"MLP {'-'.join(map(str, SIZES))}, float32, one step = forward + cross-entropy + backward + SGD")
    print(
        f"numpy {np.__version__}, torch {torch.__version__}, cpus {os.cpu_count()}, "
        f"{args.rounds} rounds x {args.block} steps per engine"
    )
    print("ms: median per step; ratios: median over rounds of the ratio of the round's medians")
    header = (
        f"{'batch':>5} {'threads':>7} {'clock':>5} | {'numpy ms':>9} {'minigrad ms':>11} {'torch ms':>9} |"
    )
    print(header + f" {'minigrad/numpy':>14} {'torch/numpy':>11} {'minigrad/torch':>14}")
    goals = []
    for threads in [1] if args.one_thread else sorted({1, default_threads}):
        for batch in (64, 256):
            ms, ratios = measure(batch, threads, args.rounds, args.block)
            mine, theirs = ratios["minigrad"], ratios["torch"]
            print(
                f"{batch:>5} {threads:>7} {'cpu' if threads == 1 else 'wall':>5} | {ms[FLOOR]:>9.2f} "
                f"{ms['minigrad']:>11.2f} {ms['torch']:>9.2f} | {mine:>13.3f}x {theirs:>10.3f}x "
                f"{mine / theirs:>13.3f}x"
            )
            if threads == 1:
                goals.append((batch, mine, mine / theirs))
    for batch, mine, versus_torch in goals:  # issue 14's goals, on one thread
        print(
            f"batch {batch}, 1 thread: minigrad ≤ 1.05x the numpy step: {mine:.3f}x, "
            f"{'met' if mine <= 1.05 else 'missed'}; faster than torch: {versus_torch:.3f}x, "
            f"{'met' if versus_torch < 1.0 else 'missed'}"
        )


if __name__ == "__main__":
    main()
