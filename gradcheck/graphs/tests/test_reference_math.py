"""Each registry entry carries its op's whole reference: derivatives that agree with numerical
differentiation of its forward, a tolerance family, and an mpmath spelling the oracle uses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcheck import MPValue, numerical_jacobian
from gradcheck.checker.tolerance import FAMILIES, family_of
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS, in_domain
from gradcheck.graphs.shapes import pad, unpad
from gradcheck.testing.broken_engines import TinyAdapter

SAMPLES = np.linspace(-3.3, 3.1, 9)


def _attr_sets(spec):
    return [dict(zip(spec.attrs, combo)) for combo in zip(*spec.attrs.values())] or [{}]


def _points(spec, attrs):
    grid = np.array(np.meshgrid(*[SAMPLES] * spec.arity)).reshape(spec.arity, -1)
    args = [grid[i] for i in range(spec.arity)]
    with np.errstate(all="ignore"):
        ok = in_domain(spec, args, attrs, spec.numpy(args, attrs))
    return grid[:, ok].T


@pytest.mark.parametrize("name", SCALAR_OPS)
def test_every_scalar_op_has_reference_derivatives_a_family_and_an_mpmath_spelling(name):
    spec = REGISTRY[name]
    assert spec.grads is not None and spec.mpmath is not None and spec.elementwise
    assert spec.family in FAMILIES and family_of(name) == spec.family


@pytest.mark.parametrize("name", TENSOR_OPS)
def test_every_op_has_a_tolerance_family(name):
    assert REGISTRY[name].family in FAMILIES


ELEMENTWISE_OPS = [name for name, spec in REGISTRY.items() if spec.elementwise]


@pytest.mark.parametrize("name", ELEMENTWISE_OPS)
def test_reference_derivatives_agree_with_central_differences_of_the_reference_forward(name):
    spec = REGISTRY[name]
    for attrs in _attr_sets(spec):
        points = _points(spec, attrs)
        assert len(points), f"{name}: no sample inside its domain"
        for point in points:
            args = [float(v) for v in point]
            out = spec.numpy([np.float64(a) for a in args], attrs)
            exact = [float(g) for g in spec.grads([np.float64(a) for a in args], attrs, out)]
            jacobian = numerical_jacobian(lambda *xs, k=attrs: float(spec.numpy(list(xs), k)), args)[0]
            numeric = [float(block) for block in jacobian]
            scale = max(1.0, abs(float(out)))
            assert exact == pytest.approx(numeric, rel=1e-6, abs=1e-7 * scale), (name, args, attrs)


@pytest.mark.parametrize("name", [n for n in SCALAR_OPS if not REGISTRY[n].attrs])
def test_mpvalue_speaks_every_op_the_registry_spells_for_mpmath(name):
    spec = REGISTRY[name]
    for first, *others in _points(spec, {}):
        exact = float(getattr(MPValue(float(first)), name)(*map(float, others)))
        reference = spec.numpy([np.float64(first), *map(np.float64, others)], {})
        assert exact == pytest.approx(float(reference), rel=1e-14, abs=1e-300)


def test_mpvalue_refuses_an_op_the_registry_does_not_spell_for_mpmath():
    with pytest.raises(AttributeError, match="no method 'frobnicate'"):
        MPValue(1.0).frobnicate()
    assert math.isnan(float(MPValue(-1.0).log()))


def test_the_tiny_engine_of_the_self_check_runs_every_scalar_op_from_the_registry():
    assert TinyAdapter.ops == frozenset(SCALAR_OPS)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_op_is_spelled_for_array_engines_and_agrees_with_its_reference_on_numpy(name):
    spec = REGISTRY[name]
    assert spec.array is not None, f"{name}: no `array` spelling for function-style engines"
    if name in SCALAR_OPS:
        for point in _points(spec, _attr_sets(spec)[0]):
            args = [np.float64(v) for v in point]
            attrs = _attr_sets(spec)[0]
            with np.errstate(all="ignore"):
                assert spec.array(np, args, attrs) == pytest.approx(spec.numpy(args, attrs), rel=1e-13)


TENSOR_ONLY = [name for name in TENSOR_OPS if REGISTRY[name].tensor_only]


@pytest.mark.parametrize("name", TENSOR_ONLY)
def test_every_tensor_ops_array_spelling_agrees_point_by_point_with_its_batched_reference(name):
    """The `array` spelling (one point, for function-style engines) and the numpy reference (a
    padded batch, for the numeric check) are the same op at every point of drawn graphs."""
    spec = REGISTRY[name]
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(30):
        graph = random_graph(rng, ops=[name, "add"], tensor=True, points=3)
        values = [np.asarray(p) for p in graph.points]
        shapes = [i.shape for i in graph.inputs]
        for node in graph.nodes:
            args, arg_shapes = node.operands(values), node.operands(shapes, lambda c: ())
            padded = [pad(a, s) if isinstance(a, np.ndarray) else a for a, s in zip(args, arg_shapes)]
            out_shape = REGISTRY[node.op].out_shape(arg_shapes, node.attr)
            values.append(unpad(REGISTRY[node.op].numpy(padded, node.attr), out_shape))
            shapes.append(out_shape)
            if node.op == name:
                for point in range(3):
                    alone = [a[point] if isinstance(a, np.ndarray) else a for a in args]
                    expected = values[-1][point]
                    np.testing.assert_allclose(spec.array(np, alone, node.attr), expected, rtol=1e-13)
                checked += 1
    assert checked >= 5, f"{name}: drawn {checked} times"
