"""A compiled Program computes what reading the graph's nodes one by one computes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.program import Program
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.strategies import scalar_graphs


def by_nodes(graph: Graph, leaves: list[float]) -> list[float]:
    """Every node's value by the registry's numpy spelling, reading each node's operands."""
    nodes = list(leaves)
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            nodes.append(REGISTRY[node.op].numpy(node.operands(nodes), node.attr))
    return nodes


@settings(max_examples=60)
@given(scalar_graphs())
def test_a_program_computes_every_node_as_the_graph_says(graph):
    leaves = [np.float64(v) for v in graph.input_values()]
    with np.errstate(all="ignore"):
        compiled = Program(graph, lambda op: REGISTRY[op].numpy).run(leaves, lambda c: c.value)
    assert np.array_equal(compiled, by_nodes(graph, leaves), equal_nan=True)


def test_constants_take_their_positions():
    """2 - x, x / 4 and a three-operand op with constants around its one node operand."""
    ternary = lambda args, attrs: tuple(args)
    nodes = [
        OpNode("sub", (0,), consts=(Constant(0, 2.0),)),
        OpNode("div", (0,), consts=(Constant(1, 4.0),)),
        OpNode("ternary", (2,), consts=(Constant(2, 9.0), Constant(0, 7.0))),
    ]
    graph = Graph([Input("x0", 1.0)], nodes, [3])
    program = Program(graph, lambda op: ternary if op == "ternary" else REGISTRY[op].apply)
    assert program.run([1.0], lambda c: c.value) == [1.0, 1.0, 0.25, (7.0, 0.25, 9.0)]


def test_attributes_and_fresh_constants_at_each_run():
    graph = Graph([Input("x0", 3.0)], [OpNode("pow_const", (0,), (("exponent", 2.0),))], [1])
    made = []
    program = Program(graph)
    for x in (3.0, -1.5):
        assert program.run([x], made.append) == [x, x**2.0]
    assert made == []  # no constants, none made
    graph = Graph([Input("x0", 3.0)], [OpNode("mul", (0,), consts=(Constant(1, 0.5),))], [1])
    values = iter([0.5, 4.0])
    program = Program(graph)
    assert [program.run([2.0], lambda c: next(values))[-1] for _ in range(2)] == [1.0, 8.0]
    assert program.outputs == (1,)
