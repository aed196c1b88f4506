"""A graph's runs at its batch points: the points, the cotangents and the Hessian-vector product's
direction drawn for them, and the references computed there in one batch each (torch in float64,
central differences). `ScalarRun` holds a scalar graph's, `TensorRun` a tensor graph's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity import torch_reference
from gradcheck.parity.numeric_reference import central_differences, central_differences_tensor

_SIGNS = np.array([-1.0, 1.0])


def random_cotangent(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Cotangent weights of either sign and magnitude 0.5-1.5: `rng.uniform(0.5, 1.5, shape)` times
    `rng.choice([-1.0, 1.0], shape)`, whose draws `integers(0, 2, shape)` makes in half the time."""
    return rng.uniform(0.5, 1.5, size=shape) * _SIGNS[rng.integers(0, 2, size=shape)]


class ScalarRun:
    """A scalar graph at K points: one (K,) vector per input, one cotangent per output and point."""

    def __init__(self, graph: Graph, k: int, rng: np.random.Generator, hvp: bool) -> None:
        self.graph = graph
        if graph.points is not None:
            self.batch = [np.asarray(p, dtype=np.float64)[:k] for p in graph.points]
        else:
            self.batch = [np.array([float(inp.value)]) for inp in graph.inputs]
        n_out = len(graph.outputs)
        if graph.cotangent is not None:
            self.cot = np.repeat(np.asarray(graph.cotangent, dtype=np.float64)[:, None], k, axis=1)
        else:
            self.cot = random_cotangent(rng, (n_out, k))
        self.direction = rng.normal(size=(graph.n_inputs, k)) if hvp else None
        self.labels = [inp.name for inp in graph.inputs]

    def numeric(self) -> Any:
        return central_differences(self.graph, self.batch, self.cot)

    def torch(self) -> Any:
        return torch_reference.run_torch_batch(self.graph, self.batch, self.cot, self.direction)

    def values(self, points: list[int]) -> list[list[Any]]:
        """The inputs' values at each of `points` (ascending), as floats."""
        return _at(np.array(self.batch), points).T.tolist()

    def cotangents(self, points: list[int]) -> list[list[Any]]:
        return _at(self.cot, points).T.tolist()

    def direction_at(self, p: int) -> list[Any]:
        assert self.direction is not None
        return self.direction[:, p].tolist()


def _at(matrix: np.ndarray, points: list[int]) -> np.ndarray:
    """The columns `points` (ascending, distinct) of `matrix`: all of it without a copy when they
    are all its columns (indexing by a list costs a few microseconds, about what a point's check does)."""
    return matrix if len(points) == matrix.shape[1] else matrix[:, points]


class TensorRun:
    """A tensor graph at K points: arrays (K, *shape) per input, per output cotangent and direction."""

    def __init__(self, graph: Graph, k: int, rng: np.random.Generator, hvp: bool) -> None:
        self.graph = graph
        shapes = graph_shapes(graph)
        if graph.points is not None:
            self.batch = [np.asarray(p, dtype=np.float64)[:k] for p in graph.points]
        else:
            self.batch = [np.asarray(inp.value, dtype=np.float64)[None] for inp in graph.inputs]
        out_shapes = [shapes[o] for o in graph.outputs]
        if graph.cotangent is not None:
            self.cot = [
                np.broadcast_to(np.asarray(c, dtype=np.float64), (k, *s))
                for c, s in zip(graph.cotangent, out_shapes)
            ]
        else:
            self.cot = [random_cotangent(rng, (k, *s)) for s in out_shapes]
        self.direction = [rng.normal(size=(k, *i.shape)) for i in graph.inputs] if hvp else None
        self.labels = [
            f"{inp.name}{list(ix) if inp.shape else ''}"
            for inp in graph.inputs
            for ix in np.ndindex(*inp.shape)
        ]

    def numeric(self) -> Any:
        return central_differences_tensor(self.graph, self.batch, self.cot)

    def torch(self) -> Any:
        return torch_reference.run_torch_tensor_batch(self.graph, self.batch, self.cot, self.direction)

    def values(self, points: list[int]) -> list[list[Any]]:
        """The inputs' arrays at each of `points`."""
        return [[np.array(b[p]) for b in self.batch] for p in points]

    def cotangents(self, points: list[int]) -> list[list[Any]]:
        return [[np.array(c[p]) for c in self.cot] for p in points]

    def direction_at(self, p: int) -> list[Any]:
        assert self.direction is not None
        return [np.array(d[p]) for d in self.direction]
