"""Another valid evaluation order is never a wrong gradient: an entry outside torch's rounding is
judged against the exact value by the rounding bound of any correct evaluation (`any_order`),
which holds whatever order the engine sums in; a real bug stays outside it."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.any_order import any_order_bounds
from gradcheck.parity.bound import EPS, entry_bounds
from gradcheck.parity.compare import check_graph
from gradcheck.parity.errors import BOUND_SAFETY
from gradcheck.parity.exact import run_exact
from gradcheck.parity.torch_reference import run_torch_tensor_batch
from gradcheck.parity.what import BoundKind
from gradcheck.testing.accuracy import _accuracy
from gradcheck.testing.broken_engines import MulOffByATrillionth, TinyAdapter


def path_sum_gradient(graph: Graph, cotangent: list[float], values: list[float] | None = None) -> list[float]:
    """The gradient as a backward that follows every path computes it: each path's product of
    local derivatives (the registry's), added into its input one path at a time."""
    nodes = list(graph.input_values(0) if values is None else values)
    local: list[tuple[float, ...]] = []
    for node in graph.nodes:
        spec = REGISTRY[node.op]
        args = node.operands(nodes)
        out = float(spec.numpy([np.float64(a) for a in args], node.attr))
        local.append(tuple(float(d) for d in spec.grads(args, node.attr, out)))
        nodes.append(out)
    grads = [0.0] * graph.n_inputs

    def down(i: int, upstream: float) -> None:
        if i < graph.n_inputs:
            grads[i] += upstream
            return
        node = graph.nodes[i - graph.n_inputs]
        ids = node.operands(list(range(len(nodes))), lambda _: None)
        for a, d in zip(ids, local[i - graph.n_inputs]):
            if a is not None:
                down(a, upstream * d)

    for o, c in zip(graph.outputs, cotangent):
        down(o, c)
    return grads


def bounds_at(graph: Graph, cotangent: list[float], accumulation: str = "nodes"):
    batch = [np.array([v]) for v in graph.input_values(0)]
    return any_order_bounds(graph, batch, np.array(cotangent)[:, None], accumulation)


def exact_at(graph: Graph, cotangent: list[float]):
    return run_exact(graph, [np.array([v]) for v in graph.input_values(0)], np.array(cotangent)[:, None])


# x0 + x0 eight times over, minus a tiny multiple of x1: 256 paths to x0, each a product of ones
# and -1s, whose sum is 256 (a graph met in a campaign on an engine that follows every path)
LADDER = Graph(
    [Input("x0", 1.0), Input("x1", 2.5160781453688068e-05)],
    [
        *(OpNode("add", (k, k)) for k in (0, 2, 3, 4)),
        OpNode("neg", (5,)),
        OpNode("sub", (5, 6)),
        OpNode("neg", (7,)),
        OpNode("sub", (7, 8)),
        OpNode("sub", (9,), consts=(Constant(0, 0.0),)),
        OpNode("sub", (9, 10)),
        OpNode("add", (11, 11)),
        OpNode("mul", (12, 1)),
        OpNode("add", (12, 13)),
    ],
    [14],
    cotangent=[-1.0],
)


def test_a_sum_over_paths_is_within_its_bound_when_paths_are_assumed_and_outside_node_by_node():
    exact = exact_at(LADDER, [-1.0]).grads[0, 0]
    engine = path_sum_gradient(LADDER, [-1.0])[0]
    assert LADDER.path_count() > 256 and engine != exact, "the path sum rounds otherwise than torch"
    by_nodes = bounds_at(LADDER, [-1.0]).grads[0, 0]
    by_paths = bounds_at(LADDER, [-1.0], "paths").grads[0, 0]
    assert abs(engine - exact) > BOUND_SAFETY * by_nodes
    assert abs(engine - exact) <= by_paths
    assert by_paths >= 0.5 * EPS * (LADDER.path_count() - 2) * abs(exact) / 2  # a sum of one term per path


# v1 = x / x, v2 = tanh(v1), v3 = v1 + v2, v4 = v3 / v3: d v4 / dx is exactly 0, and torch computes
# exactly 0 (its rounding bound is ~1e-30), while its terms are of the size of 1 / x
CANCELLING = Graph(
    [Input("x0", -5.07)],
    [OpNode("div", (0, 0)), OpNode("tanh", (1,)), OpNode("add", (1, 2)), OpNode("div", (3, 3))],
    [4],
    cotangent=[1.0],
)


def test_an_exact_cancellation_keeps_the_allowance_of_its_terms():
    batch, cot = [np.array([-5.07])], np.array([[1.0]])
    torch_bound = entry_bounds(CANCELLING, batch, cot).grads[0, 0]
    bound = bounds_at(CANCELLING, [1.0]).grads[0, 0]
    assert exact_at(CANCELLING, [1.0]).grads[0, 0] == 0.0
    assert torch_bound < 1e-28 < 1e-17 < bound < 1e-14  # a few ulps of the terms, 1 / 5.07
    engine = path_sum_gradient(CANCELLING, [1.0])[0]
    assert engine != 0.0 and abs(engine) <= bound


def test_the_bound_of_a_square_at_zero_is_second_order():
    # (log(x / x)) ** 2 with x / x one ulp off: the square's slope is 0 there; its value is not
    graph = Graph(
        [Input("x0", -0.72)], [OpNode("div", (0, 0)), OpNode("log", (1,)), OpNode("mul", (2, 2))], [3]
    )
    bound = bounds_at(graph, [1.0]).forward[0, 0]
    assert (EPS / 2) ** 2 <= bound < 1e-28


@pytest.mark.parametrize("engine", ["minigrad", "gradcheck.engines.torch_engine:TorchAdapter"])
def test_a_correct_engine_stays_within_the_bound_of_the_exact_values(engine):
    adapter = load_engine(engine)
    scalar = [op for op in sorted(adapter.ops) if not REGISTRY[op].tensor_only]
    for seed in range(40):
        graph = random_graph(np.random.default_rng(seed), ops=scalar, points=1, sizes=Sizes(deep_every=0))
        cotangent = list(np.random.default_rng(seed).choice([-1.0, 1.0], size=len(graph.outputs)))
        forward, grads = adapter.run(graph, graph.input_values(0), cotangent)
        exact, bounds = exact_at(graph, cotangent), bounds_at(graph, cotangent)
        for got, want, bound in [
            (np.ravel(forward), exact.forward[:, 0], bounds.forward[:, 0]),
            (np.ravel(grads), exact.grads[:, 0], bounds.grads[:, 0]),
        ]:
            finite = np.isfinite(want)
            assert np.all(np.abs(np.asarray(got, dtype=float)[finite] - want[finite]) <= bound[finite]), seed


def test_a_correct_tensor_engine_stays_within_the_bound_of_the_exact_values():
    adapter = load_engine("minigrad-tensor")
    for seed in range(6):
        graph = random_graph(np.random.default_rng(seed), tensor=True, points=1)
        shapes = graph_shapes(graph)
        cotangent = [np.random.default_rng(seed).choice([-1.0, 1.0], size=shapes[o]) for o in graph.outputs]
        batch, cot = [np.asarray(v)[None] for v in graph.input_values(0)], [c[None] for c in cotangent]
        _, grads = adapter.run(graph, graph.input_values(0), cotangent)
        got = np.concatenate([np.ravel(g) for g in grads])
        exact, bounds = run_exact(graph, batch, cot), any_order_bounds(graph, batch, cot)
        finite = np.isfinite(exact.grads[:, 0])
        assert np.all(np.abs(got[finite] - exact.grads[finite, 0]) <= bounds.grads[finite, 0]), seed


def test_softmax_over_one_element_then_sum_is_allowed_its_terms():
    # softmax over a dim of size 1 is 1, its gradient exactly 0; the terms s and s * s are 1
    x = np.array([[0.3], [-1.2]])
    graph = Graph(
        [Input("x0", x, (2, 1))],
        [OpNode("softmax", (0,), (("dim", -1),)), OpNode("sum", (1,), (("dims", (-2, -1)),))],
        [2],
        meta={"kind": "tensor"},
    )
    bounds = any_order_bounds(graph, [x[None]], [np.ones((1,))])
    assert np.all(bounds.grads[:, 0] > EPS / 4)


# x0 * x1 + exp(x0): no cancellation anywhere
WELL_CONDITIONED = Graph(
    [Input("x0", 0.8), Input("x1", 1.3)],
    [OpNode("mul", (0, 1)), OpNode("exp", (0,)), OpNode("add", (2, 3))],
    [4],
)


def test_a_planted_1e12_error_is_outside_the_bound_of_any_order():
    _, grads = MulOffByATrillionth().run(WELL_CONDITIONED, [0.8, 1.3], [1.0])
    exact, bounds = exact_at(WELL_CONDITIONED, [1.0]), bounds_at(WELL_CONDITIONED, [1.0])
    assert abs(grads[1] - exact.grads[1, 0]) > 10 * BOUND_SAFETY * bounds.grads[1, 0]


def test_the_check_passes_another_order_and_says_so_and_fails_a_bug_by_the_bound_it_used():
    class PathSum(TinyAdapter):
        name = "path-sum"
        accumulation = "paths"

        def run(self, graph, values, cotangent, program=None):
            forward, _ = TinyAdapter().run(graph, values, cotangent)
            return forward, path_sum_gradient(graph, cotangent, values)

    check = check_graph(LADDER, PathSum(), numeric=False, second_order=False)
    assert check.passed and check.order_settled_points == 1, check.problems
    wrong = check_graph(WELL_CONDITIONED, MulOffByATrillionth(), numeric=False, second_order=False)
    assert not wrong.passed
    (problem,) = [p for p in wrong.problems if p.input == "x1"]
    assert problem.bound_kind is BoundKind.ANY_ORDER and problem.error == abs(problem.engine - problem.exact)
    assert problem.error > problem.allowed == BOUND_SAFETY * problem.bound
    assert "the rounding bound of any evaluation order" in str(problem)
    assert math.isfinite(wrong.failing_excess) and wrong.failing_excess > 1


def test_a_backward_stable_log_softmax_at_large_inputs_is_within_the_bound():
    # x - logsumexp(x) (MyGrad's spelling) rounds the logsumexp, about 1000.9, to a double before
    # the subtraction: 5e-14 off where torch, subtracting the maximum first, is 1e-16 off
    x = 1000.0 + np.random.default_rng(3).uniform(0.0, 1.6, size=(2, 3, 2))
    graph = Graph(
        [Input("x0", x, (2, 3, 2))],
        [OpNode("log_softmax", (0,), (("dim", -3),))],
        [1],
        meta={"kind": "tensor"},
    )
    batch, cot = [x[None]], [np.ones((1, 2, 3, 2))]
    biggest = x.max(axis=0, keepdims=True)
    stable = x - (biggest + np.log(np.exp(x - biggest).sum(axis=0, keepdims=True)))
    exact = run_exact(graph, batch, cot).forward[:, 0]
    error = np.abs(stable.ravel() - exact)
    assert error.max() > 2 * BOUND_SAFETY * entry_bounds(graph, batch, cot).forward[:, 0].max()
    assert np.all(error <= any_order_bounds(graph, batch, cot).forward[:, 0])


def _float32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def test_a_float32_evaluation_stays_within_the_float32_bound_where_float64s_would_call_it_wrong():
    # torch in float32 on random tensor graphs, at float32 inputs and cotangents
    rng = np.random.default_rng(4)
    outside_float64s = 0
    for _ in range(6):
        graph = random_graph(rng, tensor=True, points=2, sizes=Sizes(nodes=(6, 10), deep_every=0))
        batch = [_float32(p) for p in graph.points]
        shapes = graph_shapes(graph)
        cot = [_float32(rng.uniform(0.5, 1.5, size=(2, *shapes[o]))) for o in graph.outputs]
        torch32 = run_torch_tensor_batch(graph, batch, cot, dtype="float32")
        exact = run_exact(graph, batch, cot)
        error = np.abs(torch32.grads - exact.grads)
        bound32 = any_order_bounds(graph, batch, cot, float32=True)
        assert (error <= BOUND_SAFETY * bound32.grads).all()
        assert (np.abs(torch32.forward - exact.forward) <= BOUND_SAFETY * bound32.forward).all()
        outside_float64s += int((error > BOUND_SAFETY * any_order_bounds(graph, batch, cot).grads).sum())
    assert outside_float64s > 0


def test_the_float32_bound_takes_an_ops_float32_figures_and_float32s_unit():
    graph = Graph([Input("x", 0.75)], [OpNode("tanh", (0,))], [1])
    batch, cot = [np.array([0.75])], np.array([[1.0]])
    float64 = any_order_bounds(graph, batch, cot)
    float32 = any_order_bounds(graph, batch, cot, float32=True)
    ratio = float(np.finfo(np.float32).eps / np.finfo(np.float64).eps)
    assert float32.forward[0, 0] == pytest.approx(ratio * float64.forward[0, 0])
    spec = REGISTRY["tanh"]
    figures = spec.accuracy
    coarser = dataclasses.replace(figures, value32=10 * figures.value, grads32=figures.grads)
    with _accuracy("tanh", coarser):
        assert any_order_bounds(graph, batch, cot, float32=True).forward[0, 0] > 5 * float32.forward[0, 0]
        assert any_order_bounds(graph, batch, cot).forward[0, 0] == float64.forward[0, 0]


@pytest.mark.parametrize(("op", "x"), [("tanh", 23.95), ("sigmoid", 83.0)])
def test_a_derivative_that_saturated_with_its_slope_is_allowed_the_results_rounding(op: str, x: float):
    # torch's tanh' is 1 - t * t, exactly 0 at t = 1.0 though the exact value is 4 e^(-2x) > 0: any
    # evaluation reading the rounded result may give that, and a planted 1e-12 stays outside
    graph = Graph([Input("x", x)], [OpNode(op, (0,))], [1])
    bounds = any_order_bounds(graph, [np.array([x])], np.array([[1.0]]))
    exact = exact_at(graph, [1.0]).grads[0, 0]
    assert 0.0 < exact < 1e-20
    assert abs(0.0 - exact) <= BOUND_SAFETY * bounds.grads[0, 0] < 1e-12


# --- the false alarms main made on correct engines that sum over paths ------------------------------

PATH_SUM_ALARMS = json.loads((Path(__file__).with_name("data") / "path_sum_false_alarms.json").read_text())


@pytest.mark.parametrize(
    "case", PATH_SUM_ALARMS["cases"], ids=lambda c: f"{c['engine'].split(':')[1]}-{c['title']}"
)
def test_each_false_alarm_of_a_path_sum_engine_passes_now(case):
    adapter = load_engine(case["engine"])
    adapter.accumulation = "paths"  # what the structural phase finds of its backward
    check = check_graph(Graph.from_dict(case["graph"]), adapter)
    assert check.passed, check.problems
