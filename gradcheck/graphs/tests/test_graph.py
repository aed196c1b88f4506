"""The graph IR: JSON round trip, validation errors, and snippets that run and agree with the check."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings

import minigrad
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, GraphFormatError, Input, OpNode
from gradcheck.graphs.strategies import scalar_graphs


def diamond() -> Graph:
    # v2 = x0 * x1 feeds both v3 and v4: a diamond
    nodes = [OpNode("mul", (0, 1)), OpNode("sin", (2,)), OpNode("pow_const", (2,), (("exponent", 2.0),))]
    nodes.append(OpNode("add", (3, 4)))
    return Graph([Input("x0", 0.5), Input("x1", -1.5)], nodes, [5, 3], cotangent=[1.0, -2.0])


def test_structure_queries_on_a_diamond():
    g = diamond()
    assert g.ops() == ["mul", "sin", "pow_const", "add"]
    assert g.depth() == 3
    assert g.use_counts() == [1, 1, 2, 1, 1, 0]
    assert not g.is_tensor


@settings(max_examples=30)
@given(scalar_graphs(points=3))
def test_json_round_trip_is_exact(graph):
    again = Graph.from_json(graph.to_json())
    assert again.to_dict() == graph.to_dict()
    for p, q in zip(again.points, graph.points):
        assert np.array_equal(p, q)


def test_instance_takes_one_point_of_the_batch():
    g = random_graph(np.random.default_rng(3), points=5)
    inst = g.instance(2, cotangent=[0.5] * len(g.outputs))
    assert inst.points is None and inst.cotangent == [0.5] * len(g.outputs)
    assert [i.value for i in inst.inputs] == [float(p[2]) for p in g.points]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(version=99), "unsupported version 99"),
        (lambda d: d.update(format="other"), "'format' must be"),
        (lambda d: d["nodes"].append({"op": "frobnicate", "args": [0]}), "unknown op 'frobnicate'"),
        (lambda d: d["nodes"].append({"op": "add", "args": [0]}), "takes 2 arguments, got 1"),
        (lambda d: d["nodes"].append({"op": "neg", "args": [99]}), "argument id 99"),
        (lambda d: d.update(outputs=[42]), "output id 42"),
        (lambda d: d.update(outputs=[]), "no outputs"),
        (lambda d: d["inputs"][0].update(value="one"), "is not a number"),
        (lambda d: d.update(cotangent=[1.0]), "cotangent has 1 entries for 2 outputs"),
        (lambda d: d.pop("nodes"), "'nodes' must be a list"),
    ],
)
def test_malformed_graphs_are_rejected_with_the_problem_named(mutate, message):
    d = diamond().to_dict()
    mutate(d)
    with pytest.raises(GraphFormatError, match=message):
        Graph.from_dict(json.loads(json.dumps(d)))


def test_from_json_rejects_invalid_json():
    with pytest.raises(GraphFormatError, match="not valid JSON"):
        Graph.from_json("{nodes: ")


def _run_snippet(source: str) -> tuple:
    namespace: dict = {"print": lambda *a: None}
    exec(compile(source, "<snippet>", "exec"), namespace)
    return namespace["outputs"], namespace["grads"]


def test_snippets_run_and_compute_the_same_gradients_in_minigrad_and_torch():
    g = diamond()
    m_out, m_grads = _run_snippet(g.to_python("minigrad"))
    t_out, t_grads = _run_snippet(g.to_python("torch"))
    x0, x1 = 0.5, -1.5
    a = x0 * x1
    # d/dx of 1.0 * (sin a + a^2) - 2.0 * sin a = -sin a... written out:
    da = math.cos(a) + 2 * a - 2.0 * math.cos(a)
    expected = [da * x1, da * x0]
    assert isinstance(m_out[0], minigrad.Value) and isinstance(t_out[0], torch.Tensor)
    assert [float(v) for v in m_grads] == pytest.approx(expected, rel=1e-14)
    assert [float(v) for v in t_grads] == pytest.approx(expected, rel=1e-14)


@settings(max_examples=20)
@given(scalar_graphs(points=1))
def test_snippets_of_random_graphs_run_in_both_targets(graph):
    m_out, m_grads = _run_snippet(graph.to_python("minigrad"))
    t_out, t_grads = _run_snippet(graph.to_python("torch"))
    assert [o.data for o in m_out] == pytest.approx([o.item() for o in t_out], rel=1e-9, abs=1e-12)
    for m, t in zip(m_grads, t_grads):
        assert (m is None) == (t is None)


def test_to_python_rejects_an_unknown_target():
    with pytest.raises(ValueError, match="'minigrad' or 'torch'"):
        diamond().to_python("jax")


def tensor_graph() -> Graph:
    x = Input("x0", np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), (2, 3))
    y = Input("x1", np.array([[1.0], [-2.0]]), (2, 1))
    nodes = [
        OpNode("mul", (0, 1)),  # broadcasting (2, 3) * (2, 1)
        OpNode("softmax", (2,), (("dim", -1),)),
        OpNode("sum", (3,), (("dims", (-2,)),)),
        OpNode("transpose", (2,), (("dims", (-2, -1)),)),
    ]
    return Graph([x, y], nodes, [4, 5], meta={"kind": "tensor"})


def test_tensor_graphs_round_trip_through_json():
    g = tensor_graph()
    again = Graph.from_json(g.to_json())
    assert again.is_tensor and again.inputs[1].shape == (2, 1)
    np.testing.assert_array_equal(again.inputs[0].value, g.inputs[0].value)
    assert again.to_dict() == g.to_dict()


def test_tensor_snippets_run_in_minigrad_and_torch_and_agree():
    g = tensor_graph()
    m_out, m_grads = _run_snippet(g.to_python("minigrad"))
    t_out, t_grads = _run_snippet(g.to_python("torch"))
    assert t_out[0].shape == m_out[0].shape
    assert isinstance(m_out[0], minigrad.Tensor)
    for m, t in zip(m_grads, t_grads):
        np.testing.assert_allclose(m.data, t.numpy(), rtol=1e-13, atol=1e-15)
