"""Every registry op spelled with a numpy-like module `xp` (numpy, jax.numpy, autograd.numpy).

One point at a time: attributes are the registry's (`dims` and `dim` negative, so a leading batch
axis added by vectorisation never moves them). A function-style adapter gets these by default and
overrides an op where its engine has its own spelling (`jax.nn.relu`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

ArrayOp = Callable[[Any, Sequence[Any], dict[str, Any]], Any]


def _softmax(xp: Any, x: Any, dim: int) -> Any:
    e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax(xp: Any, x: Any, dim: int) -> Any:
    shifted = x - xp.max(x, axis=dim, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


ARRAY_OPS: dict[str, ArrayOp] = {
    "add": lambda xp, a, k: a[0] + a[1],
    "sub": lambda xp, a, k: a[0] - a[1],
    "mul": lambda xp, a, k: a[0] * a[1],
    "div": lambda xp, a, k: a[0] / a[1],
    "pow": lambda xp, a, k: a[0] ** a[1],
    "pow_const": lambda xp, a, k: a[0] ** k["exponent"],
    "neg": lambda xp, a, k: -a[0],
    "relu": lambda xp, a, k: xp.maximum(a[0], 0.0),
    "tanh": lambda xp, a, k: xp.tanh(a[0]),
    "sigmoid": lambda xp, a, k: 1.0 / (1.0 + xp.exp(-a[0])),
    "exp": lambda xp, a, k: xp.exp(a[0]),
    "log": lambda xp, a, k: xp.log(a[0]),
    "sin": lambda xp, a, k: xp.sin(a[0]),
    "cos": lambda xp, a, k: xp.cos(a[0]),
    "sqrt": lambda xp, a, k: xp.sqrt(a[0]),
    "abs": lambda xp, a, k: xp.abs(a[0]),
    "atan": lambda xp, a, k: xp.arctan(a[0]),
    "atan2": lambda xp, a, k: xp.arctan2(a[0], a[1]),
    "matmul": lambda xp, a, k: xp.matmul(a[0], a[1]),
    "sum": lambda xp, a, k: xp.sum(a[0], axis=tuple(k["dims"])),
    "mean": lambda xp, a, k: xp.mean(a[0], axis=tuple(k["dims"])),
    "amax": lambda xp, a, k: xp.max(a[0], axis=tuple(k["dims"])),
    "amin": lambda xp, a, k: xp.min(a[0], axis=tuple(k["dims"])),
    "clamp": lambda xp, a, k: xp.clip(a[0], k["low"], k["high"]),
    "maximum": lambda xp, a, k: xp.maximum(a[0], a[1]),
    "minimum": lambda xp, a, k: xp.minimum(a[0], a[1]),
    "transpose": lambda xp, a, k: xp.swapaxes(a[0], *k["dims"]),
    "reshape": lambda xp, a, k: xp.reshape(a[0], tuple(k["shape"])),
    "softmax": lambda xp, a, k: _softmax(xp, a[0], k["dim"]),
    "log_softmax": lambda xp, a, k: _log_softmax(xp, a[0], k["dim"]),
}
