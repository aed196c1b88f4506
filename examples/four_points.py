"""The four-point regression of micrograd's lessons: MLP(3, [4, 4, 1]) with tanh on every layer.

Sum of squared errors, 200 steps of plain SGD at learning rate 0.05, weights from `random.seed`,
exactly as the lessons write it. The loss printed while training is that sum; the final line
reports the mean squared error over the four points.
Run: python examples/four_points.py [--steps 200] [--seed 2] [--lr 0.05]
"""

from __future__ import annotations

import argparse
import random

from minigrad import no_grad
from minigrad.nn import MLP

INPUTS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TARGETS = [1.0, -1.0, -1.0, 1.0]


def main(steps: int = 200, seed: int = 2, lr: float = 0.05, print_every: int = 20) -> dict[str, object]:
    """Train, printing the loss every `print_every` steps; return the final loss and predictions."""
    random.seed(seed)
    model = MLP(3, [4, 4, 1], activation="tanh")
    for step in range(steps):
        loss = sum((model(x) - y) ** 2 for x, y in zip(INPUTS, TARGETS))
        for p in model.parameters():
            p.grad = 0.0
        loss.backward()
        for p in model.parameters():
            p.data += -lr * p.grad
        if step % print_every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.data:.6f}")
    with no_grad():
        predictions = [model(x).data for x in INPUTS]
    final_loss = sum((p - t) ** 2 for p, t in zip(predictions, TARGETS)) / len(TARGETS)
    for x, p, t in zip(INPUTS, predictions, TARGETS):
        print(f"{x} -> {p:+.4f} (target {t:+.0f})")
    print(f"final loss {final_loss:.6f}")
    return {"loss": final_loss, "predictions": predictions}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=200, help="SGD steps (default 200)")
    parser.add_argument("--seed", type=int, default=2, help="random.seed for the weights (default 2)")
    parser.add_argument("--lr", type=float, default=0.05, help="learning rate (default 0.05)")
    args = parser.parse_args()
    main(steps=args.steps, seed=args.seed, lr=args.lr)
