"""The campaign shrinker: failures shrink to small graphs that still fail and stay in domain."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.graphs.generate import graph_in_domain, random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.regions import region_of
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shrink import frozen, shrink, shrink_graph
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


def test_frozen_nodes_become_inputs_holding_their_values_and_the_rest_is_kept():
    # x2 = x0 * x1 (frozen), v = x2 + x0, and tanh(x1) no output uses (an engine still runs it)
    nodes = [OpNode("mul", (0, 1)), OpNode("add", (2, 0)), OpNode("tanh", (1,))]
    graph = Graph([Input("x0", 0.5), Input("x1", 3.0)], nodes, [3], cotangent=[2.0])
    small = frozen(graph, [0])
    assert [n.op for n in small.nodes] == ["add", "tanh"] and small.inputs[2].value == 1.5
    assert small.nodes[0].args == (2, 0) and small.cotangent == [2.0]
    assert [n.op for n in frozen(graph, [0, 2]).nodes] == ["add"], "a frozen unused node goes"


def test_a_node_no_output_uses_is_kept_while_the_failure_needs_it():
    # the failure is the unused tanh node's (as an engine that writes into its argument fails)
    nodes = [OpNode("tanh", (0,)), OpNode("mul", (0, 0)), OpNode("add", (2, 0))]
    graph = Graph([Input("x0", 0.5)], nodes, [3])
    small = shrink_graph(graph, lambda g: "tanh" in g.ops())
    assert small.ops() == ["tanh"] and small.outputs == [0], "the output is the input tanh reads"
    assert shrink_graph(graph, lambda g: True).nodes == [], "and goes when the failure stays without it"


def test_shrinking_stops_at_its_deadline_with_the_graph_so_far():
    # the deadline is a safety cap (measured in seconds, so the test sets one already passed)
    graph = random_graph(np.random.default_rng(0), points=1)
    result = shrink(graph, lambda candidates: 0, deadline=0.0)
    assert result.graph is graph and not result.complete and result.timed_out
    done = shrink(graph, lambda candidates: None)
    assert done.graph is graph and done.complete, "no candidate fails: the graph is as small as it gets"


def test_shrinking_counts_the_candidates_it_judged_and_stops_at_its_budget_of_them():
    graph = random_graph(np.random.default_rng(0), points=1)
    judged = []

    def none_fails(candidates):
        judged.extend(candidates)
        return None

    done = shrink(graph, none_fails)
    assert done.complete and done.checks == len(judged) > 5 and not done.timed_out
    judged.clear()
    cut = shrink(graph, none_fails, max_checks=5)
    assert not cut.complete and not cut.timed_out and cut.checks == len(judged) == 5


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
