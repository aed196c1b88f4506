"""The op registry: every op computes the same in numpy, minigrad and torch; domains and margins hold."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.registry import (
    KINK_MARGIN,
    MAX_MAGNITUDE,
    POLE_MARGIN,
    REGISTRY,
    SCALAR_OPS,
    TENSOR_OPS,
    OpSpec,
    in_domain,
    register,
    resolve_ops,
)
from gradcheck.graphs.rng_stream import RngChooser
from gradcheck.graphs.shapes import pad, unpad
from gradcheck.parity.compare import check_graph, kink_graphs
from minigrad import Value

SAMPLES = np.linspace(-3.3, 3.1, 23)


def _in_domain_samples(spec, attrs):
    arity = spec.arity
    grid = np.array(np.meshgrid(*[SAMPLES] * arity)).reshape(arity, -1)
    args = [grid[i] for i in range(arity)]
    with np.errstate(all="ignore"):
        ok = in_domain(spec, args, attrs, spec.numpy(args, attrs))
    return grid[:, ok]


@pytest.mark.parametrize("name", SCALAR_OPS)
def test_numpy_minigrad_and_torch_agree_inside_the_domain(name):
    spec = REGISTRY[name]
    for attrs in [dict(zip(spec.attrs, combo)) for combo in zip(*spec.attrs.values())] or [{}]:
        points = _in_domain_samples(spec, attrs)
        assert points.shape[1] > 0, f"{name}: no sample inside its domain"
        for column in points.T:
            expected = float(spec.numpy([np.array(v) for v in column], attrs))
            mine = spec.apply([Value(float(v)) for v in column], attrs).data
            theirs = spec.apply_torch(
                [torch.tensor(float(v), dtype=torch.float64) for v in column], attrs
            ).item()
            assert mine == pytest.approx(expected, rel=1e-13, abs=1e-300), (name, column, attrs)
            assert theirs == pytest.approx(expected, rel=1e-13, abs=1e-300), (name, column, attrs)


@pytest.mark.parametrize(
    ("name", "arg", "inside"),
    [
        ("relu", 0.0, False),
        ("relu", KINK_MARGIN / 2, False),
        ("relu", 2 * KINK_MARGIN, True),
        ("abs", -KINK_MARGIN / 2, False),
        ("log", POLE_MARGIN / 2, False),
        ("log", 0.5, True),
        ("sqrt", -1.0, False),
        ("exp", 50.0, False),
        ("tanh", 20.0, False),
    ],
)
def test_domains_keep_a_margin_from_kinks_and_poles(name, arg, inside):
    spec = REGISTRY[name]
    args = [np.array([arg])]
    with np.errstate(all="ignore"):
        assert bool(in_domain(spec, args, {}, spec.numpy(args, {}))[0]) is inside


def test_division_keeps_away_from_a_zero_divisor_and_addition_from_cancellation():
    div, add = REGISTRY["div"], REGISTRY["add"]
    a, b = np.array([1.0, 1.0]), np.array([POLE_MARGIN / 2, 1.0])
    assert in_domain(div, [a, b], {}, a / b).tolist() == [False, True]
    a, b = np.array([1.0, 1.0]), np.array([-1.0 + 1e-6, 2.0])
    assert in_domain(add, [a, b], {}, a + b).tolist() == [False, True]


def test_snippet_spelling_fills_arguments_and_attributes():
    assert REGISTRY["pow_const"].snippet(["x0"], {"exponent": -0.5}, "minigrad") == "x0 ** -0.5"
    assert REGISTRY["div"].snippet(["v3", "x1"], {}, "torch") == "v3 / x1"


def test_resolve_ops_names_unknown_and_unsupported_ops():
    assert resolve_ops(None) == SCALAR_OPS
    with pytest.raises(ValueError, match="unknown op"):
        resolve_ops(["add", "frobnicate"])
    with pytest.raises(ValueError, match="not supported here"):
        resolve_ops(["tanh"], allowed=["add"])


def test_adding_an_op_is_one_entry_and_the_generator_then_draws_it():
    spec = OpSpec(
        "softplus_test",
        1,
        lambda a, k: (a[0].exp() + 1.0).log(),
        lambda a, k: np.log1p(np.exp(a[0])),
        "({0}.exp() + 1.0).log()",
        domain=lambda a, k: np.abs(a[0]) < 20,
    )
    register(spec)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register(spec)
        g = random_graph(np.random.default_rng(0), ops=["softplus_test", "mul"], points=4)
        assert "softplus_test" in g.ops()

        adapter = MinigradValue()
        adapter.ops = frozenset({*adapter.ops, "softplus_test"})
        assert check_graph(g, adapter).passed
        assert "softplus_test" not in SCALAR_OPS  # the default scalar pool is unchanged
    finally:
        del REGISTRY["softplus_test"]


TENSOR_ONLY = [name for name in TENSOR_OPS if REGISTRY[name].tensor_only]


@pytest.mark.parametrize("name", TENSOR_ONLY)
def test_each_tensor_op_is_generated_and_agrees_with_torch_three_ways(name):
    rng = np.random.default_rng(4)
    seen = 0
    for index in range(40):
        graph = random_graph(rng, ops=[name, "add", "mul"], tensor=True, points=3)
        if name in graph.ops():
            seen += 1
            result = check_graph(graph, load_engine("minigrad-tensor"), seed=index)
            assert result.passed, result.report()
    assert seen >= 3, f"{name} drawn only {seen} times in 40 tensor graphs"


def test_tensor_shapes_follow_torch_rules():
    assert REGISTRY["matmul"].out_shape([(2, 3), (3, 4)], {}) == (2, 4)
    assert REGISTRY["matmul"].out_shape([(2, 3), (2, 4)], {}) is None
    assert REGISTRY["add"].out_shape([(2, 1), (3,)], {}) == (2, 3)
    assert REGISTRY["add"].out_shape([(2,), (3,)], {}) is None
    assert REGISTRY["sum"].out_shape([(2, 3, 4)], {"dims": (-1, -3)}) == (3,)
    assert REGISTRY["transpose"].out_shape([(2, 3, 4)], {"dims": (-3, -1)}) == (4, 3, 2)
    assert REGISTRY["reshape"].out_shape([(2, 3)], {"shape": (3, 2), "ndim_in": 2}) == (3, 2)


BOUNDED = [name for name in SCALAR_OPS if REGISTRY[name].bounded]


@pytest.mark.parametrize("name", BOUNDED)
def test_a_bounded_op_stays_sane_on_sane_arguments_inside_its_domain(name):
    """The generator skips the magnitude test of a bounded op: this is what makes that sound."""
    spec = REGISTRY[name]
    edge = [0.0, -0.0, 5e-324, 1e-300, -1e-300, np.pi, -np.pi, MAX_MAGNITUDE, -MAX_MAGNITUDE]
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [edge, rng.uniform(-MAX_MAGNITUDE, MAX_MAGNITUDE, 300), rng.uniform(-30, 30, 300)]
    )
    grid = np.array(np.meshgrid(*[values] * spec.arity)).reshape(spec.arity, -1)
    args = [grid[i] for i in range(spec.arity)]
    with np.errstate(all="ignore"):
        out = spec.numpy(args, {})
        inside = spec.domain(args, {}) if spec.domain is not None else np.ones(out.shape, dtype=bool)
    assert inside.sum() >= 50  # enough arguments inside the domain to judge
    assert np.isfinite(out[inside]).all() and (np.abs(out[inside]) <= MAX_MAGNITUDE).all()


def test_the_ops_with_unbounded_results_are_not_marked_bounded():
    expected = {"neg", "relu", "abs", "tanh", "sigmoid", "sin", "cos", "atan", "atan2", "exp", "log", "sqrt"}
    assert set(BOUNDED) == expected


SHAPE_PROBES = [(3,), (2, 3), (1, 3), (2, 1), (2, 2), (2, 2, 3), (2, 1, 3), ()]
# The ops whose operands all share one shape, which the probes below give them (the linear layers
# take a weight and a bias of other shapes: graphs/tests/test_nn_ops.py checks their rule).
SAME_SHAPE_OPS = [name for name in TENSOR_ONLY if not name.startswith("linear")]


def _distinct_values(shape, first):
    """Values all different (no ties), so a misplaced element shows."""
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 0.25 + first - 1.0


@pytest.mark.parametrize("name", SAME_SHAPE_OPS)
def test_each_tensor_op_computes_what_torch_computes_with_the_shape_its_rule_says(name):
    """For attributes drawn on many shapes: the shape rule, torch's op on one point and the
    numpy reference on a padded batch of two points agree."""
    spec = REGISTRY[name]
    chooser = RngChooser(np.random.default_rng(5))
    checked = 0
    for shape in SHAPE_PROBES * 8:
        attrs = spec.draw_tensor_attrs(chooser, shape)
        shapes = [shape, shape[::-1]] if name == "matmul" else [shape] * spec.arity
        expected = None if attrs is None else spec.out_shape(shapes, dict(attrs))
        if expected is None:
            continue
        batch = [_distinct_values((2, *s), first=i) for i, s in enumerate(shapes)]
        reference = unpad(spec.numpy([pad(b, s) for b, s in zip(batch, shapes)], dict(attrs)), expected)
        first = spec.apply_torch([torch.tensor(b[0]) for b in batch], dict(attrs))
        assert tuple(first.shape) == expected, (name, shape, attrs)
        np.testing.assert_allclose(first.numpy(), reference[0], rtol=1e-14, err_msg=f"{name} {shape} {attrs}")
        checked += 1
    assert checked >= 8, f"{name}: only {checked} attribute draws fit the probe shapes"


def test_index_draws_integers_slices_masks_and_repeated_and_negative_indices():
    chooser = RngChooser(np.random.default_rng(0))
    seen: set[str] = set()
    for _ in range(300):
        entries = dict(REGISTRY["index"].draw_tensor_attrs(chooser, (2, 3)))["index"]
        for (kind, *rest), size in zip(entries, (2, 3)):
            seen.add(kind)
            if kind == "ints":
                places = [i % size for i in rest[0]]
                seen |= {"repeat"} if len(set(places)) < len(places) else set()
                seen |= {"negative"} if min(rest[0]) < 0 else set()
            if kind == "mask" and np.ndim(rest[0]) == 2:
                seen.add("whole mask")
    assert seen == {"int", "slice", "ints", "mask", "repeat", "negative", "whole mask"}


class _TiesShared(MinigradTensor):
    """max and min along a dim spelled as amax/amin, which share a tie's gradient evenly."""

    def apply(self, op, args, attrs):
        if op in ("max_dim", "min_dim"):
            reduce = args[0].amax if op == "max_dim" else args[0].amin
            return reduce(dim=attrs["dim"], keepdim=attrs["keepdim"])
        return super().apply(op, args, attrs)


def test_max_and_min_along_a_dim_send_a_ties_gradient_to_the_returned_index_as_torch_does():
    ties = kink_graphs(["max_dim", "min_dim"])
    assert len(ties) >= 4
    for graph in ties:
        assert check_graph(graph, load_engine("minigrad-tensor"), numeric=False, second_order=False).passed
        assert not check_graph(graph, _TiesShared(), numeric=False, second_order=False).passed
    rng = np.random.default_rng(3)
    caught = 0
    for index in range(10):  # random graphs draw exact ties too
        graph = random_graph(rng, ops=["max_dim", "min_dim", "mul"], tensor=True, points=2)
        assert check_graph(graph, load_engine("minigrad-tensor"), seed=index).passed
        caught += not check_graph(graph, _TiesShared(), seed=index).passed
    assert caught


@pytest.mark.parametrize("name", ["sum", "mean", "max_dim", "min_dim"])
def test_reductions_draw_keepdim_both_ways_and_keep_reduced_dims_with_size_one(name):
    spec = REGISTRY[name]
    chooser = RngChooser(np.random.default_rng(1))
    drawn = {dict(spec.draw_tensor_attrs(chooser, (2, 3)))["keepdim"] for _ in range(40)}
    assert drawn == {False, True}
    dims = {"dims": (-1,)} if name in ("sum", "mean") else {"dim": -1}
    assert spec.out_shape([(2, 3)], {**dims, "keepdim": True}) == (2, 1)
    assert spec.out_shape([(2, 3)], {**dims, "keepdim": False}) == (2,)


def test_minigrads_shape_indexing_and_along_a_dim_ops_are_in_the_tensor_registry_and_claimed():
    surface = {"index", "where", "expand", "permute", "squeeze", "unsqueeze", "flatten", "max_dim", "min_dim"}
    assert surface <= set(TENSOR_ONLY)
    assert surface <= MinigradTensor.ops


@pytest.mark.parametrize("name", TENSOR_ONLY)
def test_a_shape_rule_refuses_arguments_its_attributes_do_not_fit(name):
    """The shrinker rewires nodes to arguments of other shapes: the rule then says None, or the
    shape the reference really computes, never raises."""
    spec = REGISTRY[name]
    chooser = RngChooser(np.random.default_rng(9))
    for drawn_on in SHAPE_PROBES:
        attrs = spec.draw_tensor_attrs(chooser, drawn_on)
        for shape in SHAPE_PROBES if attrs is not None else []:
            shapes = [shape, shape[::-1]] if name == "matmul" else [shape] * spec.arity
            out = spec.out_shape(shapes, dict(attrs))
            if out is not None:
                batch = [pad(_distinct_values((2, *s), first=0), s) for s in shapes]
                assert unpad(spec.numpy(batch, dict(attrs)), out).shape == (2, *out), (name, attrs, shape)
