"""Optimizers: `SGD` and `Adam` with torch.optim's exact update rules, for Values and Tensors alike.

One code path serves both: a parameter has `.data` (a float, or a numpy array updated in place)
and `.grad` (a float for a Value; a Tensor or None for a Tensor). Parameters whose grad is None
are skipped, as in torch. Per-parameter state (momentum buffer, Adam's moments and step count)
lives in `state`, aligned with `params`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.nn.module import reset_grads


class Optimizer:
    """Holds the parameters and their state; subclasses define `step()`."""

    def __init__(self, params: Iterable[Any]) -> None:
        if hasattr(params, "_local_grads") or not isinstance(params, Iterable):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Values or Tensors, "
                f"but got {type(params).__name__}"
            )
        self.params: list[Any] = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        seen: set[int] = set()
        for index, p in enumerate(self.params):
            if isinstance(p, dict):
                raise TypeError("parameter groups (dicts) are not supported: pass one list of parameters")
            if not hasattr(p, "_local_grads"):
                raise TypeError(
                    f"optimizer can only optimize Values and Tensors, but parameter {index} is "
                    f"{type(p).__name__} {p!r}"
                )
            if id(p) in seen:
                raise ValueError(f"optimizer got parameter {index} ({p!r}) more than once")
            seen.add(id(p))
        self.state: list[dict[str, Any]] = [{} for _ in self.params]

    def zero_grad(self) -> None:
        """Reset every parameter's gradient: 0.0 for a Value, None for a Tensor (like torch)."""
        reset_grads(self.params)

    def step(self) -> None:
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent, torch's rule: with momentum μ, buf = μ·buf + g (buf = g at
    the first step) and p -= lr·buf; weight decay adds wd·p to g first."""

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0, weight_decay: float = 0.0
    ) -> None:
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("momentum value", momentum)
        _check_nonnegative("weight_decay value", weight_decay)
        super().__init__(params)
        self.lr = lr
        self.momentum = momentum
        self.weight_decay = weight_decay

    def step(self) -> None:
        """Update every parameter that has a gradient by one SGD step."""
        lr, momentum, weight_decay = self.lr, self.momentum, self.weight_decay
        for p, state, g in zip(self.params, self.state, _grad_data(self.params)):
            if g is None:
                continue
            if weight_decay != 0:
                g = g + weight_decay * p.data
            if momentum != 0:
                buf = state.get("momentum_buffer")
                buf = _clone(g) if buf is None else buf * momentum + g
                state["momentum_buffer"] = buf
                g = buf
            p.data -= lr * g  # in place for an array, a new float for a Value


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction, torch's rule: m ← m + (1-β1)(g - m),
    v ← β2·v + (1-β2)·g², p -= lr/(1-β1^t) · m / (√v / √(1-β2^t) + eps). Weight decay is L2 (not AdamW)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        _check_nonnegative("learning rate", lr)
        _check_nonnegative("epsilon value", eps)
        for index, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {index}: {beta}")
        _check_nonnegative("weight_decay value", weight_decay)
        super().__init__(params)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.weight_decay = weight_decay

    def step(self) -> None:
        """Update every parameter that has a gradient by one Adam step."""
        beta1, beta2 = self.betas
        for p, state, g in zip(self.params, self.state, _grad_data(self.params)):
            if g is None:
                continue
            if self.weight_decay != 0:
                g = g + self.weight_decay * p.data
            t = state["step"] = state.get("step", 0) + 1
            m = state.get("exp_avg", 0.0)
            v = state.get("exp_avg_sq", 0.0)
            m = state["exp_avg"] = _lerp(m, g, 1 - beta1)
            v = state["exp_avg_sq"] = v * beta2 + (1 - beta2) * g * g
            step_size = self.lr / (1 - beta1**t)
            denom = v**0.5 / (1 - beta2**t) ** 0.5 + self.eps
            p.data -= step_size * m / denom  # torch's addcdiv order: (value * m) / denom


def _check_nonnegative(what: str, x: float) -> None:
    if not x >= 0.0:  # also rejects nan
        raise ValueError(f"Invalid {what}: {x}")


def _lerp(start: Any, end: Any, weight: float) -> Any:
    """start + weight (end - start), computed from the nearer end as torch.lerp does (exact at 0 and 1)."""
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _grad_data(params: list[Any]) -> list[Any]:
    """Each gradient as a float or array, or None: a Value's grad is a float, a Tensor's a Tensor or None."""
    grads = [p.grad for p in params]
    return [g if g is None or isinstance(g, (int, float)) else g.data for g in grads]


def _clone(x: Any) -> Any:
    """A copy that later in-place updates of the gradient cannot change (floats are immutable)."""
    return x.copy() if isinstance(x, np.ndarray) else x
