"""The nn layer's parity: minigrad's MLPs trained step by step agree with torch, and a fused op, a
layer or an optimizer that goes wrong is named, with the step and the entry.

The planted bug is the one the fused hidden layer invites: `linear_relu` masking, in place, a
gradient its backward pass does not own. Random tensor graphs catch it, and so does the nn check
on a network whose hidden activations keep their gradients.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import minigrad.functional
from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_nn import MinigradNetwork
from gradcheck.engines.network import Architecture
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.compare import check_graph
from gradcheck.parity.nn_step import check_network, check_networks, random_architecture
from minigrad import optim
from minigrad.elementwise import ReLU
from minigrad.functional import Linear

NETWORK = MinigradNetwork()


def _masks_every_gradient(g, out, x, weight, *bias, needs, owned=False):
    """linear_relu's backward as if it always owned g: relu's mask written into the caller's array."""
    (grad_product,) = ReLU.backward(g, out, None, owned=True)
    return Linear.backward(grad_product, None, x, weight, *bias, needs=needs)


@pytest.fixture
def masking_unowned_gradients(monkeypatch):
    monkeypatch.setattr(minigrad.functional.LinearReLU, "backward", staticmethod(_masks_every_gradient))


def test_random_architectures_train_as_in_torch():
    checks = check_networks(NETWORK, count=40, seed=1)
    assert {c.arch.kind for c in checks} == {"value", "tensor"}
    assert {c.arch.optimizer for c in checks} == {"sgd", "adam"}
    assert any(c.arch.retain_hidden for c in checks) and any(c.arch.loss == "cross_entropy" for c in checks)
    assert [c.report() for c in checks if not c.passed] == []
    assert max(c.max_rel_err for c in checks) < 1e-12


RETAINED = Architecture("tensor", (3, 4, 4, 2), batch=5, loss="cross_entropy", retain_hidden=True)


def test_the_nn_check_catches_linear_relu_masking_a_gradient_it_does_not_own(masking_unowned_gradients):
    check = check_network(NETWORK, RETAINED, seed=0)
    assert not check.passed
    assert "step 1: gradient of hidden activation" in str(check.problems[0])


def test_without_retained_activations_the_masking_bug_changes_nothing_a_plain_network_shows(
    masking_unowned_gradients,
):
    """Each hidden layer's gradient is made fresh for it by the next layer: owning it is right."""
    assert check_network(NETWORK, dataclasses.replace(RETAINED, retain_hidden=False), seed=0).passed


def test_random_tensor_graphs_catch_linear_relu_masking_a_gradient_it_does_not_own(masking_unowned_gradients):
    ops = ["linear_relu", "linear_relu_no_bias", "add", "mul", "sum"]
    failed = 0
    for index in range(40):
        graph = random_graph(np.random.default_rng([7, index]), ops=ops, tensor=True, points=2)
        failed += not check_graph(graph, load_engine("minigrad-tensor"), seed=index).passed
    assert failed >= 3


def test_the_same_random_tensor_graphs_pass_with_the_real_linear_relu():
    ops = ["linear_relu", "linear_relu_no_bias", "add", "mul", "sum"]
    for index in range(40):
        graph = random_graph(np.random.default_rng([7, index]), ops=ops, tensor=True, points=2)
        check = check_graph(graph, load_engine("minigrad-tensor"), seed=index)
        assert check.passed, check.report()


def test_an_optimizer_that_forgets_adams_bias_correction_is_caught(monkeypatch):
    monkeypatch.setattr(optim.Adam, "step", _adam_without_bias_correction)
    arch = Architecture("value", (2, 3, 1), activation="tanh", optimizer="adam", lr=0.1)
    check = check_network(NETWORK, arch, seed=3)
    assert not check.passed
    assert "step 1: layer 0 weight after the update" in str(check.problems[0])


def _adam_without_bias_correction(self):
    beta1, beta2 = self.betas
    for p, state in zip(self.params, self.state):
        g = p.grad
        m = state["exp_avg"] = beta1 * state.get("exp_avg", 0.0) + (1 - beta1) * g
        v = state["exp_avg_sq"] = beta2 * state.get("exp_avg_sq", 0.0) + (1 - beta2) * g * g
        p.data -= self.lr * m / (v**0.5 + self.eps)


def test_an_architecture_describes_itself_in_a_report():
    arch = random_architecture(np.random.default_rng(0))
    report = check_network(NETWORK, arch, seed=0).report()
    assert report.startswith(arch.describe()) and "agrees with torch" in report
