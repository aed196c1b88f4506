"""PyPI `micrograd` (Karpathy's engine) through the adapter protocol: the plug-in proof."""

from __future__ import annotations

from typing import Any

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.snippets import micrograd_snippet
from gradcheck.graphs.ir import Graph


class MicrogradAdapter(EngineAdapter):
    """micrograd.engine.Value: + - * / ** with number exponents, neg and relu."""

    name = "micrograd"
    ops = frozenset({"add", "sub", "mul", "div", "pow_const", "neg", "relu"})
    max_depth = 300  # its recursive topological sort overflows the stack on deep graphs

    def leaf(self, value: Any) -> Any:
        from micrograd.engine import Value

        return Value(float(value))

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        """micrograd's own spelling (it has no second derivatives, so never second order)."""
        return micrograd_snippet(graph)
