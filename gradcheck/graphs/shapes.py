"""Shapes of tensor-graph values: each node's shape (from the registry's shape rules) and the
batched layout (batch, 1, ..., 1, *shape), always RANK + 1 axes.

Padding every value to the same number of axes keeps numpy's and torch's broadcasting aligned
per batch point, and the registry's negative dims never see the batch axis.
"""

from __future__ import annotations

from typing import Any

from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY

RANK = 3  # the largest rank of a tensor-graph value


def pad(x: Any, shape: tuple[int, ...]) -> Any:
    """`x` (a numpy array or torch tensor holding a batch of `shape` values) in the padded layout."""
    if x.ndim == RANK + 1 and tuple(x.shape[RANK + 1 - len(shape) :]) == tuple(shape):
        return x  # already padded (elementwise results of padded arguments)
    return x.reshape((x.shape[0],) + (1,) * (RANK - len(shape)) + tuple(shape))


def unpad(x: Any, shape: tuple[int, ...]) -> Any:
    """The inverse of `pad`: (batch, *shape)."""
    return x.reshape((x.shape[0], *shape))


def graph_shapes(graph: Graph) -> list[tuple[int, ...]]:
    """The shape of every node of a graph (inputs first), from the registry's shape rules."""
    shapes = [tuple(i.shape) for i in graph.inputs]
    for node in graph.nodes:
        arg_shapes = node.operands(shapes, lambda c: ())
        shape = REGISTRY[node.op].out_shape(arg_shapes, node.attr)
        if shape is None:
            raise ValueError(
                f"op {node.op!r} cannot take arguments of shapes {arg_shapes} (attrs {node.attr})"
            )
        shapes.append(shape)
    return shapes
