"""Handwritten digits with a tensor MLP: 64-128-10, cross-entropy, SGD with momentum.

The data is scikit-learn's bundled 8x8 digits (1,797 images, no download), split 75/25 into
train and test sets stratified by class. A rich progress bar shows the loss and test accuracy
while it trains; at the end a loss-and-accuracy plot is saved as a PNG.
Run: python examples/digits.py [plot.png] [--epochs N]   (default: out/digits.png, 20 epochs)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display needed

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import minigrad
import minigrad.functional as F
from minigrad.nn import TensorMLP
from minigrad.optim import SGD

DEFAULT_PLOT = Path("out") / "digits.png"


def load_data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Train and test images (pixels scaled to [0, 1], float32) and their labels."""
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    return train_test_split(images, digits.target, test_size=0.25, random_state=seed, stratify=digits.target)


def accuracy(model: TensorMLP, images: minigrad.Tensor, labels: np.ndarray) -> float:
    with minigrad.no_grad():
        predictions = model(images).argmax(dim=1).numpy()
    return float((predictions == labels).mean())


def save_plot(path: Path, losses: list[float], accuracies: list[float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    epochs = range(1, len(losses) + 1)
    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(10, 4))
    loss_ax.plot(epochs, losses, marker="o")
    loss_ax.set(title="training loss (cross-entropy)", xlabel="epoch", ylabel="loss")
    acc_ax.plot(epochs, accuracies, marker="o", color="tab:green")
    acc_ax.set(title="test accuracy", xlabel="epoch", ylabel="accuracy", ylim=(min(accuracies) - 0.02, 1.0))
    for ax in (loss_ax, acc_ax):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(
    plot_path: str | Path = DEFAULT_PLOT,
    epochs: int = 20,
    batch_size: int = 32,
    lr: float = 0.05,
    hidden: int = 128,
    seed: int = 0,
) -> dict[str, object]:
    """Train, showing progress; save the plot; return the final test accuracy and the histories."""
    x_train, x_test, y_train, y_test = load_data(seed)
    rng = np.random.default_rng(seed)
    model = TensorMLP([64, hidden, 10], generator=rng)
    optimizer = SGD(model.parameters(), lr=lr, momentum=0.9)
    test_images = minigrad.tensor(x_test)
    losses: list[float] = []
    accuracies: list[float] = []
    columns = (
        TextColumn("[bold]digits[/bold] epoch"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("loss {task.fields[loss]:.4f}  test accuracy {task.fields[accuracy]:.1%}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns) as progress:
        task = progress.add_task("train", total=epochs, loss=float("nan"), accuracy=0.0)
        for _ in range(epochs):
            order = rng.permutation(len(x_train))
            total = 0.0
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                loss = F.cross_entropy(
                    model(minigrad.tensor(x_train[batch])), minigrad.tensor(y_train[batch])
                )
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(batch)
            losses.append(total / len(order))
            accuracies.append(accuracy(model, test_images, y_test))
            progress.update(task, advance=1, loss=losses[-1], accuracy=accuracies[-1])
    save_plot(Path(plot_path), losses, accuracies)
    print(f"test accuracy {accuracies[-1]:.2%} after {epochs} epochs; plot saved to {plot_path}")
    return {"accuracy": accuracies[-1], "losses": losses, "accuracies": accuracies, "plot": Path(plot_path)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "plot", nargs="?", type=Path, default=DEFAULT_PLOT, help=f"PNG to write (default {DEFAULT_PLOT})"
    )
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training set (default 20)")
    args = parser.parse_args()
    main(args.plot, epochs=args.epochs)
