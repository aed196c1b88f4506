"""minigrad's `Tensor` (float64) as an engine under test: scalar and tensor graphs, second derivatives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_grad import MinigradGradAdapter, builtin
from gradcheck.engines.minigrad_value import BUILTIN_ABS, INT_EXPONENT
from gradcheck.engines.snippets import backward_snippet, own_code_repro
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import TENSOR_OPS
from gradcheck.graphs.spellings import Spelling, spelled_code
from minigrad import Tensor, functional

# The other spellings minigrad's Tensor documents: the built-in abs(), and `**` with an integer
# exponent, a Python int (the scalar-exponent rule) or an integer array (the two-operand rule).
TENSOR_SPELLINGS = (
    BUILTIN_ABS,
    INT_EXPONENT,
    Spelling(
        "pow_const",
        "x ** int array",
        lambda a, k: a[0] ** np.asarray(int(k["exponent"])),
        integer_exponent=True,
        code=lambda a, k: f"{a[0]} ** np.asarray({int(k['exponent'])})",
    ),
)

# The registry spells every op as a method (`x.softmax(dim)`); minigrad has these as functions.
_FUNCTIONS: dict[str, Callable[[Tensor, int], Tensor]] = {
    "softmax": functional.softmax,
    "log_softmax": functional.log_softmax,
}


def _tensor(x: Any) -> Tensor:
    return Tensor(np.asarray(x, dtype=np.float64))


# relu(linear(...)) as minigrad's fused op (the registry spells it as linear, then relu)
_FUSED = frozenset({"linear_relu", "linear_relu_no_bias"})


class MinigradTensor(MinigradGradAdapter):
    """minigrad.Tensor. First derivatives through `Tensor.backward`, the path training takes (its
    pass owns gradient buffers that relu and linear_relu mask in place); second derivatives
    through `minigrad.grad` with one cotangent tensor per output."""

    name = "minigrad-tensor"
    ops = frozenset(TENSOR_OPS)
    spellings = TENSOR_SPELLINGS
    tensor = True
    dtypes = ("float64", "float32")

    def leaf(self, value: Any) -> Tensor:
        return Tensor(np.array(value, dtype=self.dtype), requires_grad=True)

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op in _FUNCTIONS:
            return _FUNCTIONS[op](args[0], attrs["dim"])
        if op in _FUSED:
            return functional.linear_relu(*args)
        return super().apply(op, args, attrs)

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        if second_order or not graph.is_tensor or not builtin(self):
            return super().snippet(graph, second_order)
        return own_code_repro(graph, backward_snippet(graph, spelled_code(self)))

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        """One `backward()` of the cotangent-weighted outputs; each input's `.grad`."""
        return EngineAdapter.gradients(self, outputs, inputs, cotangent)

    def scalar_tensor(self, value: float) -> Tensor:
        return _tensor(value)

    def value(self, node: Tensor) -> np.ndarray:
        return node.data

    def constant(self, x: Any) -> Tensor:
        return Tensor(np.asarray(x, dtype=self.dtype))

    def plain(self, g: Tensor) -> np.ndarray:
        return g.data

    def inner(self, g: Tensor, u: Any) -> Tensor:
        return (g * _tensor(u)).sum()
