"""Hypothesis strategies for expression graphs, for property tests of any autograd engine.

Graphs are built by `gradcheck.graphs.generate.build_graph` from hypothesis draws (op choices, argument
picks, input values), so hypothesis shrinks a failing graph to a short chain of simple ops at
simple values. Every op stays inside its domain and a margin away from its kinks at every point,
and no node's magnitude leaves [0, 1e4]: each drawn graph can be checked closely in float64.

Example::

    from hypothesis import given
    from gradcheck.graphs.strategies import scalar_graphs
    from gradcheck import check_graph, load_engine

    ENGINE = load_engine("mypkg.adapter:MyAdapter")

    @given(scalar_graphs(ops=["add", "mul", "tanh"]))
    def test_my_engine(graph):
        assert check_graph(graph, ENGINE).passed
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from hypothesis import strategies as st

from gradcheck.graphs.generate import build_graph, build_tensor_graph, sample_points, tensor_input_shapes
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import TENSOR_OPS, resolve_ops


class DrawChooser:
    """A `Chooser` that asks hypothesis for its decisions, so hypothesis can shrink each one.

    Per node, one integer is drawn and its mixed-radix digits answer that node's choices (op,
    arguments, order): one draw instead of five, and the integer 0 still means every simplest
    choice, so shrinking it simplifies the node. Choices outside a node get a draw each.
    """

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.packed: int | None = None

    def begin_node(self) -> None:
        self.packed = self.draw(_integers(0, 2**40 - 1))

    def integer(self, lo: int, hi: int) -> int:
        if self.packed is None:
            return self.draw(_integers(lo, hi))
        self.packed, digit = divmod(self.packed, hi - lo + 1)
        return lo + digit

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options) - 1)]

    def end_nodes(self) -> None:
        self.packed = None


@lru_cache(maxsize=4096)
def _integers(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Strategies are cached: building one per draw costs more than the draw itself."""
    return st.integers(lo, hi)


def input_values() -> st.SearchStrategy[float]:
    """One input value: a float in [-4, 4] (hypothesis shrinks it toward 0 and simple numbers)."""
    return st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)


@st.composite
def scalar_graphs(
    draw: Any,
    ops: Sequence[str] | None = None,
    max_inputs: int = 4,
    max_nodes: int = 30,
    max_outputs: int = 3,
    points: int = 8,
    deep: bool = True,
    variants: frozenset[str] | None = None,
) -> Graph:
    """Scalar expression graphs over registry `ops` (default all scalar ops).

    Several inputs and outputs; a node may be used many times (diamonds, shared subexpressions).
    With `deep`, some graphs are residual chains of 52-70 ops. Each graph carries `points` input
    points: the first drawn by hypothesis (and shrunk), the rest from a drawn seed.
    """
    op_names = resolve_ops(ops)
    chooser = DrawChooser(draw)
    n_inputs = draw(st.integers(1, max_inputs), label="inputs")
    first = [draw(input_values(), label=f"x{i}") for i in range(n_inputs)]
    seed = draw(st.integers(0, 2**32 - 1), label="seed of extra points")
    # hypothesis draws tiny magnitudes itself (in the first point, which it shrinks)
    extra = sample_points(np.random.default_rng(seed), n_inputs, points - 1, tiny=False)
    batch = [np.concatenate([[v], e]) for v, e in zip(first, extra)]
    chain = deep and draw(st.integers(0, 9), label="deep chain?") == 9
    n_nodes = draw(st.integers(52, 70) if chain else st.integers(1, max_nodes), label="nodes")
    n_outputs = draw(st.integers(1, max_outputs), label="outputs")
    graph = build_graph(chooser, batch, op_names, n_nodes, n_outputs, chain=chain, variants=variants)
    if chain:
        graph.meta["deep"] = True
    return graph


@st.composite
def tensor_graphs(
    draw: Any,
    ops: Sequence[str] | None = None,
    max_inputs: int = 3,
    max_nodes: int = 16,
    max_outputs: int = 3,
    points: int = 4,
    variants: frozenset[str] | None = None,
) -> Graph:
    """Tensor expression graphs over registry `ops` (default every tensor-capable op).

    Input shapes mix ranks 0-3 with size-1 dims, so elementwise ops broadcast often; matmul,
    reductions (one dim or all), transpose, reshape, softmax and log_softmax keep their shapes
    consistent. The first point's values are drawn by hypothesis, the other points from a seed.
    `variants`: the attribute variants ops may be drawn in (None: all; `gradcheck.graphs.surface`).
    """
    op_names = resolve_ops(ops, TENSOR_OPS if ops is None else None)
    chooser = DrawChooser(draw)
    n_inputs = draw(st.integers(1, max_inputs), label="inputs")
    shapes = tensor_input_shapes(chooser, n_inputs)
    seed = draw(st.integers(0, 2**32 - 1), label="seed of extra points")
    rng = np.random.default_rng(seed)
    batch = []
    for i, shape in enumerate(shapes):
        size = int(np.prod(shape))
        first = draw(st.lists(input_values(), min_size=size, max_size=size), label=f"x{i}")
        rest = rng.uniform(-2.0, 2.0, size=(points - 1, *shape)) * 10.0 ** rng.uniform(
            -0.5, 0.5, (points - 1, *shape)
        )
        batch.append(np.concatenate([np.asarray(first, dtype=np.float64).reshape(1, *shape), rest]))
    n_nodes = draw(st.integers(1, max_nodes), label="nodes")
    n_outputs = draw(st.integers(1, max_outputs), label="outputs")
    return build_tensor_graph(chooser, shapes, batch, op_names, n_nodes, n_outputs, variants)
