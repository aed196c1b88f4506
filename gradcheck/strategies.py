"""Hypothesis strategies for expression graphs, for property tests of any autograd engine.

Graphs are built by `gradcheck.generate.build_graph` from hypothesis draws (op choices, argument
picks, input values), so hypothesis shrinks a failing graph to a short chain of simple ops at
simple values. Every op stays inside its domain and a margin away from its kinks at every point,
and no node's magnitude leaves [0, 1e4]: each drawn graph can be checked closely in float64.

Example::

    from hypothesis import given
    from gradcheck.strategies import scalar_graphs
    from gradcheck.parity import check_graph

    @given(scalar_graphs(ops=["add", "mul", "tanh"]))
    def test_my_engine(graph):
        assert check_graph(graph, "mypkg.adapter:MyAdapter").passed
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from gradcheck.generate import build_graph, sample_points
from gradcheck.graph import Graph
from gradcheck.registry import resolve_ops


class DrawChooser:
    """A `Chooser` that asks hypothesis for every decision (so hypothesis can shrink each one)."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(list(options)))


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
    extra = sample_points(np.random.default_rng(seed), n_inputs, points - 1)
    batch = [np.concatenate([[v], e]) for v, e in zip(first, extra)]
    chain = deep and draw(st.integers(0, 9), label="deep chain?") == 9
    n_nodes = draw(st.integers(52, 70) if chain else st.integers(1, max_nodes), label="nodes")
    n_outputs = draw(st.integers(1, max_outputs), label="outputs")
    graph = build_graph(chooser, batch, op_names, n_nodes, n_outputs, chain=chain)
    if chain:
        graph.meta["deep"] = True
    return graph


def engine_graphs(engine: Any, **kwargs: Any) -> st.SearchStrategy[Graph]:
    """`scalar_graphs` restricted to the ops an engine adapter (or `load_engine` name) supports."""
    from gradcheck.backends.base import load_engine

    adapter = load_engine(engine)
    ops = [op for op in resolve_ops(kwargs.pop("ops", None)) if op in adapter.ops]
    return scalar_graphs(ops=ops, **kwargs)
