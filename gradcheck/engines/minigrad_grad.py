"""What both minigrad engines share as engines under test: gradients and Hessian-vector products
through `minigrad.grad`. Subclasses say how a plain number becomes an engine constant and how an
engine gradient becomes a plain number again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import minigrad
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Graph


class MinigradGradAdapter(EngineAdapter):
    """Base of the minigrad adapters: one `minigrad.grad` path for first and second derivatives."""

    create_graph = True

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
        return graph_snippet(graph, "minigrad", second_order)

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
