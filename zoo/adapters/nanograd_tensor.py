"""nanograd-lite's `Tensor` (nanograd-lite 0.1.1, imported as `nanograd`), adapted as
docs/adapters.md describes: `sum` keeps the reduced dims unless told (`keepdims=False` passed),
softmax takes `axis`; it has no `__rsub__`, `__rtruediv__` or `__rpow__`, so a number on the left
of `-` or `/` is made a Tensor."""

from __future__ import annotations

import numpy as np
from nanograd import Tensor

from gradcheck.engines import EngineAdapter

SPELLINGS = {
    "sum": lambda a, k: a[0].sum(axis=tuple(k["dims"]), keepdims=False),
    "softmax": lambda a, k: a[0].softmax(axis=k["dim"]),
}


class NanogradTensor(EngineAdapter):
    """nanograd.Tensor on tensor graphs."""

    name = "nanograd-lite"
    tensor = True
    ops = frozenset(
        {"add", "sub", "mul", "div", "pow_const", "neg", "exp", "log", "tanh", "sigmoid", "relu", "matmul"}
        | set(SPELLINGS)
    )

    def leaf(self, value):
        return Tensor(np.array(value, dtype=np.float64))

    def apply(self, op, args, attrs):
        if op in ("sub", "div") and isinstance(args[0], float):
            args = [Tensor(args[0]), args[1]]
        if op in SPELLINGS:
            return SPELLINGS[op](args, attrs)
        return super().apply(op, args, attrs)
