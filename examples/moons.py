"""Two-moons classification in micrograd's demo style: MLP(2, [16, 16, 1]), hinge loss + L2.

The moons are generated with numpy (no download): two interleaved half circles with Gaussian
noise, labels -1 and +1. Full-batch SGD with micrograd's learning-rate decay from 1.0 to 0.1.
Every step builds a graph of about 65,000 Values, so 20 steps take a few seconds.
Run: python examples/moons.py [--steps N] [--seed S]
"""

from __future__ import annotations

import argparse

import numpy as np

from minigrad import no_grad
from minigrad.nn import MLP, hinge_loss
from minigrad.optim import SGD


def make_moons(n_samples: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Points (n, 2) on an upper half circle (label -1) and a shifted lower one (label +1), plus noise."""
    n_upper = n_samples // 2
    n_lower = n_samples - n_upper
    a = np.linspace(0.0, np.pi, n_upper)
    b = np.linspace(0.0, np.pi, n_lower)
    upper = np.stack([np.cos(a), np.sin(a)], axis=1)
    lower = np.stack([1.0 - np.cos(b), 0.5 - np.sin(b)], axis=1)
    points = np.concatenate([upper, lower])
    labels = np.concatenate([-np.ones(n_upper), np.ones(n_lower)])
    points = points + np.random.default_rng(seed).normal(scale=noise, size=points.shape)
    return points, labels


def main(
    steps: int = 20, seed: int = 1, n_samples: int = 100, alpha: float = 1e-4, print_every: int = 2
) -> dict[str, object]:
    """Train, printing loss and accuracy every `print_every` steps; return the final loss and accuracy."""
    points, labels = make_moons(n_samples, noise=0.1, seed=seed)
    xs, ys = points.tolist(), labels.tolist()
    model = MLP(2, [16, 16, 1], rng=seed)
    optimizer = SGD(model.parameters(), lr=1.0)

    def loss_and_accuracy() -> tuple[object, float]:
        scores = [model(x) for x in xs]
        loss = hinge_loss(scores, ys) + alpha * sum(p * p for p in model.parameters())
        accuracy = sum((s.data > 0) == (y > 0) for s, y in zip(scores, ys)) / len(ys)
        return loss, accuracy

    for step in range(steps):
        loss, accuracy = loss_and_accuracy()
        optimizer.zero_grad()
        loss.backward()
        optimizer.lr = 1.0 - 0.9 * step / steps
        optimizer.step()
        if step % print_every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.data:.6f}  accuracy {accuracy:.0%}")
    with no_grad():
        loss, accuracy = loss_and_accuracy()
    print(f"final loss {loss.data:.6f}, accuracy {accuracy:.0%} on {len(ys)} points")
    return {"loss": loss.data, "accuracy": accuracy}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="full-batch SGD steps (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="data and weight seed (default 1)")
    args = parser.parse_args()
    main(steps=args.steps, seed=args.seed)
