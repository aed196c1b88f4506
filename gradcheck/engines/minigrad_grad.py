"""What both minigrad engines share as engines under test: gradients and Hessian-vector products
through `minigrad.grad`, and what `gradcheck`/`gradgradcheck` need to check any function written
with minigrad's Values and Tensors. Subclasses say how a plain number becomes an engine constant
and how an engine gradient becomes a plain number again."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

import minigrad
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_names import registry_name
from gradcheck.engines.minigrad_nn import MinigradNetwork
from gradcheck.engines.snippets import graph_snippet, own_code_repro
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.spellings import spelled_code
from gradcheck.graphs.surface import LATEST
from minigrad import Tensor, Value


class MinigradGradAdapter(EngineAdapter):
    """Base of the minigrad adapters: one `minigrad.grad` path for first and second derivatives."""

    create_graph = True
    network = MinigradNetwork()
    registry_release = LATEST  # a built-in adapter handles every form of its ops

    def constant(self, x: Any) -> Any:
        """A cotangent or direction entry as an engine constant."""
        raise NotImplementedError

    def plain(self, g: Any) -> Any:
        """An engine gradient as a float or float64 array."""
        raise NotImplementedError

    def inner(self, g: Any, u: Any) -> Any:
        """The scalar <g, u> as an engine node, differentiable through g."""
        raise NotImplementedError

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        """minigrad's own code beside torch's, with the verdict; an adapter built on this one
        elsewhere (a changed rule) gets the repro that runs the graph through itself instead."""
        if not builtin(self):
            return super().snippet(graph, second_order)
        code = graph_snippet(graph, "minigrad", second_order, spelled_code(self))
        return own_code_repro(graph, code, second_order)

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        seeds = [self.constant(c) for c in cotangent]
        grads = minigrad.grad(list(outputs), list(inputs), seeds, allow_unused=True)
        return [None if g is None else self.plain(g) for g in grads]

    def hvp(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        seeds = [self.constant(c) for c in cotangent]
        grads = minigrad.grad(list(outputs), list(inputs), seeds, create_graph=True, materialize_grads=True)
        total = None
        for g, u in zip(grads, direction):
            term = self.inner(g, u)
            total = term if total is None else total + term
        second = minigrad.grad(total, list(inputs), allow_unused=True)
        return [None if g is None else self.plain(g) for g in second]

    # --- checking any function written with Values and Tensors -----------------------------------

    value_names = "minigrad Value or Tensor"

    def is_node(self, obj: Any) -> bool:
        return isinstance(obj, (Value, Tensor))

    def is_scalar(self, node: Any) -> bool:
        return isinstance(node, Value)

    def requires_grad(self, node: Any) -> bool:
        return isinstance(node, Value) or bool(node.requires_grad)

    def as_leaf(self, obj: Any) -> Any:
        """Values and Tensors as they are; a number becomes a Value, a numpy array a float64 Tensor."""
        if self.is_node(obj):
            return obj
        if isinstance(obj, np.ndarray):
            return Tensor(obj.astype(np.float64), requires_grad=True)
        return Value(float(obj))

    def like(self, template: Any, array: np.ndarray, requires_grad: bool = False) -> Any:
        if isinstance(template, Value):
            return type(template)(float(array))
        return type(template)(array, requires_grad=requires_grad or bool(template.requires_grad))

    def no_grad(self) -> AbstractContextManager[Any]:
        return minigrad.no_grad()

    def enable_grad(self) -> AbstractContextManager[Any]:
        return minigrad.enable_grad()

    def grad(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        create_graph: bool = False,
    ) -> list[Any]:
        if create_graph:
            return list(
                minigrad.grad(
                    outputs, inputs, grad_outputs=cotangent, create_graph=True, materialize_grads=True
                )
            )
        return list(minigrad.grad(outputs, inputs, grad_outputs=cotangent, allow_unused=True))

    def op_names(self, outputs: Sequence[Any]) -> set[str]:
        names = set()
        for node in minigrad.autograd.topological_order(outputs):
            # a Value's op is micrograd's `_op` attribute (kept by minigrad for the lessons)
            name = getattr(node, "_op", None) or getattr(node, "grad_fn", None)
            if name:
                names.add(registry_name(str(name)))
        return names

    def source(self, node: Any) -> str:
        data = node.data
        if isinstance(data, np.ndarray):
            array = f"np.array({data.tolist()!r}, dtype=np.{data.dtype})"
            return f"{type(node).__name__}({array}, requires_grad=True)"
        return f"{type(node).__name__}({float(data)!r})"

    def source_imports(self, nodes: Sequence[Any]) -> list[str]:
        kinds = {type(node).__name__ for node in nodes}
        return [f"from minigrad import {', '.join(sorted(kinds))}"]


def builtin(adapter: EngineAdapter) -> bool:
    """Whether `adapter` is one of gradcheck's own minigrad adapters (not a subclass elsewhere)."""
    return type(adapter).__module__.startswith("gradcheck.engines.")
