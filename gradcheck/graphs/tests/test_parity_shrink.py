"""The campaign shrinker: failures shrink to small graphs that still fail and stay in domain."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.engines.broken import AssignGrads, OffByMillionth, WrongDerivative, WrongOrder
from gradcheck.graphs.generate import graph_in_domain, random_graph
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
