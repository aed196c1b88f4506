"""The code of micrograd's lessons runs on minigrad unchanged: labels, micrograd's constructor,
hand-written `_backward` closures beside minigrad's ops, `draw_graph`, and the lessons' tanh MLP."""

from __future__ import annotations

import math
import random

import pytest

import minigrad
from minigrad import Value, draw_graph
from minigrad.nn import MLP, Layer, Neuron

# --- labels and micrograd's constructor ---------------------------------------------------------


def test_labels_are_given_at_construction_or_set_later_and_drawn():
    x1 = Value(2.0, label="x1")
    w1 = Value(-3.0, label="w1")
    x1w1 = x1 * w1
    x1w1.label = "x1*w1"
    assert (x1.label, x1w1.label, (x1 + w1).label) == ("x1", "x1*w1", "")
    dot = str(draw_graph(x1w1))
    assert "{ x1 | data 2 " in dot and "{ x1*w1 | data -6 " in dot and "{ w1 | data -3 " in dot


def test_micrograds_constructor_records_children_and_op():
    a, b = Value(2.0), Value(3.0)
    c = Value(a.data + b.data, (a, b), "+")
    assert c._prev == c._parents == (a, b)
    assert c._op == "+"
    assert (a * b)._parents == (a, b)


# --- hand-written ops: a `_backward` closure, the lessons' way ----------------------------------


def lesson_sin(x: Value) -> Value:
    out = Value(math.sin(x.data), (x,), "sin")

    def _backward() -> None:
        x.grad += math.cos(x.data) * out.grad

    out._backward = _backward
    return out


def lesson_mul(a: Value, b: Value) -> Value:
    out = Value(a.data * b.data, (a, b), "*")

    def _backward() -> None:
        a.grad += b.data * out.grad
        b.grad += a.data * out.grad

    out._backward = _backward
    return out


@pytest.mark.parametrize(
    "expression",
    [
        lambda x, y, sin, mul: mul(sin(x), y) + sin(x),  # a hand-written node used twice
        lambda x, y, sin, mul: sin(x * y + x).tanh() * x,  # minigrad ops on both sides of it
        lambda x, y, sin, mul: mul(x, x) + mul(sin(y), x) ** 2,  # the same child twice
        lambda x, y, sin, mul: mul(sin(x), sin(x)) - sin(sin(y)),
    ],
)
def test_hand_written_ops_take_part_in_backward_beside_minigrads_ops(expression):
    x, y = Value(0.7), Value(-1.3)
    expression(x, y, lesson_sin, lesson_mul).backward()
    ref_x, ref_y = Value(0.7), Value(-1.3)
    expression(ref_x, ref_y, Value.sin, Value.__mul__).backward()
    assert (x.grad, y.grad) == pytest.approx((ref_x.grad, ref_y.grad), rel=1e-12)
    assert x.grad != 0.0 and y.grad != 0.0


def test_gradients_accumulate_across_backward_calls_through_hand_written_ops():
    x = Value(0.3)
    y = lesson_sin(x) * 2.0
    y.backward()
    y.backward()
    assert x.grad == pytest.approx(4 * math.cos(0.3))


def test_the_lessons_manual_backward_steps_work_on_minigrads_ops():
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    d = c + a
    d.grad = 1.0
    d._backward()
    c._backward()
    assert (a.grad, b.grad, c.grad) == (1.0 + -3.0, 2.0, 1.0)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_says_a_hand_written_op_has_no_rule_it_can_use(create_graph):
    x = Value(0.5)
    y = lesson_sin(x) * x
    with pytest.raises(RuntimeError, match=r"'sin'.*_backward closure.*ScalarOp"):
        minigrad.grad(y, x, create_graph=create_graph)
    y.backward()  # backward itself still works afterwards
    assert x.grad == pytest.approx(math.cos(0.5) * 0.5 + math.sin(0.5))


def test_backward_cannot_be_replaced_on_a_node_minigrad_made():
    x = Value(1.0)
    with pytest.raises(AttributeError, match="minigrad's op"):
        (x * 2.0)._backward = lambda: None


# --- draw_graph in Jupyter ----------------------------------------------------------------------


def test_draw_graph_is_dot_text_that_jupyter_can_show():
    x = Value(1.5, label="x")
    graph = draw_graph((x * 2.0).tanh())
    assert isinstance(graph, str) and str(graph).startswith("digraph minigrad {")
    bundle = graph._repr_mimebundle_()
    svg = graph._repr_svg_()
    if svg is None:  # no graphviz package or no `dot` program: Jupyter shows the text
        assert bundle == {"text/plain": str(graph)}
    else:
        assert "<svg" in svg and bundle == {"image/svg+xml": svg}


def test_without_graphviz_jupyter_gets_the_text(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_graphviz(name, *args, **kwargs):
        if name == "graphviz":
            raise ImportError("no graphviz here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_graphviz)
    graph = draw_graph(Value(1.0) + 2.0)
    assert graph._repr_svg_() is None
    assert graph._repr_mimebundle_() == {"text/plain": str(graph)}


# --- the lessons' network -------------------------------------------------------------------------


def test_tanh_mlp_has_tanh_on_every_layer_and_the_default_stays_micrograds():
    lessons = MLP(3, [4, 4, 1], activation="tanh")
    assert all(n.nonlin and n.activation == "tanh" for layer in lessons.layers for n in layer.neurons)
    default = MLP(3, [4, 4, 1])
    assert [n.nonlin for layer in default.layers for n in layer.neurons][-1] is False
    assert all(n.activation == "relu" for layer in default.layers[:-1] for n in layer.neurons)
    assert repr(Neuron(2, activation="tanh")) == "TanhNeuron(2)"
    assert Layer(2, 1, activation="sigmoid")([0.0, 0.0]).data == 0.5
    assert Neuron(2, activation="tanh", rng=0)([1.0, 1.0])._op == "tanh"


def test_an_unknown_activation_is_named_in_the_error():
    with pytest.raises(
        ValueError, match=r"MLP: activation must be one of 'relu', 'tanh', 'sigmoid', got 'gelu'"
    ):
        MLP(3, [4, 1], activation="gelu")


FOUR_POINTS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TARGETS = [1.0, -1.0, -1.0, 1.0]


@pytest.mark.parametrize("seed", [0, 1, 7, 42, 1337, 2024])
def test_the_lessons_network_fits_the_four_points_from_any_seed(seed):
    random.seed(seed)
    n = MLP(3, [4, 4, 1], activation="tanh")
    for _ in range(200):
        loss = sum((n(x) - y) ** 2 for x, y in zip(FOUR_POINTS, TARGETS))
        for p in n.parameters():
            p.grad = 0.0
        loss.backward()
        for p in n.parameters():
            p.data += -0.05 * p.grad
    final = sum((n(x) - y) ** 2 for x, y in zip(FOUR_POINTS, TARGETS))
    assert final.data < 0.05
