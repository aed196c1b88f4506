"""Every op of the registry has an exact form (`exact_rule`), and it is the op: each elementwise
op's value, first and second derivatives against mpmath's own functions and `mpmath.diff` at
several points, each tensor op's values over small shapes against the op written here with
mpmath's functions (the shape and indexing ops, which move numbers without arithmetic, against
torch's float64 results bit for bit)."""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.shapes import graph_shapes, unpad
from gradcheck.parity.exact import exact_rule
from gradcheck.parity.exact_jets import jet, nearest_float
from gradcheck.parity.exact_numbers import constant
from gradcheck.parity.torch_reference import tensor_nodes

PRECISION = 192
CLOSE = 2.0**-180  # relative: a few ulps at PRECISION (mpmath's functions, other spellings)
DIFF_CLOSE = 1e-35  # relative: mpmath.diff's own error at PRECISION


def _sigmoid(x):
    e = mpmath.exp(x)  # another spelling than the registry's 1 / (1 + exp(-x))
    return e / (1 + e)


# Each elementwise op as mpmath's own functions spell it; attributes by name.
ELEMENTWISE = {
    "add": mpmath.fadd,
    "sub": mpmath.fsub,
    "mul": mpmath.fmul,
    "div": mpmath.fdiv,
    "pow": mpmath.power,
    "pow_const": lambda x, exponent: mpmath.power(x, exponent),
    "neg": mpmath.fneg,
    "relu": lambda x: max(x, mpmath.mpf(0)),
    "tanh": mpmath.tanh,
    "sigmoid": _sigmoid,
    "exp": mpmath.exp,
    "log": mpmath.log,
    "sin": mpmath.sin,
    "atan": mpmath.atan,
    "atan2": mpmath.atan2,
    "cos": mpmath.cos,
    "sqrt": mpmath.sqrt,
    "abs": mpmath.fabs,
    "maximum": max,
    "minimum": min,
    "clamp": lambda x, low, high: min(max(x, mpmath.mpf(low)), mpmath.mpf(high)),
}
GRID = (-2.3, -0.7, 0.45, 1.9, 3.1)
ATTRS = {
    "pow_const": [{"exponent": c} for c in (2.0, -1.0, 0.5, 1.5, 3.0)],
    "clamp": [{"low": -1.0, "high": 0.5}],
}


def test_every_op_of_the_registry_has_an_exact_form():
    elementwise = {name for name, spec in REGISTRY.items() if spec.elementwise}
    assert elementwise == set(SCALAR_OPS) | {"maximum", "minimum", "clamp"} == set(ELEMENTWISE)
    for name in TENSOR_OPS:
        spec = REGISTRY[name]
        assert spec.elementwise or spec.exact is not None or spec.array is not None, name
        assert callable(exact_rule(name))


def _elementwise_points(name):
    """(arguments, attributes) inside the op's domain, no two arguments equal (no tie)."""
    spec = REGISTRY[name]
    for attrs in ATTRS.get(name, [{}]):
        for args in itertools.product(GRID, repeat=spec.arity):
            arrays = [np.array([a]) for a in args]
            if len(set(args)) == len(args) and (spec.domain is None or spec.domain(arrays, attrs).all()):
                yield [mpmath.mpf(a) for a in args], attrs


def _close(a, b, tolerance, floor=1e-300):
    return abs(a - b) <= tolerance * max(abs(a), abs(b), floor)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_an_elementwise_ops_exact_value_and_derivatives_are_mpmaths(name):
    reference = ELEMENTWISE[name]
    checked = 0
    with mpmath.workprec(PRECISION):
        for args, attrs in _elementwise_points(name):
            f = lambda *xs, attrs=attrs: reference(*xs, **attrs)
            j = jet(REGISTRY[name], args, attrs, 2)
            assert _close(j.value, f(*args), CLOSE), (name, args, attrs)
            n = len(args)
            for i in range(n):
                slope = mpmath.diff(f, args, tuple(int(k == i) for k in range(n)))
                assert _close(j.d1[i], slope, DIFF_CLOSE, 1), (name, args, attrs, i)
                for m in range(n):
                    curvature = mpmath.diff(f, args, tuple(int(k == i) + int(k == m) for k in range(n)))
                    second = j.d2[m][i] or 0  # None: no second derivative at all
                    assert _close(second, curvature, DIFF_CLOSE, 1), (name, args, attrs, i, m)
            checked += 1
    assert checked >= 3, f"{name}: {checked} points inside its domain"


def test_an_elementwise_op_over_an_array_broadcasts_and_is_mpmaths_at_every_element():
    with mpmath.workprec(PRECISION):
        x = np.array([[constant(0.5), constant(-1.25), constant(2.0)]], dtype=object)
        y = np.array([[constant(3.0)], [constant(0.75)]], dtype=object)
        out = exact_rule("atan2")([x, y], {})
        assert out.shape == (2, 3)
        for (i, j), value in np.ndenumerate(out):
            assert value.v == mpmath.atan2(x[0, j].v, y[i, 0].v)


# --- tensor ops -----------------------------------------------------------------------------------


def _along(x, dims, keepdims, reduce):
    """`reduce` (a function of a flat list of mpf) over `dims` of an object array."""
    dims = tuple(d % x.ndim for d in dims)
    moved = np.moveaxis(x, dims, tuple(range(x.ndim - len(dims), x.ndim)))
    rows = moved.reshape(*moved.shape[: moved.ndim - len(dims)], -1)
    out = np.empty(rows.shape[:-1], dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = reduce(list(rows[index]))
    return np.expand_dims(out, dims) if keepdims else out


def _elementwise(f, *arrays):
    return np.frompyfunc(f, len(arrays), 1)(*arrays)


def _softmax(x, dim):
    total = _along(x, (dim,), True, lambda row: mpmath.fsum(mpmath.exp(v) for v in row))
    return _elementwise(lambda v, s: mpmath.exp(v) / s, x, total)


def _log_softmax(x, dim):
    total = _along(x, (dim,), True, lambda row: mpmath.log(mpmath.fsum(mpmath.exp(v) for v in row)))
    return _elementwise(mpmath.fsub, x, total)


def _reduced(loss, reduction):
    flat = list(np.ravel(loss))
    if reduction == "none":
        return loss
    return mpmath.fsum(flat) / (len(flat) if reduction == "mean" else 1)


def _rows(x, target):
    """Each row's entry at its class: (N, C) with N targets, or (C,) with one."""
    if x.ndim == 1:
        return np.array([x[target]], dtype=object), False
    return np.array([x[i, t] for i, t in enumerate(target)], dtype=object), True


def _class_loss(x, attrs, log_probs):
    picked, rows = _rows(log_probs, attrs["target"])
    loss = _elementwise(mpmath.fneg, picked)
    return _reduced(loss if rows else loss[0], attrs["reduction"])


def _linear(a):
    y = np.matmul(a[0], np.swapaxes(a[1], -1, -2))
    return y + a[2] if len(a) == 3 else y


def _bce(x, y):
    """The textbook form: -(y log s + (1 - y) log(1 - s)), s the logistic sigmoid, with the
    digits 1 - s loses for a large x."""
    with mpmath.extraprec(int(2 * abs(x)) + 64):
        s = _sigmoid(x)
        loss = -(y * mpmath.log(s) + (1 - y) * mpmath.log(1 - s))
    return +loss


def _max_dim(x, attrs, pick):
    return _along(x, (attrs["dim"],), attrs["keepdim"], pick)


# Each arithmetic tensor op written with mpmath's functions, on object arrays of mpf (one point).
TENSOR = {
    "matmul": lambda a, k: np.matmul(a[0], a[1]),
    "sum": lambda a, k: _along(a[0], k["dims"], k.get("keepdim", False), mpmath.fsum),
    "mean": lambda a, k: _along(a[0], k["dims"], k.get("keepdim", False), lambda r: mpmath.fsum(r) / len(r)),
    "amax": lambda a, k: _along(a[0], k["dims"], False, max),
    "amin": lambda a, k: _along(a[0], k["dims"], False, min),
    "clamp": lambda a, k: _elementwise(lambda v: ELEMENTWISE["clamp"](v, k["low"], k["high"]), a[0]),
    "maximum": lambda a, k: _elementwise(max, *a),
    "minimum": lambda a, k: _elementwise(min, *a),
    "softmax": lambda a, k: _softmax(a[0], k["dim"]),
    "log_softmax": lambda a, k: _log_softmax(a[0], k["dim"]),
    "max_dim": lambda a, k: _max_dim(a[0], k, max),
    "min_dim": lambda a, k: _max_dim(a[0], k, min),
    "linear": lambda a, k: _linear(a),
    "linear_no_bias": lambda a, k: _linear(a),
    "linear_relu": lambda a, k: _elementwise(ELEMENTWISE["relu"], _linear(a)),
    "linear_relu_no_bias": lambda a, k: _elementwise(ELEMENTWISE["relu"], _linear(a)),
    "cross_entropy": lambda a, k: _class_loss(a[0], k, _log_softmax(a[0], -1)),
    "nll_loss": lambda a, k: _class_loss(a[0], k, a[0]),
    "mse_loss": lambda a, k: _reduced(_elementwise(lambda u, v: (u - v) ** 2, *a), k["reduction"]),
    "binary_cross_entropy_with_logits": lambda a, k: _reduced(_elementwise(_bce, *a), k["reduction"]),
}
LAYOUT = ["transpose", "reshape", "index", "where", "expand", "permute", "squeeze", "unsqueeze", "flatten"]


def test_the_tensor_ops_are_the_arithmetic_ones_here_and_the_layout_ones():
    tensor_only = {name for name in TENSOR_OPS if REGISTRY[name].tensor_only}
    assert tensor_only == set(TENSOR) | set(LAYOUT)


def _samples(name, wanted=6):
    """(operands at one point, attributes, torch's float64 result there) of op `name`, from random
    tensor graphs (as the registry's tests draw them)."""
    rng, found = np.random.default_rng(11), []
    for _ in range(60):
        graph = random_graph(rng, ops=[name, "add"], tensor=True, points=2)
        leaves = [torch.from_numpy(np.asarray(p, dtype=np.float64)) for p in graph.points]
        padded, _ = tensor_nodes(graph, leaves)
        values = [unpad(v, s).numpy() for v, s in zip(padded, graph_shapes(graph))]
        for i, node in enumerate(graph.nodes):
            if node.op == name:
                args = node.operands(values)
                for point in range(2):
                    alone = [a[point] if isinstance(a, np.ndarray) else a for a in args]
                    found.append((alone, node.attr, values[graph.n_inputs + i][point]))
        if len(found) >= wanted:
            return found
    pytest.fail(f"{name}: drawn {len(found)} times")


def _objects(x, make):
    return np.vectorize(make, otypes=[object])(x) if isinstance(x, np.ndarray) else make(x)


@pytest.mark.parametrize("name", sorted(TENSOR))
def test_a_tensor_ops_exact_values_over_small_shapes_are_mpmaths(name):
    with mpmath.workprec(PRECISION):
        for args, attrs, _ in _samples(name):
            exact = exact_rule(name)([_objects(a, constant) for a in args], attrs)
            reference = TENSOR[name]([_objects(a, mpmath.mpf) for a in args], attrs)
            exact, reference = np.asarray(exact, dtype=object), np.asarray(reference, dtype=object)
            assert exact.shape == reference.shape, (name, attrs)
            scale = max((abs(v) for v in np.ravel(reference)), default=0) or 1
            for e, r in zip(np.ravel(exact), np.ravel(reference)):
                assert abs(e.v - r) <= CLOSE * scale * 16, (name, attrs, e, r)


@pytest.mark.parametrize("name", LAYOUT)
def test_a_shape_or_indexing_ops_exact_form_moves_the_same_numbers_as_torch(name):
    with mpmath.workprec(PRECISION):
        for args, attrs, expected in _samples(name):
            exact = np.asarray(exact_rule(name)([_objects(a, constant) for a in args], attrs), dtype=object)
            assert exact.shape == np.shape(expected)
            assert [nearest_float(e.v) for e in np.ravel(exact)] == np.ravel(expected).tolist()
