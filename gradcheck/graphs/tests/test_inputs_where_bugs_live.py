"""Random graphs draw the inputs where engines' bugs live, as a modest share beside ordinary ones:
tiny magnitudes, the same node on both sides of a binary op, and matmul beyond matrices."""

import collections

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import TINY_EVERY, TINY_EXPONENTS, random_graph, sample_points
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.compare import check_graph


def test_about_one_input_value_in_ten_is_tiny_and_the_rest_stay_ordinary():
    values = np.concatenate(sample_points(np.random.default_rng(0), 4, 5000))
    tiny = values[(values != 0) & (np.abs(values) < 1e-5)]
    assert len(tiny) / len(values) == pytest.approx(1 / TINY_EVERY, rel=0.1)
    low, high = TINY_EXPONENTS
    assert (np.abs(tiny) >= 10**low).all() and (np.abs(tiny) <= 10**high).all()
    assert (tiny > 0).any() and (tiny < 0).any()
    assert np.mean(np.abs(values) > 0.01) > 0.8, "ordinary magnitudes stay the rule"


def test_the_hypothesis_strategies_extra_points_keep_their_old_draws():
    plain = sample_points(np.random.default_rng(5), 2, 6, tiny=False)
    assert all((np.abs(v[v != 0]) > 1e-2).all() for v in plain)


def _same_node_ops(graphs: list[Graph]) -> collections.Counter:
    return collections.Counter(
        n.op for g in graphs for n in g.nodes if len(n.args) == 2 and n.args[0] == n.args[1]
    )


def test_binary_ops_take_the_same_node_on_both_sides_now_and_then():
    graphs = [random_graph(np.random.default_rng(s), points=4) for s in range(300)]
    same = _same_node_ops(graphs)
    binary = sum(1 for g in graphs for n in g.nodes if len(n.args) == 2)
    assert {"mul", "div", "add"} <= set(same), same
    assert 0.05 < sum(same.values()) / binary < 0.3, "a modest share"


def test_maximum_and_minimum_of_the_same_node_are_drawn_at_their_tie():
    graphs = [
        random_graph(np.random.default_rng(s), ops=["maximum", "minimum", "tanh"], tensor=True)
        for s in range(200)
    ]
    assert {"maximum", "minimum"} <= set(_same_node_ops(graphs))


def test_a_tie_of_the_same_node_is_smooth_and_minigrad_matches_torch_there():
    # maximum(x, x) = x: torch gives each side half the gradient, their sum is 1
    graph = Graph(
        [Input("x0", np.array([0.5, -1.0]), (2,))], [OpNode("maximum", (0, 0))], [1], meta={"kind": "tensor"}
    )
    check = check_graph(graph, load_engine("minigrad-tensor"))
    assert check.passed and check.points_checked == 1, check.report()


def _matmul_ranks(graph: Graph) -> list[tuple[int, int]]:
    shapes = graph_shapes(graph)
    return [(len(shapes[n.args[0]]), len(shapes[n.args[1]])) for n in graph.nodes if n.op == "matmul"]


def test_matmul_is_drawn_on_vectors_matrices_and_batches():
    graphs = [
        random_graph(np.random.default_rng(s), ops=["matmul", "add", "sum"], tensor=True) for s in range(200)
    ]
    ranks = collections.Counter(r for g in graphs for r in _matmul_ranks(g))
    assert {(1, 1), (2, 1), (1, 2), (2, 2)} <= set(ranks), ranks
    assert any(3 in r for r in ranks), f"batched products: {ranks}"
    assert ranks[(2, 2)] >= max(ranks.values()) / 2, "matrix @ matrix stays common"


@pytest.mark.parametrize(
    ("a", "b", "out"),
    [
        ((3,), (3,), ()),
        ((2, 3), (3,), (2,)),
        ((3,), (3, 2), (2,)),
        ((2, 2, 3), (3, 2), (2, 2, 2)),
        ((3,), (2, 3, 1), (2, 1)),
        ((2, 1, 3), (2, 3, 2), (2, 1, 2)),
    ],
)
def test_matmul_shapes_follow_torch(a, b, out):
    torch = pytest.importorskip("torch")
    assert tuple((torch.zeros(a) @ torch.zeros(b)).shape) == out
    assert REGISTRY["matmul"].out_shape([a, b], {"ranks": (len(a), len(b))}) == out
    assert REGISTRY["matmul"].out_shape([a, (4,)], {"ranks": (len(a), 1)}) is None


@pytest.mark.parametrize("seed", range(6))
def test_minigrad_tensor_agrees_with_torch_on_every_kind_of_matmul(seed):
    graph = random_graph(
        np.random.default_rng([31, seed]), ops=["matmul", "add", "tanh"], tensor=True, points=3
    )
    check = check_graph(graph, load_engine("minigrad-tensor"), seed=seed)
    assert check.passed, check.report()
