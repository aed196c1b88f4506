"""The correct engines that evaluate otherwise than torch: right on worked examples, within 1e-12 of
torch on random graphs, and each really evaluating in its own way (paths, order, formulas)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from gradcheck.campaign.checking import graph_sizes
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.graphs.surface import adapter_variants
from gradcheck.parity.runs import random_cotangent
from gradcheck.testing.reordered_engines import (
    REORDERED_ENGINES,
    ExplicitJacobianTensor,
    LocalValue,
    OtherFormulaValue,
    PathSumValue,
    ReciprocalPathSumValue,
    ReciprocalTensor,
    ReciprocalValue,
    ReversedSumValue,
    UncappedPathSum,
    reversed_matmul,
)

VALUE_CLASSES = [
    LocalValue,
    PathSumValue,
    ReversedSumValue,
    ReciprocalValue,
    ReciprocalPathSumValue,
    OtherFormulaValue,
]
SCALAR_ENGINES = [cls for cls in REORDERED_ENGINES.values() if not cls.tensor]
TENSOR_ENGINES = [cls for cls in REORDERED_ENGINES.values() if cls.tensor]
TINY = 2.0**-53  # half an ulp of 1: 1 + TINY rounds to 1, TINY + TINY + 1 does not


@pytest.mark.parametrize("cls", VALUE_CLASSES, ids=lambda c: c.__name__)
def test_z_is_x_times_y_plus_x(cls):
    x, y = cls(2.0), cls(3.0)
    z = x * y + x
    z.backward()
    assert (z.data, x.grad, y.grad) == (8.0, 4.0, 2.0)


@pytest.mark.parametrize("cls", TENSOR_ENGINES, ids=lambda c: c.name)
def test_z_is_x_times_y_plus_x_for_tensors_and_a_matrix_product(cls):
    engine = cls()
    x, y = engine.leaf(np.array([2.0, -1.0])), engine.leaf(np.array([3.0, 0.5]))
    z = engine.apply("div", [engine.apply("mul", [x, y], {}) + x, engine.scalar_tensor(2.0)], {})
    z.sum().backward()
    assert (z.data.tolist(), x.grad.data.tolist(), y.grad.data.tolist()) == (
        [4.0, -0.75],
        [2.0, 0.75],
        [1.0, -0.5],
    )
    a, b = engine.leaf(np.array([[1.0, 2.0]])), engine.leaf(np.array([[3.0], [4.0]]))
    engine.apply("softmax", [engine.apply("matmul", [a, b], {})], {"dim": -1}).sum().backward()
    assert (a.grad.data.tolist(), b.grad.data.tolist()) == ([[0.0, 0.0]], [[0.0], [0.0]])  # softmax of one: 1


@pytest.mark.parametrize("cls", VALUE_CLASSES, ids=lambda c: c.__name__)
def test_every_op_on_a_worked_example(cls):
    # f = tanh(a / b) + sigmoid(a * b) + log(b) + a ** b + sqrt(a) + 2 / a + atan2(a, b) + |a| - relu(-a)
    a, b = cls(0.3), cls(1.7)
    f = (a / b).tanh() + (a * b).sigmoid() + b.log() + a**b + a.sqrt() + 2.0 / a + a.atan2(b) + abs(a)
    f = f - (-a).relu() + a.exp().sin() * b.cos() - a.atan() + (2.0**a) * (a**2.0)
    f.backward()
    av, bv = 0.3, 1.7
    sig = 1 / (1 + math.exp(-av * bv))
    d_a = (
        (1 - math.tanh(av / bv) ** 2) / bv
        + sig * (1 - sig) * bv
        + bv * av ** (bv - 1)
        + 0.5 / math.sqrt(av)
        - 2 / av**2
        + bv / (av**2 + bv**2)
        + 1.0
        + math.cos(math.exp(av)) * math.exp(av) * math.cos(bv)
        - 1 / (1 + av**2)
        + math.log(2) * 2**av * av**2
        + 2**av * 2 * av
    )
    d_b = (
        -(1 - math.tanh(av / bv) ** 2) * av / bv**2
        + sig * (1 - sig) * av
        + 1 / bv
        + av**bv * math.log(av)
        - av / (av**2 + bv**2)
        - math.sin(math.exp(av)) * math.sin(bv)
    )
    assert a.grad == pytest.approx(d_a, rel=1e-14)
    assert b.grad == pytest.approx(d_b, rel=1e-14)


def agree_with_torch(engine, graph, seed):
    """The engine's outputs and gradients at every point of `graph` against torch's: each output
    within 1e-12 of its largest entry, each gradient within 1e-12 of the largest gradient entry (an
    entry that cancels is held to the scale of the terms that cancel, not to its own)."""
    rng = np.random.default_rng(seed)
    shapes = graph_shapes(graph)
    reference = TorchAdapter()
    for point in range(graph.n_points):
        values = graph.input_values(point)
        cotangent = [random_cotangent(rng, shapes[o]) for o in graph.outputs]
        if not graph.is_tensor:
            cotangent = [float(c) for c in cotangent]
        ours, theirs = engine.run(graph, values, cotangent), reference.run(graph, values, cotangent)
        largest_gradient = max(np.max(np.abs(g), initial=0.0) for g in theirs[1])
        for mine, torch_values, i in zip(
            ours[0] + ours[1], theirs[0] + theirs[1], range(10**6), strict=False
        ):
            torch_values = np.asarray(torch_values, dtype=float)
            scale = np.max(np.abs(torch_values), initial=0.0) if i < len(ours[0]) else largest_gradient
            np.testing.assert_allclose(
                np.asarray(mine, dtype=float), torch_values, rtol=0, atol=1e-12 * scale
            )


@pytest.mark.parametrize("cls", SCALAR_ENGINES, ids=lambda c: c.name)
@pytest.mark.parametrize("seed", range(5))
def test_scalar_engines_match_torch_on_random_graphs(cls, seed):
    engine = cls()
    assert (
        engine.ops == frozenset(op for op in SCALAR_OPS if REGISTRY[op].grads is not None) == set(SCALAR_OPS)
    )
    sizes = graph_sizes(engine.max_depth)  # the path sum's 30 ops at most, as in its campaigns
    graph = random_graph(np.random.default_rng(seed), ops=sorted(engine.ops), points=4, sizes=sizes)
    agree_with_torch(engine, graph, seed)


@pytest.mark.parametrize("cls", TENSOR_ENGINES, ids=lambda c: c.name)
@pytest.mark.parametrize("seed", range(5))
def test_tensor_engines_match_torch_on_random_graphs(cls, seed):
    engine = cls()
    assert engine.ops == set(TENSOR_OPS)
    # the ops whose rules the engines change (division apart: random graphs divide x by itself, whose
    # gradient is all cancellation, so a quotient of two inputs stands for it below)
    ops = ["softmax", "log_softmax", "matmul", "linear", "linear_relu", "tanh", "exp", "sum", "add", "mul"]
    graph = random_graph(
        np.random.default_rng(seed),
        ops=ops,
        tensor=True,
        points=2,
        variants=frozenset(adapter_variants(engine)),
    )
    agree_with_torch(engine, graph, seed)
    rng = np.random.default_rng(seed)
    inputs = [Input(f"x{i}", rng.uniform(0.5, 2.0, (2, 3)), (2, 3)) for i in range(2)]
    quotient = Graph(inputs, [OpNode("div", (0, 1)), OpNode("tanh", (2,)), OpNode("div", (3, 1))], [4])
    agree_with_torch(engine, quotient, seed)


# --- each engine evaluates in its own way --------------------------------------------------------------


class CountingPathSum(PathSumValue):
    """PathSumValue counting how many times its backward reads a node's operands."""

    __slots__ = ()
    visits = 0

    def operands(self, node):
        type(self).visits += 1
        return super().operands(node)


def ladder(cls, depth):
    """x doubled `depth` times, each step `v + v`: 2 ** depth paths from the top down to x."""
    x = cls(1.5)
    v = x
    for _ in range(depth):
        v = v + v
    return x, v


def test_the_path_sum_backward_walks_every_path_and_the_sum_is_right():
    for depth in (3, 10):
        CountingPathSum.visits = 0
        x, top = ladder(CountingPathSum, depth)
        top.backward()
        assert x.grad == 2.0**depth
        assert CountingPathSum.visits == 2 ** (depth + 1) - 1  # every node once per path through it


def test_the_path_sum_adds_one_path_at_a_time_and_keeps_interior_gradients_per_pass():
    x = PathSumValue(1.0)
    y = x * 1.0 + x * TINY + x * TINY  # three paths to x, with products 1, TINY, TINY
    y.backward()
    assert x.grad in (1.0, 1.0 + 2 * TINY)  # which it is depends on the order the paths are taken
    middle = y._prev[0]
    y.backward()  # leaves accumulate, interior nodes start afresh
    assert middle.grad == 1.0
    assert x.grad in (2.0, 2.0 + 4 * TINY)


def test_the_uncapped_path_sum_takes_every_graph_the_capped_one_stops_at_thirty_ops():
    assert (UncappedPathSum.max_depth, REORDERED_ENGINES["path-sum"].max_depth) == (None, 30)


def test_the_reversed_sum_adds_a_nodes_contributions_in_the_other_order():
    grads = {}
    for cls in (LocalValue, ReversedSumValue):
        x = cls(1.0)
        (x * 1.0 + x * TINY + x * TINY).backward()
        first = x.grad
        x.grad = 0.0
        (x * TINY + x * TINY + x * 1.0).backward()
        grads[cls] = (first, x.grad)
    # 1 + TINY + TINY is 1 in one order and 1 + 2 TINY in the other; both round the exact 1 + 2 TINY
    assert sorted(grads[LocalValue]) == sorted(grads[ReversedSumValue]) == [1.0, 1.0 + 2 * TINY]
    assert grads[LocalValue] != grads[ReversedSumValue]


@pytest.mark.parametrize("cls", [ReciprocalValue, ReciprocalPathSumValue], ids=lambda c: c.__name__)
def test_division_goes_through_the_reciprocal(cls):
    x = cls(49.0)
    q = x / x
    assert q.data == 49.0 * (1 / 49.0) == 0.9999999999999999  # torch's 49 / 49 is 1
    assert q._prev[0] is x and q._prev[1]._prev == (x,)  # x times a node x ** -1
    assert (2.0 / x).data == 2.0 * (1 / 49.0)


def test_tensor_division_goes_through_the_reciprocal():
    engine = ReciprocalTensor()
    x = engine.leaf(np.array([49.0, 2.0]))
    assert engine.apply("div", [x, x], {}).data.tolist() == [0.9999999999999999, 1.0]


def exact_slope(op, x):
    """d op(x) / dx at x, by mpmath at 50 digits."""
    mpmath.mp.dps = 50
    return float(mpmath.diff(lambda t: REGISTRY[op].mpmath(mpmath, t), mpmath.mpf(x)))


@pytest.mark.parametrize(
    ("op", "formula"),
    [
        ("tanh", lambda x: 1.0 / math.cosh(x) ** 2),
        ("sigmoid", lambda x: math.exp(-abs(x)) / (1.0 + math.exp(-abs(x))) ** 2),
        ("log", lambda x: x**-1.0),
        ("sqrt", lambda x: 0.5 * x**-0.5),
    ],
)
def test_other_formulas_are_spelled_their_way_and_accurate(op, formula):
    for x in (0.37, 2.5, 7.9, -3.0 if op in ("tanh", "sigmoid") else 3.0):
        node = getattr(OtherFormulaValue(x), op)()
        assert node._local == (formula(x),)
        exact = exact_slope(op, x)
        assert abs(node._local[0] - exact) <= 4 * math.ulp(exact)
    # the sigmoid's slope does not overflow where e^-x does
    assert OtherFormulaValue(-800.0).sigmoid()._local == (0.0,)


def test_other_formulas_keep_torchs_rules_at_the_edges_of_pow():
    a, b = OtherFormulaValue(0.0), OtherFormulaValue(2.0)
    assert (a**b)._local == (0.0, 0.0)  # d/da = 2 * 0 ** 1, d/db = 0 at a = 0, b >= 0 (torch)
    assert (OtherFormulaValue(3.0) ** OtherFormulaValue(0.0))._local[0] == 0.0
    assert (OtherFormulaValue(2.0) ** b)._local[0] == 2.0 * 4.0 / 2.0


def test_reversed_matmul_adds_the_products_from_the_last():
    x = np.array([[1.0, 1.0, 1.0]])
    y = np.array([[1.0], [TINY], [TINY]])
    assert reversed_matmul(x, y).tolist() == [[1.0 + 2 * TINY]]  # (TINY + TINY) + 1
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((3, 5, 2))
    np.testing.assert_allclose(reversed_matmul(a, b), a @ b, rtol=1e-13)


def test_softmax_and_log_softmax_backward_multiply_by_the_explicit_jacobian():
    x = np.array([[0.3, -1.2, 2.0], [0.5, 0.5, -0.25]])
    g = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    for op, jacobian in (
        ("softmax", lambda s: np.diag(s) - np.outer(s, s)),
        ("log_softmax", lambda s: np.eye(3) - s[None, :]),
    ):
        grads = {}
        for engine in (ExplicitJacobianTensor(), MinigradTensor()):
            leaf = engine.leaf(x)
            out = engine.apply(op, [leaf], {"dim": -1})
            (out * engine.constant(g)).sum().backward()
            grads[engine.name] = leaf.grad.data
        s = np.exp(out.data) if op == "log_softmax" else out.data
        expected = np.stack([jacobian(s[i]).T @ g[i] for i in range(2)])
        np.testing.assert_allclose(grads["explicit-jacobian"], expected, rtol=1e-15, atol=1e-16)
        # minigrad's own rule (s * (g - sum(g s)), g - e^out sum(g)) rounds otherwise here
        assert not np.array_equal(grads["explicit-jacobian"], grads["minigrad-tensor"])


def test_matmul_and_linear_backward_add_their_products_from_the_last():
    engine = ExplicitJacobianTensor()
    rng = np.random.default_rng(3)
    a, b, g = rng.standard_normal((4, 5)), rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    x, w = engine.leaf(a), engine.leaf(b)
    (engine.apply("matmul", [x, w], {}) * engine.constant(g)).sum().backward()
    assert np.array_equal(x.grad.data, reversed_matmul(g, b.T))
    assert np.array_equal(w.grad.data, reversed_matmul(a.T, g))
    weight, bias = rng.standard_normal((3, 5)), rng.standard_normal(3)
    x, w, c = engine.leaf(a), engine.leaf(weight), engine.leaf(bias)
    (engine.apply("linear", [x, w, c], {}) * engine.constant(g)).sum().backward()
    assert np.array_equal(x.grad.data, reversed_matmul(g, weight))
    assert np.array_equal(w.grad.data, reversed_matmul(g.T, a))
    np.testing.assert_allclose(c.grad.data, g.sum(axis=0), rtol=1e-15)
