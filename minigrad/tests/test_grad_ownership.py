"""The gradient-buffer protocol of `Tensor.backward` (`TensorOp.fresh_grads` and `reuses_grad`):
a rule may overwrite its incoming gradient only when the pass made it for that node alone. Here:
every rule that says its gradients are fresh returns new memory; no array a user can see (a seed,
a `.grad`, a retained gradient, the graph's own arrays) is ever written; and `backward()` gives,
bit for bit, what the core's plain walk (`grad()`, which never overwrites) gives."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
import minigrad.functional as F
from minigrad.autograd import grad
from minigrad.op import TensorOp
from minigrad.tensor import apply_op
from minigrad.tensor_ops import MatMul

rng = np.random.default_rng(0)


def arr(*shape):
    return rng.standard_normal(shape)


def t(*shape, requires_grad=True):
    return minigrad.tensor(arr(*shape), requires_grad=requires_grad)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


# rule -> calls of its backward on arrays: (g, out, inputs, params), one per branch of the rule
ROWS = np.arange(4)
FRESH_CASES = {
    F.Linear: [
        (arr(4, 3), None, (arr(4, 5), arr(3, 5), arr(3)), {}),
        (arr(2, 4, 3), None, (arr(2, 4, 5), arr(3, 5), arr(3)), {}),
        (arr(4, 3), None, (arr(4, 5), arr(3, 5), arr()), {}),
        (arr(4, 3), None, (arr(4, 5), arr(3, 5)), {}),
    ],
    F.LinearReLU: [
        (arr(4, 3), np.maximum(arr(4, 3), 0), (arr(4, 5), arr(3, 5), arr(3)), {"owned": True}),
        (arr(4, 3), np.maximum(arr(4, 3), 0), (arr(4, 5), arr(3, 5), arr(3)), {}),
    ],
    F.CrossEntropy: [
        (np.array(1.5), None, (arr(4, 6),), {"index": (ROWS, np.array([0, 5, 2, 2])), "reduction": r})
        for r in ("mean", "sum")
    ]
    + [
        (arr(4), None, (arr(4, 6),), {"index": (ROWS, np.array([0, 5, 2, 2])), "reduction": "none"}),
        (np.array(2.0), None, (arr(6),), {"index": (np.array(3),), "reduction": "mean"}),
    ],
    MatMul: [
        (arr(4, 2), None, (arr(4, 3), arr(3, 2)), {}),
        (arr(2), None, (arr(3), arr(3, 2)), {}),
        (arr(4), None, (arr(4, 3), arr(3)), {}),
        (np.array(0.5), None, (arr(3), arr(3)), {}),
        (arr(5, 4, 2), None, (arr(5, 4, 3), arr(3, 2)), {}),
    ],
}


def test_every_rule_that_says_its_gradients_are_fresh_is_checked_here():
    # the engine's own rules: not this file's, nor a planted bug another test module defines
    engine_rules = (
        rule
        for rule in _subclasses(TensorOp)
        if rule.__module__.startswith("minigrad.") and ".tests." not in rule.__module__
    )
    declared = {rule for rule in engine_rules if rule.fresh_grads}
    assert declared == set(FRESH_CASES)


@pytest.mark.parametrize("rule", list(FRESH_CASES), ids=lambda rule: rule.name)
def test_fresh_gradients_share_memory_with_nothing_the_rule_was_given(rule):
    for g, out, inputs, params in FRESH_CASES[rule]:
        given = [g.copy(), *(x for x in (out, *inputs) if x is not None)]
        g_in = given[0]
        needs = tuple(True for _ in inputs)
        grads = [x for x in rule.backward(g_in, out, *inputs, needs=needs, **params) if x is not None]
        assert grads
        for i, a in enumerate(grads):
            assert type(a) is np.ndarray and a.flags.writeable
            others = [x for x in given[1:]] + grads[:i] + grads[i + 1 :]
            if not params.get("owned"):
                others.append(g_in)  # an owned g is the rule's to overwrite (it is not returned)
            assert not any(np.shares_memory(a, x) for x in others), (rule.name, i)


def test_linear_relu_masking_an_owned_gradient_gives_the_same_bits_even_for_inf_and_nan():
    out = np.maximum(arr(6, 4), 0)
    out[0, :] = 0.0
    x, w, b = arr(6, 5), arr(4, 5), arr(4)
    for special in (None, np.inf, np.nan):
        g = arr(6, 4)
        if special is not None:
            g[0, 0] = g[1, 1] = special
            out[1, 1] = 0.0
        expected = F.LinearReLU.backward(g.copy(), out, x, w, b, needs=(True, True, True))
        got = F.LinearReLU.backward(g.copy(), out, x, w, b, needs=(True, True, True), owned=True)
        for e, a in zip(expected, got):
            np.testing.assert_array_equal(a, e)
        assert not np.isnan(got[1]).any() or special is np.nan


def _net(x, w1, b1, w2, b2, w3, b3):
    """A graph with fan-out into linear_relu nodes, a shared weight, an add, matmuls and a relu."""
    h = F.linear_relu(x, w1, b1)
    a = F.linear_relu(h, w2, b2)
    c = F.linear_relu(h, w2)  # h and w2 used twice: their gradients are sums
    d = F.linear_relu((a - c).relu() + c, w2, b2)  # w2 a third time; the add gives relu and c one g
    r = (d @ w2.transpose(0, 1)).relu()  # the elementwise relu, its g from a matmul
    return F.cross_entropy(r @ w3.transpose(0, 1) + b3, np.array([0, 2, 1, 1, 0]))


def _leaves(dtype=np.float64):
    shapes = [(5, 4), (6, 4), (6,), (6, 6), (6,), (3, 6), (3,)]
    return [minigrad.tensor(arr(*shape).astype(dtype), requires_grad=True) for shape in shapes]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_backward_gives_the_same_bits_as_the_plain_walk(dtype):
    leaves = _leaves(dtype)
    expected = grad(_net(*leaves), leaves)
    _net(*leaves).backward()
    for leaf, e in zip(leaves, expected):
        np.testing.assert_array_equal(leaf.grad.data, e.data)
        assert leaf.grad.dtype == dtype


def test_backward_matches_torch_on_the_fan_out_graph():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    leaves = _leaves()
    _net(*leaves).backward()
    ref = [torch.tensor(leaf.data, requires_grad=True) for leaf in leaves]
    x, w1, b1, w2, b2, w3, b3 = ref
    h = torch.relu(tf.linear(x, w1, b1))
    a, c = torch.relu(tf.linear(h, w2, b2)), torch.relu(tf.linear(h, w2))
    r = torch.relu(torch.relu(tf.linear(torch.relu(a - c) + c, w2, b2)) @ w2.T)
    tf.cross_entropy(r @ w3.T + b3, torch.tensor([0, 2, 1, 1, 0])).backward()
    for leaf, r in zip(leaves, ref):
        np.testing.assert_allclose(leaf.grad.data, r.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_a_retained_gradient_is_not_masked_by_its_own_relu():
    x, w1, b1, w2, b2, w3 = t(5, 4), t(6, 4), t(6), t(6, 6), t(6), t(3, 6)
    h = F.linear_relu(x, w1, b1)  # its gradient comes from linear_relu's rule: fresh
    z = F.linear_relu(h, w2, b2)  # its gradient comes from linear's rule: fresh
    h.retain_grad()
    z.retain_grad()
    loss = F.cross_entropy(F.linear(z, w3), np.array([0, 2, 1, 1, 0]))
    loss.backward()
    expected = grad(loss, [h, z])
    assert ((z.data == 0) & (expected[1].data != 0)).any()  # relu would mask some of it
    for node, e in zip((h, z), expected):
        np.testing.assert_array_equal(node.grad.data, e.data)


def test_seeds_grads_and_the_graphs_arrays_are_never_written():
    params = [t(6, 4), t(6), t(3, 6), t(3)]
    x = t(5, 4, requires_grad=False)
    h = F.linear_relu(x, *params[:2])
    z = F.linear_relu(h, *params[2:])
    graph = [x.data, h.data, z.data] + [p.data for p in params]
    graph_copies = [a.copy() for a in graph]
    seed = arr(5, 3)
    seed_tensor = minigrad.tensor(seed.copy())
    seed_copy = seed.copy()
    z.backward(seed)
    first = [p.grad.data for p in params]
    first_copies = [a.copy() for a in first]
    z.backward(seed_tensor)  # the graph is kept: the same gradients are added once more
    np.testing.assert_array_equal(seed, seed_copy)
    np.testing.assert_array_equal(seed_tensor.data, seed_copy)
    for a, c, p in zip(first, first_copies, params):
        np.testing.assert_array_equal(a, c)  # the first .grad arrays, as the user may hold them
        np.testing.assert_array_equal(p.grad.data, c + c)
    for a, c in zip(graph, graph_copies):
        np.testing.assert_array_equal(a, c)


def test_gradients_kept_by_create_graph_are_not_written_by_a_later_backward():
    params = [t(6, 4), t(6), t(3, 6), t(3)]
    x = t(5, 4)
    z = F.linear_relu(F.linear_relu(x, *params[:2]), *params[2:])
    (gx,) = grad(z.sum(), [x], create_graph=True)
    kept = gx.data.copy()
    expected = grad((gx * gx).sum(), params[::2])
    (gx * gx).sum().backward()
    np.testing.assert_array_equal(gx.data, kept)
    for p, e in zip(params[::2], expected):
        np.testing.assert_array_equal(p.grad.data, e.data)


class _DoubleToScalar(TensorOp):
    """A custom rule that says its gradients are fresh and returns a numpy scalar for a 0-d input."""

    name = "double_to_scalar"
    fresh_grads = True

    @staticmethod
    def forward(x):
        return x * 2.0

    @staticmethod
    def backward(g, out, x, *, needs):
        return (np.float64(2.0 * g),)


def test_a_fresh_numpy_scalar_is_never_summed_into_in_place():
    # h gets two fresh gradients; a numpy scalar cannot take the second one in place
    x = minigrad.tensor(np.array(1.5), requires_grad=True)
    h = x * 3.0
    y = apply_op(_DoubleToScalar, (h,)) + apply_op(_DoubleToScalar, (h,))
    y.backward()
    assert x.grad.item() == 12.0
