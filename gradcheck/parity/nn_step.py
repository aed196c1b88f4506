"""The nn layer's parity: training steps of a small MLP compared with the same steps in torch.

A random `Architecture` (kind, sizes, activation, batch, loss, optimizer, hyperparameters) and
random weights and data are trained for a few steps by the engine's network adapter
(`engines.network`) and by torch (float64, `torch.nn.functional` and `torch.optim`). Each step's
loss, parameter gradients, retained hidden-activation gradients and updated parameters must
agree to float64 rounding, so a change in a fused op (`linear_relu`), a layer or an optimizer
shows up as a problem naming the step, the quantity and the entry. Some architectures keep their
hidden activations' gradients (`retain_grad`): a retained gradient is the one buffer a backward
pass hands out without owning it, where an in-place mask would go wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradcheck.engines.network import (
    ACTIVATIONS,
    KINDS,
    Architecture,
    Data,
    NetworkAdapter,
    Step,
    layer_shapes,
)
from gradcheck.engines.torch_engine import torch

# Engine and torch agree to this relative error, on values of order 1 or more (a few hundred ulps:
# a step sums over the batch and the layers in another order than torch).
RTOL = 1e-10
ATOL = 1e-12


@dataclass
class NetworkCheck:
    """One architecture's comparison: `problems` is empty when the engine agrees with torch."""

    arch: Architecture
    problems: list[str] = field(default_factory=list)
    max_rel_err: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.problems

    def report(self) -> str:
        status = "agrees with torch" if self.passed else "differs from torch"
        return "\n".join([f"{self.arch.describe()}: {status}", *(f"  - {p}" for p in self.problems)])


def random_architecture(rng: np.random.Generator, kinds: tuple[str, ...] = KINDS) -> Architecture:
    """A small random MLP and its training: 1-3 layers of 1-5 units, a batch of 1-5."""
    kind = str(rng.choice(kinds))
    depth = int(rng.integers(1, 4))
    sizes = tuple(int(n) for n in rng.integers(1, 6, size=depth + 1))
    activation = str(rng.choice(ACTIVATIONS)) if kind == "value" else "relu"
    loss = "cross_entropy" if kind == "tensor" and sizes[-1] > 1 and rng.integers(2) else "mse_loss"
    optimizer = str(rng.choice(["sgd", "adam"]))
    return Architecture(
        kind,
        sizes,
        activation=activation,
        batch=int(rng.integers(1, 6)),
        loss=loss,
        optimizer=optimizer,
        lr=float(rng.choice([0.01, 0.1, 0.5])),
        momentum=float(rng.choice([0.0, 0.9])) if optimizer == "sgd" else 0.0,
        weight_decay=float(rng.choice([0.0, 0.01])),
        steps=int(rng.integers(1, 4)),
        retain_hidden=kind == "tensor" and depth > 1 and bool(rng.integers(2)),
    )


def random_weights(rng: np.random.Generator, arch: Architecture) -> list[np.ndarray]:
    """Weights and biases of order 1 (no bias at 0: relu's kink would be hit by every zero input)."""
    return [rng.uniform(-1.0, 1.0, size=shape) for shape in layer_shapes(arch.sizes)]


def random_data(rng: np.random.Generator, arch: Architecture) -> Data:
    inputs = rng.uniform(-2.0, 2.0, size=(arch.batch, arch.sizes[0]))
    if arch.loss == "cross_entropy":
        return Data(inputs, rng.integers(0, arch.sizes[-1], size=arch.batch).astype(np.float64))
    return Data(inputs, rng.uniform(-1.0, 1.0, size=(arch.batch, arch.sizes[-1])))


def torch_train(arch: Architecture, weights: list[np.ndarray], data: Data) -> list[Step]:
    """The same training steps in torch (float64): F.linear layers, F's losses, torch.optim."""
    F = torch.nn.functional
    params = [torch.tensor(w, dtype=torch.float64, requires_grad=True) for w in weights]
    if arch.optimizer == "adam":
        optimizer = torch.optim.Adam(params, lr=arch.lr, weight_decay=arch.weight_decay, foreach=False)
    else:
        optimizer = torch.optim.SGD(
            params, lr=arch.lr, momentum=arch.momentum, weight_decay=arch.weight_decay, foreach=False
        )
    activation = getattr(torch, arch.activation)
    n_layers = len(arch.sizes) - 1
    steps = []
    for _ in range(arch.steps):
        optimizer.zero_grad()
        x = torch.tensor(data.inputs, dtype=torch.float64)
        hidden = []
        for index in range(n_layers):
            x = F.linear(x, params[2 * index], params[2 * index + 1])
            if index < n_layers - 1 or arch.activation != "relu":
                x = activation(x)
            if index < n_layers - 1 and arch.retain_hidden:
                x.retain_grad()
                hidden.append(x)
        if arch.loss == "cross_entropy":
            loss = F.cross_entropy(x, torch.tensor(data.targets, dtype=torch.int64))
        else:
            loss = F.mse_loss(x, torch.tensor(data.targets, dtype=torch.float64))
        loss.backward()
        grads = [p.grad.detach().numpy().copy() for p in params]
        hidden_grads = [h.grad.detach().numpy().copy() for h in hidden]
        optimizer.step()
        updated = [p.detach().numpy().copy() for p in params]
        steps.append(Step(float(loss.detach()), grads, updated, hidden_grads))
    return steps


def _parameter_names(arch: Architecture) -> list[str]:
    return [f"layer {i} {part}" for i in range(len(arch.sizes) - 1) for part in ("weight", "bias")]


def compare_steps(check: NetworkCheck, engine: list[Step], reference: list[Step]) -> None:
    """Record in `check` every quantity where the engine's steps and torch's differ."""
    names = _parameter_names(check.arch)
    hidden_names = [f"hidden activation {i}" for i in range(len(check.arch.sizes) - 2)]
    for number, (mine, theirs) in enumerate(zip(engine, reference), start=1):
        quantities = [("loss", np.float64(mine.loss), np.float64(theirs.loss))]
        quantities += [(f"gradient of {n}", a, b) for n, a, b in zip(names, mine.grads, theirs.grads)]
        quantities += [
            (f"gradient of {n}", a, b)
            for n, a, b in zip(hidden_names, mine.hidden_grads, theirs.hidden_grads)
        ]
        quantities += [(f"{n} after the update", a, b) for n, a, b in zip(names, mine.params, theirs.params)]
        if len(mine.hidden_grads) != len(theirs.hidden_grads):
            retained = f"{len(mine.hidden_grads)} hidden gradients retained, torch {len(theirs.hidden_grads)}"
            check.problems.append(f"step {number}: {retained}")
        for what, got, want in quantities:
            problem = _difference(check, what, np.asarray(got), np.asarray(want))
            if problem:
                check.problems.append(f"step {number}: {problem}")
        if check.problems:
            return  # later steps start from different weights: the first difference says it


def _difference(check: NetworkCheck, what: str, got: np.ndarray, want: np.ndarray) -> str | None:
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, torch {want.shape}"
    error = np.abs(got - want)
    allowed = ATOL + RTOL * np.maximum(np.abs(want), 1.0)
    with np.errstate(invalid="ignore"):
        relative = error / np.maximum(np.abs(want), 1.0)
    if relative.size:
        check.max_rel_err = max(check.max_rel_err, float(np.nanmax(relative)))
    bad = ~(error <= allowed)  # nan counts as bad
    if not bad.any():
        return None
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    count = f"{int(bad.sum())} of {bad.size} entries differ"
    return f"{what} {list(index)}: engine {float(got[index])!r}, torch {float(want[index])!r} ({count})"


def check_network(network: NetworkAdapter, arch: Architecture, seed: int) -> NetworkCheck:
    """Train `arch` from random weights and data (drawn from `seed`) in the engine and in torch."""
    rng = np.random.default_rng(seed)
    weights = random_weights(rng, arch)
    data = random_data(rng, arch)
    check = NetworkCheck(arch)
    try:
        engine = network.train(arch, [w.copy() for w in weights], data)
    except Exception as e:  # an engine that raises is a finding, not a crash of the harness
        check.problems.append(f"engine raised {type(e).__name__}: {e}")
        return check
    compare_steps(check, engine, torch_train(arch, weights, data))
    return check


def check_networks(network: NetworkAdapter, count: int, seed: int = 0) -> list[NetworkCheck]:
    """`count` random architectures (of the kinds the engine trains), each checked."""
    rng = np.random.default_rng(seed)
    checks = []
    for index in range(count):
        arch = random_architecture(rng, tuple(network.kinds))
        checks.append(check_network(network, arch, seed * 100_003 + index))
    return checks
