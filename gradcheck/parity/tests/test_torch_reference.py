"""The torch reference, scalar and tensor, and the rounding bound's torch passes spell some ops
their own way (`REFERENCE_RULES`) for speed: each gives torch's own numbers to the bit, values,
gradients and Hessian-vector products, kinks included."""

import numpy as np
import pytest

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.program import Program
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.copies import Copies
from gradcheck.parity.torch_reference import (
    REFERENCE_RULES,
    forward_values,
    reference_rule,
    reverse,
    run_torch_batch,
    run_torch_tensor_batch,
    torch_constant,
)

POINTS = np.array([[-1.5, -0.0, 0.0, 1e-300, 0.7, 3.0]])


@pytest.mark.parametrize("op", sorted(REFERENCE_RULES))
def test_a_reference_rule_gives_torchs_numbers_to_the_bit(op):
    # the op of a square, so the product's second derivative runs through the op's backward
    graph = Graph([Input("x0", 0.5)], [OpNode("mul", (0, 0)), OpNode(op, (1,)), OpNode("mul", (2, 0))], [3])
    cot, direction = (
        np.array([[0.7, -1.1, 1.3, 0.9, -0.6, 1.2]]),
        np.array([[0.3, 1.0, -2.0, 0.5, 0.8, -1.0]]),
    )
    ours = run_torch_batch(graph, list(POINTS), cot, direction)
    x = torch.tensor(POINTS[0], requires_grad=True)
    out = getattr(torch, op)(x * x) * x
    (grad,) = torch.autograd.grad(out, x, torch.from_numpy(cot[0]), create_graph=True)
    (hvp,) = torch.autograd.grad(grad, x, torch.from_numpy(direction[0]))
    assert np.array_equal(ours.forward[0], out.detach().numpy())
    assert np.array_equal(ours.grads[0], grad.detach().numpy())
    assert np.array_equal(ours.hvp[0], hvp.numpy())


def test_abs_keeps_torchs_derivative_zero_at_zero():
    graph = Graph([Input("x0", 0.0)], [OpNode("abs", (0,))], [1])
    result = run_torch_batch(graph, [np.array([0.0, -2.0, 2.0])], np.ones((1, 3)))
    assert result.grads[0].tolist() == [0.0, -1.0, 1.0]


def test_forward_values_are_the_references_outputs_to_the_bit_scalar_and_tensor():
    rng = np.random.default_rng(3)
    for _ in range(30):
        for graph in (random_graph(rng, points=4), random_graph(rng, tensor=True, points=2)):
            batch = [np.asarray(p, dtype=np.float64) for p in graph.points]
            if graph.is_tensor:
                shapes = graph_shapes(graph)
                cots = [np.ones((2, *shapes[o])) for o in graph.outputs]
                reference = run_torch_tensor_batch(graph, batch, cots)
            else:
                reference = run_torch_batch(graph, batch, np.ones((len(graph.outputs), 4)))
            assert np.array_equal(forward_values(graph, batch), reference.forward, equal_nan=True)


@pytest.mark.parametrize("op", sorted(REFERENCE_RULES))
def test_the_tensor_reference_spells_the_op_its_way_with_torchs_numbers_to_the_bit(op):
    x = np.array([[-1.5, -0.0, 0.0, 1e-300, 0.7, 3.0]])
    graph = Graph(
        [Input("x0", x[0], (6,))],
        [OpNode("mul", (0, 0)), OpNode(op, (1,)), OpNode("mul", (2, 0))],
        [3],
        meta={"kind": "tensor"},
    )
    cot = np.array([[0.7, -1.1, 1.3, 0.9, -0.6, 1.2]])
    direction = np.array([[0.3, 1.0, -2.0, 0.5, 0.8, -1.0]])
    ours = run_torch_tensor_batch(graph, [x], [cot], [direction])
    t = torch.tensor(x[0], requires_grad=True)
    out = getattr(torch, op)(t * t) * t
    (grad,) = torch.autograd.grad(out, t, torch.from_numpy(cot[0]), create_graph=True)
    (hvp,) = torch.autograd.grad(grad, t, torch.from_numpy(direction[0]))
    assert np.array_equal(ours.forward[:, 0], out.detach().numpy())
    assert np.array_equal(ours.grads[:, 0], grad.detach().numpy())
    assert np.array_equal(ours.hvp[:, 0], hvp.numpy())


@pytest.mark.parametrize("tensor", [False, True])
def test_the_rounding_bounds_passes_spell_ops_as_the_reference_does(tensor):
    # torch's abs differentiated twice runs sgn's derivative through a Python decomposition, whose
    # first call imports torch._dynamo (0.8 s in every worker process)
    value = np.array([0.5, -2.0]) if tensor else 0.5
    meta = {"kind": "tensor"} if tensor else {}
    graph = Graph([Input("x0", value, np.shape(value))], [OpNode("abs", (0,))], [1], meta=meta)
    batch = [np.asarray(value, dtype=np.float64)[None]]
    cot = [np.ones((1, 2))] if tensor else np.ones((1, 1))
    copies = Copies(graph, batch, cot, full=True)
    assert "ReferenceAbs" in type(copies.raw[graph.n_inputs].grad_fn).__name__


@pytest.mark.parametrize("create_graph", [False, True])
def test_the_references_engine_call_gives_autograd_grads_numbers_to_the_bit(create_graph):
    # `reverse` skips grad()'s argument checks only: the same engine, the same bits, None unreached
    rng = np.random.default_rng(7)
    for _ in range(40):
        graph = random_graph(rng, points=3)
        leaves = [torch.tensor(p, requires_grad=True) for p in graph.points]
        nodes = Program(graph, reference_rule).run(leaves, torch_constant)
        outputs = [nodes[o] for o in graph.outputs if nodes[o].requires_grad]
        cot = [torch.tensor(rng.standard_normal(3)) for _ in outputs]
        kept = dict(retain_graph=True, create_graph=create_graph, allow_unused=True)
        expected = torch.autograd.grad(outputs, leaves, cot, **kept)
        got = reverse(outputs, leaves, cot, create_graph=create_graph)
        assert [g is None for g in got] == [e is None for e in expected]
        pairs = [(g, e) for g, e in zip(got, expected) if e is not None]
        assert all(torch.equal(g, e) and g.requires_grad == e.requires_grad for g, e in pairs)
    unused = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    assert reverse([x * 3.0], [x, unused], [torch.ones(1)])[1] is None
