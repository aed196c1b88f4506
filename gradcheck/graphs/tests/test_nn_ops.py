"""The nn entries of the registry: linear layers and losses mean what torch.nn.functional means,
on single points and on the padded batches of tensor graphs, and their class-index targets are
drawn from the shapes and saved with the graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.nn_ops import NN_SPECS, REDUCTIONS
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.rng_stream import RngChooser
from gradcheck.graphs.shapes import graph_shapes, pad, unpad
from gradcheck.parity.compare import check_graph

F = torch.nn.functional
K = 3  # points in a batch


def _cases():
    """(op, argument shapes, attributes) covering every entry, rank and reduction."""
    for x_shape in [(3,), (2, 3), (2, 2, 3)]:
        yield "linear", [x_shape, (4, 3), (4,)], {}
        yield "linear", [x_shape, (4, 3), ()], {}
        yield "linear_relu", [x_shape, (4, 3), (4,)], {}
        yield "linear_no_bias", [x_shape, (2, 3)], {}
        yield "linear_relu_no_bias", [x_shape, (2, 3)], {}
    for reduction in REDUCTIONS:
        for name in ("cross_entropy", "nll_loss"):
            yield name, [(3, 4)], {"reduction": reduction, "target": (3, 0, 1)}
            yield name, [(4,)], {"reduction": reduction, "target": 2}
        for name in ("mse_loss", "binary_cross_entropy_with_logits"):
            for shape in [(), (3,), (2, 3), (2, 1, 3)]:
                yield name, [shape, shape], {"reduction": reduction}


CASES = list(_cases())


def _torch_reference(name, args, attrs):
    """The op as torch.nn.functional spells it, on one point."""
    if name.startswith("linear"):
        y = F.linear(*args)
        return y.relu() if "relu" in name else y
    if name in ("cross_entropy", "nll_loss"):
        return getattr(F, name)(args[0], torch.tensor(attrs["target"]), reduction=attrs["reduction"])
    return getattr(F, name)(*args, reduction=attrs["reduction"])


def _batch(rng, shapes):
    return [rng.uniform(-2.0, 2.0, size=(K, *s)) for s in shapes]


@pytest.mark.parametrize(("name", "shapes", "attrs"), CASES, ids=str)
def test_reference_forward_on_a_padded_batch_is_torchs_at_each_point(name, shapes, attrs):
    spec = REGISTRY[name]
    batch = _batch(np.random.default_rng(len(shapes)), shapes)
    out_shape = spec.out_shape(shapes, attrs)
    got = unpad(pad(spec.numpy([pad(b, s) for b, s in zip(batch, shapes)], attrs), out_shape), out_shape)
    for p in range(K):
        want = _torch_reference(name, [torch.tensor(b[p]) for b in batch], attrs)
        assert tuple(want.shape) == out_shape
        np.testing.assert_allclose(got[p], want.numpy(), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(("name", "shapes", "attrs"), CASES, ids=str)
def test_the_batched_torch_spelling_is_the_op_point_by_point(name, shapes, attrs):
    spec = REGISTRY[name]
    batch = _batch(np.random.default_rng(7), shapes)
    out_shape = spec.out_shape(shapes, attrs)
    batched = spec.apply_torch_batched([pad(torch.tensor(b), s) for b, s in zip(batch, shapes)], attrs)
    got = unpad(pad(batched, out_shape), out_shape)
    for p in range(K):
        want = spec.apply_torch([torch.tensor(b[p]) for b in batch], attrs)
        torch.testing.assert_close(got[p], want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(
    ("shapes", "fits"),
    [
        ([(2, 3), (4, 3), (4,)], True),
        ([(2, 3), (4, 3), ()], True),  # a 0-d bias broadcasts, in torch and minigrad
        ([(3,), (4, 3), (4,)], True),
        ([(2, 3), (4, 3), (3,)], False),
        ([(2, 3), (3, 4), (4,)], False),
        ([(), (4, 3), (4,)], False),
        ([(2, 3), (2, 4, 3), (4,)], False),  # torch's linear takes a 2-D weight only
    ],
)
def test_linear_takes_the_shapes_torch_takes(shapes, fits):
    assert (REGISTRY["linear"].out_shape(shapes, {}) is not None) == fits
    args = [torch.ones(s, dtype=torch.float64) for s in shapes]
    if fits:
        assert tuple(F.linear(*args).shape) == REGISTRY["linear"].out_shape(shapes, {})
    else:
        with pytest.raises(RuntimeError):
            F.linear(*args)


def test_class_losses_draw_one_class_index_per_row_within_the_classes():
    chooser = RngChooser(np.random.default_rng(0))
    spec = REGISTRY["cross_entropy"]
    for _ in range(50):
        attrs = spec.tensor_attrs(chooser, (5, 3))
        assert len(attrs["target"]) == 5 and all(0 <= t < 3 for t in attrs["target"])
        assert attrs["reduction"] in REDUCTIONS
        assert 0 <= spec.tensor_attrs(chooser, (4,))["target"] < 4
    assert spec.tensor_attrs(chooser, (2, 1)) is None  # one class: nothing to choose between
    assert spec.tensor_attrs(chooser, (2, 2, 3)) is None  # minigrad takes (N, C) or (C,)


def _graph_with(op: str) -> Graph:
    for index in range(200):
        rng = np.random.default_rng([3, index])
        graph = random_graph(rng, ops=[op, "add", "sum", "mul"], tensor=True, points=3)
        if op in graph.ops():
            return graph
    raise AssertionError(f"{op} never drawn in 200 graphs")


@pytest.mark.parametrize("op", ["cross_entropy", "nll_loss"])
def test_class_targets_are_saved_with_the_graph_and_replay_the_same(op):
    graph = _graph_with(op)
    loaded = Graph.from_json(graph.to_json())
    node = next(n for n in loaded.nodes if n.op == op)
    original = next(n for n in graph.nodes if n.op == op)
    assert list(np.atleast_1d(node.attr["target"])) == list(np.atleast_1d(original.attr["target"]))
    first, again = (
        check_graph(graph, load_engine("minigrad-tensor"), seed=0),
        check_graph(loaded, load_engine("minigrad-tensor"), seed=0),
    )
    assert first.passed and again.passed
    assert first.max_rel_err_torch == again.max_rel_err_torch


def test_linear_with_a_bias_is_drawn_with_both_bias_shapes():
    bias_ranks = set()
    for index in range(300):
        graph = random_graph(np.random.default_rng([5, index]), ops=["linear", "sum"], tensor=True, points=1)
        shapes = graph_shapes(graph)
        bias_ranks |= {len(shapes[n.args[2]]) for n in graph.nodes if n.op == "linear"}
    assert bias_ranks == {0, 1}


def test_every_nn_entry_is_a_tensor_op_with_a_torch_and_an_array_spelling():
    for spec in NN_SPECS:
        assert spec.tensor_only and spec.torch_template and spec.array is not None and spec.family
