"""Spec for minigrad.optim: SGD and Adam take exactly torch.optim's steps, on Values and on Tensors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
from minigrad import Value
from minigrad.nn import MLP, mse_loss
from minigrad.optim import SGD, Adam

torch = pytest.importorskip("torch")

INPUTS = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
TARGETS = [1.0, -1.0, -1.0, 1.0]
CONFIGS = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.02, "momentum": 0.5, "weight_decay": 0.1}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.05}),
]
STEPS = 8


def torch_mlp_params(model):
    """The model's weights as torch float64 leaves, one (weight matrix, bias vector) per layer."""

    def leaf(data):
        return torch.tensor(data, dtype=torch.float64, requires_grad=True)

    return [
        (leaf([[w.data for w in n.w] for n in layer.neurons]), leaf([n.b.data for n in layer.neurons]))
        for layer in model.layers
    ]


def torch_mlp_loss(params):
    h = torch.tensor(INPUTS, dtype=torch.float64)
    for i, (w, b) in enumerate(params):
        h = h @ w.T + b
        if i < len(params) - 1:
            h = torch.relu(h)
    return torch.nn.functional.mse_loss(h.squeeze(1), torch.tensor(TARGETS, dtype=torch.float64))


def flat(params):
    return [x for w, b in params for row, bias in zip(w.tolist(), b.tolist()) for x in [*row, bias]]


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS)
def test_training_an_mlp_of_values_takes_torchs_steps(name, kwargs):
    model = MLP(3, [4, 4, 1], rng=0)
    tparams = torch_mlp_params(model)
    ours = getattr(minigrad.optim, name)(model.parameters(), **kwargs)
    theirs = getattr(torch.optim, name)([t for pair in tparams for t in pair], **kwargs)
    for _ in range(STEPS):
        ours.zero_grad()
        mse_loss([model(x) for x in INPUTS], TARGETS).backward()
        ours.step()
        theirs.zero_grad()
        torch_mlp_loss(tparams).backward()
        theirs.step()
    moved = [p.data for p in model.parameters()]
    assert moved != [p.data for p in MLP(3, [4, 4, 1], rng=0).parameters()]
    assert moved == pytest.approx(flat(tparams), rel=0, abs=1e-12)


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tensor_parameters_are_updated_in_place_with_torchs_steps(name, kwargs, dtype):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    w0, b0 = rng.normal(size=(2, 3)), rng.normal(size=2)
    unused0 = rng.normal(size=4)

    w = minigrad.Tensor(w0.astype(dtype), requires_grad=True)
    b = minigrad.Tensor(b0.astype(dtype), requires_grad=True)
    unused = minigrad.Tensor(unused0.astype(dtype), requires_grad=True)  # grad stays None: skipped
    arrays = (w.data, b.data)
    ours = getattr(minigrad.optim, name)([w, b, unused], **kwargs)

    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    tw, tb, tunused = (torch.tensor(a, dtype=tdtype, requires_grad=True) for a in (w0, b0, unused0))
    theirs = getattr(torch.optim, name)([tw, tb, tunused], **kwargs)
    tx, ty = torch.tensor(x, dtype=tdtype), torch.tensor(y, dtype=tdtype)
    mx, my = minigrad.Tensor(x.astype(dtype)), minigrad.Tensor(y.astype(dtype))

    for _ in range(STEPS):
        ours.zero_grad()
        (((mx @ w.T + b - my) ** 2).mean()).backward()
        ours.step()
        theirs.zero_grad()
        (((tx @ tw.T + tb - ty) ** 2).mean()).backward()
        theirs.step()

    assert (w.data, b.data) == arrays and all(a.dtype == dtype for a in arrays)
    assert unused.grad is None and np.array_equal(unused.data, unused0.astype(dtype))
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=0, atol=tol)
    np.testing.assert_allclose(b.data, tb.detach().numpy(), rtol=0, atol=tol)
    assert not np.allclose(w.data, w0, atol=1e-6)


def test_sgd_momentum_buffer_starts_at_the_first_gradient():
    p = Value(1.0)
    opt = SGD([p], lr=0.1, momentum=0.9)
    trajectory = []
    for _ in range(3):
        p.grad = 1.0
        opt.step()
        trajectory.append(p.data)
    # buffers 1, 1.9, 2.71: torch's convention (buf = g at first, then mu * buf + g), no dampening
    assert trajectory == pytest.approx([0.9, 0.71, 0.439], rel=1e-15)


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_adams_bias_corrected_first_step_moves_every_parameter_by_lr(scale):
    params = [Value(0.0), Value(0.0)]
    params[0].grad, params[1].grad = 3.0 * scale, -0.5 * scale
    Adam(params, lr=0.01, eps=0.0).step()
    assert [p.data for p in params] == pytest.approx([-0.01, 0.01], rel=1e-12)


def test_lr_can_be_changed_between_steps():
    p = Value(0.0)
    opt = SGD([p], lr=1.0)
    p.grad = 1.0
    opt.step()
    opt.lr = 0.5
    opt.step()
    assert p.data == -1.5


def test_zero_grad_sets_value_grads_to_zero_and_tensor_grads_to_none():
    v = Value(2.0)
    t = minigrad.Tensor([1.0, 2.0], requires_grad=True)
    (v * 3.0).backward()
    (t * 3.0).sum().backward()
    opt = SGD([v, t], lr=0.1)
    opt.zero_grad()
    assert v.grad == 0.0 and t.grad is None


def bad_arguments():
    return [
        ("SGD", {"lr": -0.1}),
        ("SGD", {"lr": 0.1, "momentum": -0.5}),
        ("SGD", {"lr": 0.1, "weight_decay": -1.0}),
        ("Adam", {"lr": -1e-3}),
        ("Adam", {"eps": -1e-8}),
        ("Adam", {"betas": (1.0, 0.999)}),
        ("Adam", {"betas": (0.9, -0.1)}),
        ("Adam", {"weight_decay": -0.1}),
    ]


@pytest.mark.parametrize(("name", "kwargs"), bad_arguments())
def test_invalid_hyperparameters_raise_torchs_value_error(name, kwargs):
    with pytest.raises(ValueError) as torch_error:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as our_error:
        getattr(minigrad.optim, name)([Value(0.0)], **kwargs)
    assert str(our_error.value) == str(torch_error.value)


def test_nan_learning_rate_is_rejected():
    with pytest.raises(ValueError, match="Invalid learning rate: nan"):
        SGD([Value(0.0)], lr=float("nan"))


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ([], ValueError, "optimizer got an empty parameter list"),
        (Value(1.0), TypeError, "should be an iterable of Values or Tensors, but got Value"),
        ([Value(1.0), 2.0], TypeError, "parameter 1 is float 2.0"),
        ([{"params": [Value(1.0)]}], TypeError, r"parameter groups \(dicts\) are not supported"),
    ],
)
def test_bad_parameter_lists_raise_clear_errors(params, error, message):
    with pytest.raises(error, match=message):
        Adam(params)


def test_a_parameter_listed_twice_is_refused():
    p = Value(1.0)
    with pytest.raises(ValueError, match=r"got parameter 1 \(Value\(data=1.0, grad=0.0\)\) more than once"):
        SGD([p, p], lr=0.1)


def test_parameters_can_be_a_generator():
    model = MLP(2, [2, 1], rng=0)
    opt = SGD((p for p in model.parameters()), lr=0.1)
    assert [id(p) for p in opt.params] == [id(p) for p in model.parameters()]


def test_momentum_buffer_does_not_share_memory_with_the_gradient():
    w0 = np.array([1.0, -2.0])
    w = minigrad.Tensor(w0.copy(), requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    ours, theirs = SGD([w], lr=0.1, momentum=0.9), torch.optim.SGD([tw], lr=0.1, momentum=0.9)
    for _ in range(3):
        (w * w).sum().backward()
        ours.step()
        w.grad.data[...] = 0.0  # zeroing in place, like torch's zero_grad(set_to_none=False)
        (tw * tw).sum().backward()
        theirs.step()
        theirs.zero_grad(set_to_none=False)
    np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=0, atol=1e-15)


grads = st.lists(st.lists(st.floats(-10.0, 10.0), min_size=3, max_size=3), min_size=1, max_size=5)


def run_on_given_gradients(name, kwargs, gradient_steps):
    """Our optimizer and torch's on three parameters, fed the same gradients; both final parameters."""
    start = [0.5, -1.5, 2.0]
    ours_p = [Value(x) for x in start]
    theirs_p = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in start]
    ours = getattr(minigrad.optim, name)(ours_p, **kwargs)
    theirs = getattr(torch.optim, name)(theirs_p, **kwargs)
    for step in gradient_steps:
        for p, tp, g in zip(ours_p, theirs_p, step):
            p.grad = g
            tp.grad = torch.tensor(g, dtype=torch.float64)
        ours.step()
        theirs.step()
    return [p.data for p in ours_p], [tp.item() for tp in theirs_p]


@given(
    lr=st.floats(0.0, 1.0),
    momentum=st.floats(0.0, 0.99),
    weight_decay=st.floats(0.0, 0.1),
    gradient_steps=grads,
)
def test_sgd_equals_torch_for_any_hyperparameters_and_gradients(lr, momentum, weight_decay, gradient_steps):
    kwargs = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay}
    ours, theirs = run_on_given_gradients("SGD", kwargs, gradient_steps)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)


@given(
    lr=st.floats(0.0, 1.0),
    beta1=st.floats(0.0, 0.99),
    beta2=st.floats(0.0, 0.9999),
    eps=st.floats(1e-10, 1e-3),
    weight_decay=st.floats(0.0, 0.1),
    gradient_steps=grads,
)
def test_adam_equals_torch_for_any_hyperparameters_and_gradients(
    lr, beta1, beta2, eps, weight_decay, gradient_steps
):
    kwargs = {"lr": lr, "betas": (beta1, beta2), "eps": eps, "weight_decay": weight_decay}
    ours, theirs = run_on_given_gradients("Adam", kwargs, gradient_steps)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
