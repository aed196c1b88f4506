"""The campaign shrinker: failures shrink to small graphs that still fail and stay in domain."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.graphs.generate import graph_in_domain, random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.regions import region_of
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.parity.compare import check_graph
from gradcheck.testing.broken_engines import AssignGrads, OffByMillionth, WrongDerivative, WrongOrder


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


def test_a_node_can_be_frozen_into_an_input_holding_its_value_so_shrinking_crosses_a_pole():
    # 1.0 / sigmoid(x0) at x0 = -800: sigmoid underflows to 0, the division is at its pole. Bypassing
    # sigmoid gives 1.0 / -800 (no pole); freezing it gives 1.0 / 0.0, the one-op repro.
    graph = Graph(
        [Input("x0", -800.0)],
        [OpNode("sigmoid", (0,)), OpNode("div", (1,), consts=(Constant(0, 1.0),))],
        [2],
    )

    def divides_by_zero(g: Graph) -> bool:
        values = [float(i.value) for i in g.inputs]
        for node in g.nodes:
            args = node.operands(values)
            if node.op == "div" and args[1] == 0.0:
                return True
            values.append(
                float(np.asarray(REGISTRY[node.op].numpy([np.float64(a) for a in args], node.attr)))
            )
        return False

    with np.errstate(over="ignore"):
        shrunk = shrink_graph(graph, divides_by_zero)
    assert [n.op for n in shrunk.nodes] == ["div"] and [i.value for i in shrunk.inputs] == [0.0]
    assert region_of(shrunk) == "pole"


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
