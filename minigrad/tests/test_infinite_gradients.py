"""An infinite upstream gradient where an op's derivative is zero: torch gives 0, and so must minigrad.

Rules choose between the gradient and zero rather than multiply by a 0/1 mask (inf * 0 is nan), and
a zero gradient under `create_graph` is a fresh zero rather than g * 0. Where torch itself does
multiply (abs at 0: g * sgn(0)), minigrad gives torch's nan too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad
from minigrad import Value

torch = pytest.importorskip("torch")

INF = math.inf

# (what, expression on a Tensor of either library, input)
TENSOR_CASES = [
    ("relu at a negative input", lambda x: x.relu(), -1.0),
    ("relu at zero", lambda x: x.relu(), 0.0),
    ("maximum's losing operand", lambda x: x.maximum(x.detach() * 0 + 1.0), 0.0),
    ("minimum's losing operand", lambda x: x.minimum(x.detach() * 0 - 1.0), 0.0),
    ("clamp above the range", lambda x: x.clamp(0.0, 1.0), 2.0),
    ("clamp below the range", lambda x: x.clamp(min=0.0), -2.0),
    ("where's unchosen branch", lambda x: x.where(x > 5.0, x.detach() * 0 + 1.0), 0.0),
    ("x ** 0", lambda x: x**0, 2.0),
    ("abs at zero (torch: nan)", lambda x: x.abs(), 0.0),
]


def run_tensor(lib, fn, x0: float, create_graph: bool) -> float:
    if lib is torch:
        x = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
        g = torch.tensor([INF], dtype=torch.float64)
        (grad,) = torch.autograd.grad(fn(x), x, g, create_graph=create_graph)
        return grad.item()
    x = minigrad.tensor([x0], dtype=np.float64, requires_grad=True)
    g = minigrad.tensor([INF], dtype=np.float64)
    (grad,) = minigrad.grad(fn(x), x, g, create_graph=create_graph)
    return grad.item()


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("what", "fn", "x0"), TENSOR_CASES, ids=[c[0] for c in TENSOR_CASES])
def test_tensor_rules_give_torchs_gradient_for_an_infinite_upstream_gradient(what, fn, x0, create_graph):
    mine = run_tensor(minigrad, fn, x0, create_graph)
    theirs = run_tensor(torch, fn, x0, create_graph)
    assert same(mine, theirs), f"{what}: minigrad {mine}, torch {theirs}"


def test_tensor_backward_with_an_infinite_gradient_stores_torchs_zero_for_relu():
    x = minigrad.tensor([-1.0, 2.0], dtype=np.float64, requires_grad=True)
    x.relu().backward(minigrad.tensor([INF, INF], dtype=np.float64))
    t = torch.tensor([-1.0, 2.0], dtype=torch.float64, requires_grad=True)
    t.relu().backward(torch.tensor([INF, INF], dtype=torch.float64))
    assert x.grad.tolist() == t.grad.tolist() == [0.0, INF]


VALUE_CASES = [
    ("relu at a negative input", lambda x: x.relu(), -1.0),
    ("relu at zero", lambda x: x.relu(), 0.0),
    ("x ** 0", lambda x: x**0.0, 2.0),
    ("x ** y at y == 0", lambda x: x ** (x * 0.0), 2.0),
    ("abs at zero (torch: nan)", lambda x: x.abs(), 0.0),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("what", "fn", "x0"), VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_value_rules_give_torchs_gradient_for_an_infinite_upstream_gradient(what, fn, x0, create_graph):
    x = Value(x0)
    (grad,) = minigrad.grad(fn(x), x, Value(INF) if create_graph else INF, create_graph=create_graph)
    t = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (ref,) = torch.autograd.grad(fn(t), t, torch.tensor(INF, dtype=torch.float64), create_graph=create_graph)
    mine = grad.data if isinstance(grad, Value) else grad
    assert same(mine, ref.item()), f"{what}: minigrad {mine}, torch {ref.item()}"


def test_value_backward_with_an_infinite_seed_gives_relu_a_zero_gradient():
    x = Value(-1.0)
    x.relu().backward(INF)
    assert x.grad == 0.0
