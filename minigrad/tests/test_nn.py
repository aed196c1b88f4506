"""Spec for minigrad.nn's Module, Neuron, Layer and MLP: micrograd's API and numbers, torch's gradients."""

from __future__ import annotations

import random
import re

import pytest

import minigrad
from minigrad import Value
from minigrad.nn import MLP, Layer, Module, Neuron


def test_neuron_parameters_are_its_weights_then_its_bias():
    n = Neuron(3, rng=0)
    assert n.parameters() == [*n.w, n.b]
    assert all(-1.0 <= w.data <= 1.0 for w in n.w)
    assert n.b.data == 0.0


def test_neuron_computes_relu_of_affine_map_or_the_affine_map_itself():
    n = Neuron(2, rng=0)
    n.w[0].data, n.w[1].data, n.b.data = 2.0, -3.0, 0.5
    assert n([1.0, 1.0]).data == 0.0  # relu(2 - 3 + 0.5)
    assert n([1.0, -1.0]).data == 5.5
    linear = Neuron(2, nonlin=False, rng=0)
    linear.w[0].data, linear.w[1].data, linear.b.data = 2.0, -3.0, 0.5
    assert linear([1.0, 1.0]).data == -0.5


def test_layer_returns_a_list_or_a_single_value_for_one_neuron():
    assert len(Layer(3, 4, rng=0)([1.0, 2.0, 3.0])) == 4
    assert isinstance(Layer(3, 1, rng=0)([1.0, 2.0, 3.0]), Value)


def test_mlp_layers_are_relu_except_the_last():
    model = MLP(3, [4, 4, 1], rng=0)
    assert [layer.neurons[0].nonlin for layer in model.layers] == [True, True, False]
    assert len(model.parameters()) == 4 * 4 + 4 * 5 + 1 * 5


def test_repr_is_micrographs():
    model = MLP(2, [2, 1], rng=0)
    assert repr(model) == ("MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2)], Layer of [LinearNeuron(2)]]")


def test_global_seed_reproduces_micrograd_weights_and_outputs_exactly_and_gradients_to_rounding():
    micrograd_nn = pytest.importorskip("micrograd.nn")
    random.seed(1337)
    theirs = micrograd_nn.MLP(3, [4, 4, 1])
    random.seed(1337)
    ours = MLP(3, [4, 4, 1])
    assert repr(ours) == repr(theirs)
    assert [p.data for p in ours.parameters()] == [p.data for p in theirs.parameters()]
    x = [2.0, 3.0, -1.0]
    out_ours, out_theirs = ours(x), theirs(x)
    out_ours.backward()
    out_theirs.backward()
    assert out_ours.data == out_theirs.data
    # micrograd keeps a node's operands in a set, so the order in which a reused node's gradients
    # are summed (and with it their last bit) depends on memory addresses from run to run
    theirs_grads = [p.grad for p in theirs.parameters()]
    assert [p.grad for p in ours.parameters()] == pytest.approx(theirs_grads, rel=1e-14, abs=1e-300)


def test_an_int_seed_gives_the_same_weights_without_touching_global_random_state():
    state = random.getstate()
    a, b, c = MLP(2, [8, 1], rng=7), MLP(2, [8, 1], rng=7), MLP(2, [8, 1], rng=8)
    assert random.getstate() == state
    assert [p.data for p in a.parameters()] == [p.data for p in b.parameters()]
    assert [p.data for p in a.parameters()] != [p.data for p in c.parameters()]


def test_a_random_instance_is_used_as_the_source_of_weights():
    model = MLP(2, [3, 1], rng=random.Random(5))
    source = random.Random(5)
    expected = []
    for layer in model.layers:
        for neuron in layer.neurons:
            expected += [source.uniform(-1, 1) for _ in neuron.w] + [0.0]
    assert [p.data for p in model.parameters()] == expected


def test_a_hidden_layer_of_one_neuron_feeds_the_next_layer():
    model = MLP(2, [1, 1], rng=0)
    assert isinstance(model([1.0, 2.0]), Value)


def test_zero_grad_resets_value_gradients_to_float_zero():
    model = MLP(2, [3, 1], rng=0)
    model([1.0, -2.0]).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 and type(p.grad) is float for p in model.parameters())


class Custom(Module):
    """A module written without parameters(): everything is found by walking attributes."""

    def __init__(self) -> None:
        self.scale = Value(2.0)
        self.blocks = [Neuron(2, rng=0), Neuron(2, rng=1)]
        self.table = {"shift": Value(1.0), "again": None}
        self.shared = self.scale  # the same Value twice counts once
        self.pair = (Value(3.0), 4.0)
        self.label = "not a parameter"
        self.kind = Value  # a class, not a parameter


def test_parameters_are_found_generically_in_order_and_each_once():
    m = Custom()
    expected = [m.scale, *m.blocks[0].parameters(), *m.blocks[1].parameters(), m.table["shift"], m.pair[0]]
    assert [id(p) for p in m.parameters()] == [id(p) for p in expected]


def test_tensor_parameters_are_found_and_zero_grad_sets_their_grad_to_none():
    Tensor = getattr(minigrad, "Tensor", None)
    if Tensor is None:
        pytest.skip("minigrad.Tensor not available yet")

    class Holder(Module):
        def __init__(self) -> None:
            self.weight = Tensor([[1.0, 2.0]], requires_grad=True)
            self.bias = Value(0.5)

    m = Holder()
    assert [id(p) for p in m.parameters()] == [id(m.weight), id(m.bias)]
    (m.weight.sum() * 3.0).backward()
    assert m.weight.grad is not None
    m.zero_grad()
    assert m.weight.grad is None
    assert m.bias.grad == 0.0


def test_mlp_gradients_match_torch():
    torch = pytest.importorskip("torch")
    model = MLP(3, [4, 4, 1], rng=3)
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    loss = sum(model(x) ** 2 for x in xs)
    loss.backward()

    weights = [
        (
            torch.tensor(
                [[w.data for w in n.w] for n in layer.neurons], dtype=torch.float64, requires_grad=True
            ),
            torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64, requires_grad=True),
        )
        for layer in model.layers
    ]
    h = torch.tensor(xs, dtype=torch.float64)
    for i, (w, b) in enumerate(weights):
        h = h @ w.T + b
        if i < len(weights) - 1:
            h = torch.relu(h)
    torch_loss = (h**2).sum()
    torch_loss.backward()

    assert loss.data == pytest.approx(torch_loss.item(), rel=1e-12)
    expected = [
        g for w, b in weights for row, bias in zip(w.grad.tolist(), b.grad.tolist()) for g in [*row, bias]
    ]
    assert [p.grad for p in model.parameters()] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Neuron(3, rng=0)([1.0, 2.0]), "ReLUNeuron(3): expected 3 inputs, got 2"),
        (lambda: Neuron(-1), "nin (number of inputs) must be an integer >= 0, got -1"),
        (lambda: Layer(2, 0), "nout (number of neurons) must be an integer >= 1, got 0"),
        (lambda: MLP(2, []), "nouts must be a non-empty list of layer sizes, got []"),
        (lambda: MLP(2, 3), "nouts must be a non-empty list of layer sizes, got 3"),
    ],
)
def test_bad_sizes_and_inputs_raise_clear_value_errors(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_a_bad_rng_raises_type_error():
    with pytest.raises(TypeError, match=r"rng must be None, an int seed or a random\.Random, got str"):
        MLP(2, [1], rng="seed")
