"""Hypothesis strategies: graphs stay in their ops' domains, cover the shapes we promise, shrink small."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, find, given, settings

from gradcheck.engines.loading import load_engine
from gradcheck.engines.strategies import engine_graphs
from gradcheck.graphs.generate import graph_in_domain, random_graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.strategies import scalar_graphs
from gradcheck.parity.compare import check_graph
from gradcheck.testing.broken_engines import WrongDerivative


@settings(max_examples=60)
@given(scalar_graphs(points=6))
def test_every_drawn_graph_is_valid_in_domain_and_checkable(graph):
    graph.validate()
    assert graph_in_domain(graph)
    assert graph.n_points == 6
    values = [np.abs(v) for v in graph.points]
    assert all(np.all(v <= 4e1) for v in values)


@settings(max_examples=30)
@given(scalar_graphs(ops=["log", "sqrt", "div", "mul", "add"], points=8))
def test_domain_restricted_ops_only_see_arguments_inside_their_domain(graph):
    assert set(graph.ops()) <= {"log", "sqrt", "div", "mul", "add"}
    assert graph_in_domain(graph)


def test_the_seeded_generator_covers_shared_nodes_deep_chains_and_several_outputs():
    rng = np.random.default_rng(0)
    graphs = [random_graph(rng, points=2) for _ in range(300)]
    assert any(max(g.use_counts()[g.n_inputs :], default=0) >= 2 for g in graphs)  # shared interior node
    assert any(any(len(set(n.args)) < len(n.args) for n in g.nodes) for g in graphs)  # x * x
    assert any(g.depth() > 50 for g in graphs)
    assert any(len(g.outputs) >= 3 for g in graphs)
    assert any(g.n_inputs >= 4 for g in graphs)
    assert {op for g in graphs for op in g.ops()} == {
        name for name, s in REGISTRY.items() if not s.tensor_only
    }


def test_the_seeded_generator_is_reproducible():
    a = random_graph(np.random.default_rng(42), points=3)
    b = random_graph(np.random.default_rng(42), points=3)
    assert a.to_json() == b.to_json()


def test_shrinking_ends_at_a_small_readable_graph():
    # smallest graph with a cos node whose gradient a sign-flipped cos derivative gets wrong
    engine = WrongDerivative()
    graph = find(
        scalar_graphs(ops=["add", "mul", "sin", "cos", "tanh"], max_nodes=12, points=2),
        lambda g: "cos" in g.ops() and not check_graph(g, engine, second_order=False).passed,
        settings=settings(
            max_examples=500, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
        ),
    )
    assert len(graph.nodes) == 1 and graph.n_inputs == 1
    assert graph.to_python().count("\n") < 15


@settings(max_examples=10, phases=[Phase.generate])
@given(engine_graphs(load_engine("micrograd"), points=2))
def test_engine_graphs_draw_only_what_the_engine_supports(graph):
    assert set(graph.ops()) <= {"add", "sub", "mul", "div", "pow_const", "neg", "relu"}
