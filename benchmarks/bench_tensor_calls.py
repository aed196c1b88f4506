"""The Python calls (Python's and builtins', as cProfile counts them) in each part of one minigrad
training step of the MLP 784-512-512-10 (`tensor_workloads.py`): the overhead the engine adds to
the numpy work, which does not depend on the batch.

    python benchmarks/bench_tensor_calls.py [--batch 64]

Not a pytest-benchmark benchmark: a count, not a time; the step's time, against torch and the
hand-written numpy floor, is `test_tensor_step.py`'s.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import numpy as np
from tensor_workloads import LR, SIZES

import minigrad
import minigrad.functional as F
from minigrad import nn
from minigrad.optim import SGD


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64, help="the batch size (default 64)")
    counts = calls_per_part(parser.parse_args().batch)
    parts = ", ".join(f"{name} {n}" for name, n in counts.items())
    print(f"minigrad's step, Python and builtin calls: {parts}; total {sum(counts.values())}")


if __name__ == "__main__":
    main()
