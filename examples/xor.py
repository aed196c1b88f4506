"""XOR with micrograd's MLP(2, [4, 1]): four points no straight line can separate.

Inputs are coded as -1/+1 and the net outputs a logit, trained with binary cross-entropy and
Adam. With only four ReLU units some initialisations get stuck (a unit that never fires learns
nothing): about a third of seeds end with one point at probability 0.5. The default seed works.
Run: python examples/xor.py [--steps N] [--seed S]
"""

from __future__ import annotations

import argparse

from minigrad import no_grad
from minigrad.nn import MLP, binary_cross_entropy_with_logits
from minigrad.optim import Adam

INPUTS = [[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]]
TARGETS = [0.0, 1.0, 1.0, 0.0]


def main(steps: int = 200, seed: int = 3, lr: float = 0.05, print_every: int = 20) -> dict[str, object]:
    """Train, printing the loss every `print_every` steps; return the final loss, probabilities and
    whether every point lands on the right side of 0.5."""
    model = MLP(2, [4, 1], rng=seed)
    optimizer = Adam(model.parameters(), lr=lr)
    for step in range(steps):
        loss = binary_cross_entropy_with_logits([model(x) for x in INPUTS], TARGETS)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % print_every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.data:.6f}")
    with no_grad():
        probabilities = [model(x).sigmoid().data for x in INPUTS]
        final_loss = binary_cross_entropy_with_logits([model(x) for x in INPUTS], TARGETS).data
    solved = all((p > 0.5) == (t == 1.0) for p, t in zip(probabilities, TARGETS))
    for x, p, t in zip(INPUTS, probabilities, TARGETS):
        print(f"xor{tuple(x)} = {t:.0f}: predicted probability {p:.4f}")
    print(f"final loss {final_loss:.6f}; solved: {solved}")
    return {"loss": final_loss, "probabilities": probabilities, "solved": solved}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="Adam steps (default 200)")
    parser.add_argument("--seed", type=int, default=3, help="weight seed (default 3)")
    args = parser.parse_args()
    main(steps=args.steps, seed=args.seed)
