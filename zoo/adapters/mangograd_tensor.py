"""mangograd's `Tensor` (mangograd 0.1.1), adapted as docs/adapters.md describes: `+ - * / @`,
exp, log, sqrt, relu, and mean and max over one axis (its `sum` reduces everything, it has no
`**`); no `__rtruediv__`, so a number on the left of `/` is made a Tensor."""

from __future__ import annotations

import numpy as np
from mangograd import Tensor

from gradcheck.engines import EngineAdapter


def _reduced(x, method, dims):
    """mangograd's `mean` and `max` take one axis: a tuple of dims is reduced one dim at a time,
    the last first, so the others keep their positions."""
    for axis in sorted((d % x.data.ndim for d in dims), reverse=True):
        x = getattr(x, method)(axis=axis)
    return x


class MangogradTensor(EngineAdapter):
    """mangograd.Tensor on tensor graphs."""

    name = "mangograd-tensor"
    tensor = True
    ops = frozenset(
        {"add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "relu", "matmul", "mean", "amax"}
    )

    def leaf(self, value):
        return Tensor(np.array(value, dtype=np.float64))

    def apply(self, op, args, attrs):
        if op == "mean":
            return _reduced(args[0], "mean", attrs["dims"])
        if op == "amax":
            return _reduced(args[0], "max", attrs["dims"])
        if op == "div" and isinstance(args[0], float):
            return Tensor(args[0]) / args[1]  # no __rtruediv__
        return super().apply(op, args, attrs)
