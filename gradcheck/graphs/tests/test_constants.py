"""Constants as operands: numbers on either side of binary ops, in JSON, snippets, generation, shrinking."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import minigrad
from gradcheck.engines.loading import load_engine
from gradcheck.graphs import corpus_format
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Constant, Graph, GraphFormatError, Input, OpNode
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.graphs.strategies import scalar_graphs
from gradcheck.parity.compare import check_graph
from parity_tests import CORPUS


def reflected() -> Graph:
    """2 - x0, 3 / that, 0.5 ** x0, summed: every constant on the left."""
    nodes = [
        OpNode("sub", (0,), consts=(Constant(0, 2.0),)),
        OpNode("div", (1,), consts=(Constant(0, 3.0),)),
        OpNode("pow", (0,), consts=(Constant(0, 0.5),)),
        OpNode("add", (2, 3)),
    ]
    return Graph([Input("x0", 0.75)], nodes, [4])


def test_operands_put_constants_at_their_positions():
    node = OpNode("sub", (5,), consts=(Constant(0, 2.0),))
    assert node.arity == 2
    assert node.operands(["a", "b", "c", "d", "e", "f"]) == [2.0, "f"]
    right = OpNode("sub", (5,), consts=(Constant(1, -1.0),))
    assert right.operands(list("abcdef"), lambda c: f"<{c.value}>") == ["f", "<-1.0>"]


def test_constants_round_trip_through_json_as_version_2():
    g = reflected()
    d = g.to_dict()
    assert d["version"] == 2
    assert d["nodes"][0]["consts"] == [{"at": 0, "value": 2.0}]
    again = Graph.from_json(g.to_json())
    assert again.nodes == g.nodes


def test_graphs_without_constants_stay_version_1_and_old_files_load():
    g = Graph([Input("x0", 0.5)], [OpNode("sin", (0,))], [1])
    assert g.to_dict()["version"] == 1 and "consts" not in g.to_dict()["nodes"][0]
    for path in corpus_format.corpus_files(CORPUS):
        if json.loads(path.read_text())["version"] == 1:
            graph = corpus_format.load(path)
            assert all(not n.consts for n in graph.nodes)
            assert graph.to_dict()["version"] == 1


@pytest.mark.parametrize(
    ("consts", "message"),
    [
        ([{"at": 0, "value": 1.0}, {"at": 1, "value": 2.0}], "at least one operand a node"),
        ([{"at": 0, "value": 1.0}, {"at": 0, "value": 2.0}], "takes 2 arguments, got 1 and 2 constant"),
        ([{"at": 3, "value": 1.0}], "constant position 3"),
        ([{"at": 0, "value": "two"}], "is not a number"),
    ],
)
def test_malformed_constants_are_named(consts, message):
    d = reflected().to_dict()
    d["nodes"][0]["consts"] = consts
    if consts[-1]["at"] == 1:
        d["nodes"][0]["args"] = []
    with pytest.raises(GraphFormatError, match=message):
        Graph.from_dict(d)


def test_snippets_spell_constants_and_agree_with_torch():
    g = reflected()
    g.cotangent = [1.0]
    code = g.to_python("minigrad")
    assert "v1 = 2.0 - x0" in code and "v2 = 3.0 / v1" in code and "v3 = 0.5 ** x0" in code
    scope: dict = {}
    exec(g.to_python("torch"), scope)
    torch_grad = float(scope["grads"][0])
    scope = {}
    exec(code, scope)
    assert float(scope["grads"][0]) == pytest.approx(torch_grad, rel=1e-12)
    assert check_graph(g, load_engine("minigrad")).passed


def test_negative_constants_keep_their_meaning_in_snippets():
    g = Graph([Input("x0", 1.5)], [OpNode("pow", (0,), consts=(Constant(1, -1.0),))], [1], cotangent=[1.0])
    assert "x0 ** (-1.0)" in g.to_python("torch")


def test_tensor_constants_are_zero_dim_tensors_in_snippets():
    node = OpNode("mul", (0,), consts=(Constant(0, 2.0, tensor=True),))
    g = Graph([Input("x0", np.array([1.0, 2.0]), (2,))], [node], [1], meta={"kind": "tensor"})
    assert "torch.tensor(2.0, dtype=torch.float64) * x0" in g.to_python("torch")
    assert "Tensor(2.0, dtype=minigrad.float64) * x0" in g.to_python("minigrad")
    assert minigrad is not None and torch is not None
    assert check_graph(g, load_engine("minigrad-tensor")).passed


def test_random_graphs_put_constants_on_both_sides_and_draw_exponent_0():
    sides = {0: 0, 1: 0}
    exponents = set()
    for index in range(300):
        g = random_graph(np.random.default_rng([7, index]), points=4)
        for node in g.nodes:
            for c in node.consts:
                sides[c.at] += 1
            if node.op == "pow_const":
                exponents.add(node.attr["exponent"])
    assert sides[0] > 100 and sides[1] > 100, sides
    assert abs(sides[0] - sides[1]) < 0.3 * (sides[0] + sides[1])
    assert {0.0, 1.0, 2.0, -1.0, 0.5, 1.5} <= exponents


def test_inputs_at_exact_zero_arise():
    zeros = sum(
        int((np.concatenate(random_graph(np.random.default_rng([8, i]), points=4).points) == 0).sum())
        for i in range(100)
    )
    assert zeros > 10


def test_hypothesis_graphs_carry_constants():
    from hypothesis import given, settings

    seen = []

    @settings(max_examples=60, derandomize=True, database=None)
    @given(scalar_graphs(ops=["sub", "div", "sin"], points=2))
    def collect(graph):
        seen.extend(c for n in graph.nodes for c in n.consts)

    collect()
    assert {c.at for c in seen} == {0, 1}


def test_shrinking_moves_constants_toward_0_and_1():
    nodes = [OpNode("mul", (0,), consts=(Constant(1, 7.25),)), OpNode("sin", (1,))]
    g = Graph([Input("x0", 0.5)], nodes, [2])

    def fails(candidate: Graph) -> bool:  # "fails" while a mul by a constant is present
        return any(n.op == "mul" and n.consts for n in candidate.nodes)

    small = shrink_graph(g, fails)
    assert [n.op for n in small.nodes] == ["mul"]
    assert small.nodes[0].consts[0].value == 0.0
