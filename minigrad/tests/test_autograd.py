"""The autograd core on Values: `backward()` semantics and `minigrad.grad`, checked against torch."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
from minigrad import Value

try:
    import torch
except ImportError:  # the torch comparisons skip; the rest of the file still runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def leaf(x: float):
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def diamond(a, b):
    """A graph where intermediate nodes are reused along several paths."""
    c = a * b
    d = c.tanh() + c * a
    e = d * d + c.sin() - b / d
    return e + e.exp() * 0.001 + c


# --- backward() ---------------------------------------------------------------------------------


@needs_torch
def test_reused_intermediate_nodes_match_torch() -> None:
    a, b = Value(0.7), Value(-1.3)
    out = diamond(a, b)
    out.backward()
    ta, tb = leaf(0.7), leaf(-1.3)
    diamond(ta, tb).backward()
    assert math.isclose(a.grad, ta.grad.item(), rel_tol=1e-12)
    assert math.isclose(b.grad, tb.grad.item(), rel_tol=1e-12)


def test_million_op_chain_backward_is_iterative() -> None:
    x = Value(0.5)
    y = x
    for _ in range(1_000_000):
        y = y + x
    y.backward()
    assert y.data == 0.5 * 1_000_001
    assert x.grad == 1_000_001.0
    del y  # freeing the deep chain must not overflow the C stack either


@needs_torch
def test_gradients_accumulate_across_backward_calls_like_torch() -> None:
    x = Value(3.0)
    (x * x).backward()
    (x * 2.0).backward()
    t = leaf(3.0)
    (t * t).backward()
    (t * 2.0).backward()
    assert x.grad == t.grad.item() == 8.0


@needs_torch
def test_second_backward_on_the_same_graph_accumulates_like_retain_graph() -> None:
    a, b = Value(0.7), Value(-1.3)
    out = diamond(a, b)
    out.backward()
    first = (a.grad, b.grad)
    out.backward()
    ta, tb = leaf(0.7), leaf(-1.3)
    t_out = diamond(ta, tb)
    t_out.backward(retain_graph=True)
    t_out.backward()
    assert (a.grad, b.grad) == (2 * first[0], 2 * first[1])
    assert math.isclose(a.grad, ta.grad.item(), rel_tol=1e-12)
    assert math.isclose(b.grad, tb.grad.item(), rel_tol=1e-12)


def test_backward_docstring_documents_the_second_backward() -> None:
    assert "again" in (Value.backward.__doc__ or "")


@needs_torch
@pytest.mark.parametrize("seed", [3.0, -0.5, 0.0, Value(2.5)])
def test_backward_with_a_gradient_seeds_the_output(seed) -> None:
    a, b = Value(0.7), Value(-1.3)
    diamond(a, b).backward(seed)
    ta, tb = leaf(0.7), leaf(-1.3)
    diamond(ta, tb).backward(torch.tensor(float(seed), dtype=torch.float64))
    assert math.isclose(a.grad, ta.grad.item(), rel_tol=1e-12, abs_tol=0.0)
    assert math.isclose(b.grad, tb.grad.item(), rel_tol=1e-12, abs_tol=0.0)


def test_backward_of_a_leaf_gives_one() -> None:
    x = Value(4.0)
    x.backward()
    assert x.grad == 1.0


def test_constants_never_receive_or_leak_gradients() -> None:
    x = Value(2.0)
    c = 5.0
    y = c * x + c / x - (c - x) + c**x
    y.backward()
    assert c == 5.0
    assert y._prev and all(isinstance(p, Value) for node in _graph(y) for p in node._prev)
    expected = c - c / 4.0 + 1.0 + c**2.0 * math.log(c)
    assert math.isclose(x.grad, expected, rel_tol=1e-12)


def _graph(root: Value) -> list[Value]:
    from minigrad.autograd import topological_order

    return topological_order([root])


# --- minigrad.grad ------------------------------------------------------------------------------


def test_grad_returns_gradients_without_touching_dot_grad() -> None:
    x, y = Value(2.0), Value(3.0)
    z = x * y + x
    gx, gy = minigrad.grad(z, [x, y])
    assert (gx, gy) == (4.0, 2.0)
    assert (x.grad, y.grad, z.grad) == (0.0, 0.0, 0.0)


def test_grad_then_backward_do_not_interfere() -> None:
    x = Value(2.0)
    z = x * x * x
    assert minigrad.grad(z, x) == (12.0,)
    z.backward()
    assert x.grad == 12.0
    assert minigrad.grad(z, x) == (12.0,)
    assert x.grad == 12.0


@needs_torch
def test_grad_multiple_outputs_and_inputs_with_grad_outputs_match_torch() -> None:
    def outputs(a, b, c):
        return [a * b + c.tanh(), (a - c).sigmoid() * b, a.exp()]

    values = [Value(0.3), Value(-1.1), Value(2.0)]
    seeds = [1.5, -0.25, 2.0]
    mine = minigrad.grad(outputs(*values), values, grad_outputs=seeds)
    tensors = [leaf(0.3), leaf(-1.1), leaf(2.0)]
    ref = torch.autograd.grad(
        outputs(*tensors), tensors, grad_outputs=[torch.tensor(s).double() for s in seeds]
    )
    for m, r in zip(mine, ref):
        assert math.isclose(m, r.item(), rel_tol=1e-12)


def test_grad_of_a_single_output_with_a_single_seed() -> None:
    x = Value(3.0)
    assert minigrad.grad(x * x, x, grad_outputs=0.5) == (3.0,)
    assert minigrad.grad(x * x, [x], grad_outputs=[Value(2.0)]) == (12.0,)


def test_unused_input_raises_unless_allowed() -> None:
    x, unused = Value(1.0), Value(2.0)
    y = x * 3.0
    with pytest.raises(RuntimeError, match=r"input 1 .*allow_unused=True"):
        minigrad.grad(y, [x, unused])
    assert minigrad.grad(y, [x, unused], allow_unused=True) == (3.0, None)
    assert minigrad.grad(y, [x, unused], allow_unused=True, materialize_grads=True) == (3.0, 0.0)


def test_grad_refuses_non_values() -> None:
    with pytest.raises(TypeError, match="float"):
        minigrad.grad(Value(1.0), [1.0])


def test_grad_outputs_count_must_match_outputs() -> None:
    x = Value(1.0)
    with pytest.raises(ValueError, match="2 gradients for 1 outputs"):
        minigrad.grad([x * 2.0], [x], grad_outputs=[1.0, 2.0])


def test_create_graph_gives_values_that_differentiate_again() -> None:
    x = Value(2.0)
    (d1,) = minigrad.grad(x**3, x, create_graph=True)
    (d2,) = minigrad.grad(d1, x, create_graph=True)
    (d3,) = minigrad.grad(d2, x, create_graph=True)
    assert all(isinstance(d, Value) for d in (d1, d2, d3))
    assert (d1.data, d2.data, d3.data) == (12.0, 12.0, 6.0)
    assert x.grad == 0.0


def test_without_create_graph_grad_returns_floats() -> None:
    x = Value(2.0)
    (g,) = minigrad.grad(x.tanh(), x)
    assert type(g) is float


@needs_torch
def test_backward_through_a_gradient_graph() -> None:
    x = Value(0.4)
    (dx,) = minigrad.grad(x.sin() * x, x, create_graph=True)
    dx.backward()
    t = leaf(0.4)
    (tdx,) = torch.autograd.grad(t.sin() * t, t, create_graph=True)
    tdx.backward()
    assert math.isclose(x.grad, t.grad.item(), rel_tol=1e-12)


small = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


@needs_torch
@given(a=small, b=small, c=small)
def test_mixed_third_partials_of_a_composite_match_torch(a: float, b: float, c: float) -> None:
    def f(x, y, z):
        return (x * y).tanh() * z.exp() + (y - z).sigmoid() / (1.5 + x.sin()) + (x * z).cos() ** 2

    def derivatives(inputs, grad_fn, **kwargs):
        level, found = [f(*inputs)], []
        for _ in range(3):
            level = [g for y in level for g in grad_fn(y, inputs, create_graph=True, **kwargs)]
            found.append([float(g.item() if hasattr(g, "item") else g.data) for g in level])
        return found

    mine = derivatives([Value(a), Value(b), Value(c)], minigrad.grad)
    ref = derivatives([leaf(a), leaf(b), leaf(c)], torch.autograd.grad)
    for m_level, r_level in zip(mine, ref):
        for m, r in zip(m_level, r_level):
            assert math.isclose(m, r, rel_tol=1e-9, abs_tol=1e-12)


# --- random graphs with reuse ---------------------------------------------------------------------

BINARY = [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x - y]
UNARY = [lambda x: x.tanh(), lambda x: x.sin(), lambda x: x * 0.5, lambda x: 1.0 - x]


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[list[float], list[tuple[int, int, int, int]]]:
    """Leaf values and steps (kind, op, i, j): node k applies op to earlier nodes i and j."""
    leaves = draw(st.lists(small, min_size=1, max_size=4))
    steps = []
    for k in range(draw(st.integers(1, 25))):
        available = len(leaves) + k
        steps.append(
            (
                draw(st.integers(0, 1)),
                draw(st.integers(0, 3)),
                draw(st.integers(0, available - 1)),
                draw(st.integers(0, available - 1)),
            )
        )
    return leaves, steps


def evaluate(nodes: list, steps: list[tuple[int, int, int, int]]):
    nodes = list(nodes)
    for kind, op, i, j in steps:
        nodes.append(BINARY[op % 3](nodes[i], nodes[j]) if kind else UNARY[op](nodes[i]))
    return nodes


@given(graph=random_graphs())
def test_topological_order_places_each_node_once_after_its_inputs(graph) -> None:
    from minigrad.autograd import topological_order

    leaves, steps = graph
    nodes = evaluate([Value(v) for v in leaves], steps)
    order = topological_order([nodes[-1], nodes[0]])
    position = {id(n): i for i, n in enumerate(order)}
    assert len(position) == len(order)
    for node in order:
        assert all(position[id(p)] < position[id(node)] for p in node._prev)
    reachable, stack = set(), [nodes[-1], nodes[0]]
    while stack:
        n = stack.pop()
        if id(n) not in reachable:
            reachable.add(id(n))
            stack.extend(n._prev)
    assert set(position) == reachable


@needs_torch
@given(graph=random_graphs())
def test_random_graphs_with_reused_nodes_match_torch(graph) -> None:
    leaves, steps = graph
    values = [Value(v) for v in leaves]
    out = evaluate(values, steps)
    total = out[-1] + out[len(out) // 2] * 2.0
    total.backward()
    tensors = [leaf(v) for v in leaves]
    t_out = evaluate(tensors, steps)
    (t_out[-1] + t_out[len(t_out) // 2] * 2.0).backward()
    for v, t in zip(values, tensors):
        ref = 0.0 if t.grad is None else t.grad.item()
        assert math.isclose(v.grad, ref, rel_tol=1e-9, abs_tol=1e-9 * max(1.0, abs(total.data)))


class TaggedValue(Value):
    """A subclass of Value, so that an op's two operands can be of different types."""

    __slots__ = ()


@given(graph=random_graphs())
def test_values_of_a_subclass_mixed_with_plain_values_get_the_same_gradients(graph) -> None:
    leaves, steps = graph
    plain = [Value(v) for v in leaves]
    mixed = [TaggedValue(v) if i % 2 else Value(v) for i, v in enumerate(leaves)]
    for values in (plain, mixed):
        out = evaluate(values, steps)
        (out[-1] + out[0] * 2.0).backward()
    assert [v.grad for v in mixed] == [v.grad for v in plain]
