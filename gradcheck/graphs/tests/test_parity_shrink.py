"""The campaign shrinker: failures shrink to small graphs that still fail and stay in domain."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.engines.broken import AssignGrads, OffByMillionth, WrongDerivative, WrongOrder
from gradcheck.graphs.generate import graph_in_domain, random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.parity.compare import check_graph


@pytest.mark.parametrize(
    ("engine", "max_nodes"),
    [(AssignGrads(), 2), (WrongDerivative(), 1), (OffByMillionth(), 1), (WrongOrder(), 4)],
)
def test_failures_shrink_to_a_few_nodes(engine, max_nodes):
    rng = np.random.default_rng(3)
    for index in range(100):
        result = check_graph(random_graph(rng, points=8), engine, seed=index)
        if not result.passed:
            break
    assert result.failure is not None

    def fails(g):
        return not check_graph(g, engine, seed=index).passed

    small = shrink_graph(result.failure, fails)
    assert len(small.nodes) <= max_nodes < len(result.failure.nodes) + 1
    assert fails(small) and graph_in_domain(small)
    assert small.points is None and len(small.cotangent) == len(small.outputs)


def test_a_passing_predicate_leaves_the_graph_alone():
    g = random_graph(np.random.default_rng(0), points=1)
    assert shrink_graph(g, lambda _: False) is g


@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("transpose", {"dims": (-2, -1)}),
        ("sum", {"dims": (-3,)}),
        ("reshape", {"shape": (2, 2), "ndim_in": 1}),
    ],
)
def test_a_shrunk_tensor_candidate_whose_attributes_no_longer_fit_its_operand_is_out_of_domain(op, attrs):
    """Shrinking rewires a node to another operand; attributes drawn for a (2, 3) one do not fit (3,)."""
    node = OpNode(op, (0,), tuple(sorted(attrs.items())))
    graph = Graph([Input("x0", np.ones(3), (3,))], [node], [1], meta={"kind": "tensor"})
    assert not graph_in_domain(graph)
