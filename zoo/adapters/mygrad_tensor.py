"""MyGrad's `Tensor` (mygrad 2.5.0), adapted as docs/adapters.md describes: numpy's spellings
(`axis=`, `keepdims=`, `mg.clip`), its activations from `mygrad.nnet.activations`."""

from __future__ import annotations

import mygrad as mg
import numpy as np
from mygrad.nnet.activations import logsoftmax, sigmoid, softmax

from gradcheck.engines import EngineAdapter


def _dims(attrs):
    return tuple(attrs["dims"])


SPELLINGS = {
    "pow": lambda a, k: a[0] ** a[1],
    "relu": lambda a, k: mg.maximum(a[0], 0.0),
    "tanh": lambda a, k: mg.tanh(a[0]),
    "sigmoid": lambda a, k: sigmoid(a[0]),
    "exp": lambda a, k: mg.exp(a[0]),
    "log": lambda a, k: mg.log(a[0]),
    "sin": lambda a, k: mg.sin(a[0]),
    "cos": lambda a, k: mg.cos(a[0]),
    "atan": lambda a, k: mg.arctan(a[0]),
    "atan2": lambda a, k: mg.arctan2(a[0], a[1]),
    "sqrt": lambda a, k: mg.sqrt(a[0]),
    "abs": lambda a, k: mg.absolute(a[0]),
    "matmul": lambda a, k: mg.matmul(a[0], a[1]),
    "sum": lambda a, k: mg.sum(a[0], axis=_dims(k), keepdims=k.get("keepdim", False)),
    "mean": lambda a, k: mg.mean(a[0], axis=_dims(k), keepdims=k.get("keepdim", False)),
    "amax": lambda a, k: mg.max(a[0], axis=_dims(k)),
    "amin": lambda a, k: mg.min(a[0], axis=_dims(k)),
    "clamp": lambda a, k: mg.clip(a[0], k["low"], k["high"]),
    "maximum": lambda a, k: mg.maximum(a[0], a[1]),
    "minimum": lambda a, k: mg.minimum(a[0], a[1]),
    "transpose": lambda a, k: mg.swapaxes(a[0], *k["dims"]),
    "reshape": lambda a, k: mg.reshape(a[0], tuple(k["shape"])),
    "softmax": lambda a, k: softmax(a[0], axis=k["dim"]),
    "log_softmax": lambda a, k: logsoftmax(a[0], axis=k["dim"]),
}


class MyGradTensor(EngineAdapter):
    """mygrad.Tensor on tensor graphs: arithmetic by its operators, the rest by its functions."""

    name = "mygrad"
    tensor = True
    ops = frozenset({"add", "sub", "mul", "div", "pow_const", "neg", *SPELLINGS})
    registry_release = 2  # keepdims is passed on; mg.matmul takes vectors and batches

    def leaf(self, value):
        return mg.tensor(np.array(value, dtype=np.float64))

    def scalar_tensor(self, value):
        return mg.tensor(np.asarray(value, dtype=np.float64), constant=True)

    def constant(self, x):
        return mg.tensor(np.asarray(x, dtype=np.float64), constant=True)

    def apply(self, op, args, attrs):
        if op in SPELLINGS:
            return SPELLINGS[op](args, attrs)
        return super().apply(op, args, attrs)
