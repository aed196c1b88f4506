"""The engine adapter protocol: how the harness drives any autograd engine, and `load_engine`.

A third-party engine plugs in with a few lines; e.g. for a micrograd-like engine::

    class MyAdapter(EngineAdapter):
        name = "mygrad"
        ops = frozenset({"add", "sub", "mul", "pow_const", "neg", "relu"})

        def leaf(self, value):
            return mygrad.Value(value)

Ops are spelled as in `gradcheck.graphs.registry` (`a + b`, `a ** 2.0`, `a.relu()`; a graph's
constants arrive as Python floats on either side, `2.0 - a`, so the reflected methods are checked
too), read back through
`.data`, and gradients come from `backward()` on the cotangent-weighted sum of the outputs and
each input's `.grad`; override `apply`, `value` or `gradients` where your engine differs. The
generator then draws only the ops listed in `ops`.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Constant, Graph
from gradcheck.graphs.registry import REGISTRY


class EngineAdapter:
    """Drives one engine: make leaves, apply registry ops, read values, compute gradients."""

    name: str = "engine"
    ops: frozenset[str] = frozenset()
    tensor: bool = False  # evaluates tensor graphs (inputs are float64 arrays)
    create_graph: bool = False  # second derivatives via `hvp`
    max_depth: int | None = None  # deepest graph the engine handles (e.g. recursion limits)
    dtype: str = "float64"  # the dtype tensor leaves and cotangents are made in (see `in_dtype`)
    dtypes: tuple[str, ...] = ("float64",)  # the dtypes this engine can be checked in

    def in_dtype(self, dtype: str) -> EngineAdapter:
        """This adapter computing in `dtype` ("float64" or, for tensor engines, "float32")."""
        if dtype not in self.dtypes:
            raise ValueError(f"engine {self.name!r} computes in {list(self.dtypes)}, not {dtype!r}")
        twin = copy.copy(self)
        twin.dtype = dtype
        return twin

    def leaf(self, value: Any) -> Any:
        """A differentiable leaf holding `value` (a float, or an array for tensor graphs)."""
        raise NotImplementedError(f"{type(self).__name__}.leaf is not implemented")

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        """Apply registry op `op` to engine values."""
        return REGISTRY[op].apply(args, attrs)

    def scalar_tensor(self, value: float) -> Any:
        """A 0-d float64 tensor holding `value`, without a gradient (tensor graphs' 0-d constants)."""
        return self.leaf(np.asarray(value, dtype=np.float64))

    def operand(self, constant: Constant) -> Any:
        """A graph constant as this engine's operand: a Python float, or a 0-d tensor."""
        return self.scalar_tensor(constant.value) if constant.tensor else float(constant.value)

    def value(self, node: Any) -> Any:
        """The plain value of an engine node (float or numpy array)."""
        return node.data

    def grad_of(self, leaf: Any) -> Any:
        """The gradient stored on a leaf after backward (None or 0 when unused)."""
        return leaf.grad

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        """d(sum_i cotangent_i * outputs_i)/d(input) for each input, by one backward pass."""
        loss = outputs[0] * float(cotangent[0])
        for out, c in zip(outputs[1:], cotangent[1:]):
            loss = loss + out * float(c)
        loss.backward()
        return [self.grad_of(x) for x in inputs]

    def hvp(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        """Hessian of sum_i cotangent_i * outputs_i times `direction` (engines with create_graph)."""
        raise NotImplementedError(f"engine {self.name!r} does not support second derivatives")

    # --- driving a graph -------------------------------------------------------------------------

    def build(self, graph: Graph, values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """Leaves for `values` and the graph's outputs, computed by this engine."""
        nodes = [self.leaf(v) for v in values]
        leaves = list(nodes)
        for node in graph.nodes:
            nodes.append(self.apply(node.op, node.operands(nodes, self.operand), node.attr))
        return leaves, [nodes[o] for o in graph.outputs]

    def run(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        """Forward values of the outputs and the cotangent-weighted input gradients, as numbers."""
        leaves, outputs = self.build(graph, values)
        forward = [self.value(o) for o in outputs]
        grads = self.gradients(outputs, leaves, cotangent)
        return forward, [_zero_if_none(g, v) for g, v in zip(grads, values)]

    def run_hvp(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any]
    ) -> list[Any]:
        leaves, outputs = self.build(graph, values)
        return [_zero_if_none(g, v) for g, v in zip(self.hvp(outputs, leaves, cotangent, direction), values)]


def _zero_if_none(g: Any, like: Any) -> Any:
    if g is None:
        return np.zeros_like(like) if isinstance(like, np.ndarray) else 0.0
    return g


# name -> "module:Class" for the engines that ship with the harness
BUILTIN_ENGINES: dict[str, str] = {
    "minigrad": "gradcheck.engines.minigrad_value:MinigradValue",
    "minigrad-tensor": "gradcheck.engines.minigrad_tensor:MinigradTensor",
    "micrograd": "gradcheck.engines.micrograd:MicrogradAdapter",
}


class UnknownEngineError(ValueError):
    """`load_engine` got a name it cannot resolve."""


def load_engine(name: str | EngineAdapter = "minigrad") -> EngineAdapter:
    """An adapter instance for `name`: a built-in engine name or 'package.module:AdapterClass'."""
    if isinstance(name, EngineAdapter):
        return name
    target = BUILTIN_ENGINES.get(name, name)
    if ":" not in target:
        raise UnknownEngineError(
            f"unknown engine {name!r}; valid: {', '.join(BUILTIN_ENGINES)}, or 'module:AdapterClass' "
            "naming an EngineAdapter subclass"
        )
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise UnknownEngineError(f"engine {name!r}: cannot import module {module_name!r}: {e}") from e
    cls = getattr(module, attr, None)
    if cls is None:
        raise UnknownEngineError(f"engine {name!r}: module {module_name!r} has no attribute {attr!r}")
    if isinstance(cls, type) and issubclass(cls, EngineAdapter):
        adapter = cls()
    elif isinstance(cls, EngineAdapter):
        adapter = cls
    else:
        raise UnknownEngineError(f"engine {name!r}: {target} is not an EngineAdapter subclass or instance")
    unknown = sorted(set(adapter.ops) - set(REGISTRY))
    if unknown:
        raise UnknownEngineError(f"engine {name!r} lists ops unknown to the registry: {unknown}")
    return adapter
