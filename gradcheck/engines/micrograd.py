"""PyPI `micrograd` (Karpathy's engine) through the adapter protocol: the plug-in proof."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.snippets import micrograd_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.surface import LATEST


class MicrogradAdapter(EngineAdapter):
    """micrograd.engine.Value: + - * / ** with number exponents, neg and relu.

    micrograd keeps each node's inputs in a set and sums gradients in the order its topological
    sort walks those sets, an order that follows the nodes' addresses: the same graph's gradients
    then differ in their last bits from one run (or one --jobs split) to the next, and so would
    the report's figures. Every order is a correct sum, so the adapter fixes one: nodes hash by
    their value (`value_hash`; equality stays identity), which makes the walk, and the report,
    the same in every run. micrograd's code is otherwise what runs, sets included.
    """

    ops_tried_at_load = True  # PyPI micrograd's few ops are known to return

    name = "micrograd"
    registry_release = LATEST  # a built-in adapter handles every form of its ops
    ops = frozenset({"add", "sub", "mul", "div", "pow_const", "neg", "relu"})
    max_depth = 300  # its recursive topological sort overflows the stack on deep graphs

    def leaf(self, value: Any) -> Any:
        from micrograd.engine import Value

        if Value.__hash__ is not value_hash:
            Value.__hash__ = value_hash  # type: ignore[method-assign]
        return Value(float(value))

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        """micrograd's own spelling (it has no second derivatives, so never second order)."""
        return micrograd_snippet(graph)


def value_hash(node: Any) -> int:
    """A micrograd node's hash from its value, the same in every process (nan: 0, since a nan's
    own hash follows its address): what orders micrograd's sets of nodes."""
    data = node.data
    return hash(data) if data == data else 0


class MicrogradFixedAdapter(MicrogradAdapter):
    """micrograd with its one known bug patched: `x ** 0` differentiates to 0 (micrograd computes
    0 * x**-1, a ZeroDivisionError at x = 0). What is left must agree with torch everywhere."""

    name = "micrograd-fixed"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "pow_const" and attrs["exponent"] == 0:
            from micrograd.engine import Value

            return Value(1.0, (args[0],), "**0")  # a constant: its default backward adds nothing
        return super().apply(op, args, attrs)
