"""micrograd's four-point regression: MLP(3, [4, 4, 1]) fits four targets of +1/-1 by plain SGD.

Mean squared error, 200 steps at learning rate 0.05, weights seeded for a repeatable run.
Run: python examples/four_points.py [--steps N] [--seed S]
"""

from __future__ import annotations

import argparse

from minigrad import no_grad
from minigrad.nn import MLP, mse_loss
from minigrad.optim import SGD

INPUTS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TARGETS = [1.0, -1.0, -1.0, 1.0]


def main(steps: int = 200, seed: int = 2, lr: float = 0.05, print_every: int = 20) -> dict[str, object]:
    """Train, printing the loss every `print_every` steps; return the final loss and predictions."""
    model = MLP(3, [4, 4, 1], rng=seed)
    optimizer = SGD(model.parameters(), lr=lr)
    for step in range(steps):
        loss = mse_loss([model(x) for x in INPUTS], TARGETS)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % print_every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.data:.6f}")
    with no_grad():
        predictions = [model(x).data for x in INPUTS]
        final_loss = mse_loss(predictions, TARGETS).data
    for x, p, t in zip(INPUTS, predictions, TARGETS):
        print(f"{x} -> {p:+.4f} (target {t:+.0f})")
    print(f"final loss {final_loss:.6f}")
    return {"loss": final_loss, "predictions": predictions}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="SGD steps (default 200)")
    parser.add_argument("--seed", type=int, default=2, help="weight seed (default 2)")
    args = parser.parse_args()
    main(steps=args.steps, seed=args.seed)
