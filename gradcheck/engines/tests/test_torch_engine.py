"""The checker knows no engine: torch tensors are checked through their adapter as minigrad's are."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradcheck import GradcheckError, gradcheck, gradgradcheck, policy_for
from gradcheck.engines.torch_engine import TorchAdapter

TORCH = TorchAdapter()


def _inputs():
    a = torch.tensor([0.3, -1.2, 0.7], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([[0.5], [1.5]], dtype=torch.float64, requires_grad=True)
    return [a, b]


class _SinWithCosTimesTwo(torch.autograd.Function):
    """sin whose backward is off by a factor of two: a wrong rule written in torch."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x.cos()


def test_a_correct_torch_function_passes_gradcheck_and_gradgradcheck():
    f = lambda a, b: (a * b).sin() + a.exp() / (b * b + 1)
    assert gradcheck(f, _inputs(), engine=TORCH)
    assert gradcheck(f, _inputs(), engine=TORCH, fast_mode=True)
    assert gradgradcheck(f, _inputs(), engine=TORCH)


def test_the_tolerance_comes_from_the_ops_torch_recorded():
    result = gradcheck(lambda a, b: (a * b).sin() + a.exp(), _inputs(), engine=TORCH)
    assert result.tolerance == policy_for(["mul", "sin", "add", "exp"])


def test_a_wrong_torch_backward_is_caught_named_and_reproduced_in_torch():
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda a: _SinWithCosTimesTwo.apply(a) * 3.0, [_inputs()[0]], engine=TORCH)
    result = info.value.result
    assert result.mismatches and result.mismatches[0].input == 0
    assert "import torch" in result.reproduce and "torch.tensor([0.3, -1.2, 0.7]" in result.reproduce
    assert "engine='gradcheck.engines.torch_engine:TorchAdapter'" in result.reproduce


def test_inputs_and_gradients_come_back_as_the_engines_values():
    a = torch.tensor(np.array([1.0, 2.0]), requires_grad=True)
    assert TORCH.is_node(a) and not TORCH.is_scalar(a)
    assert TORCH.like(a, np.array([3.0, 4.0])).dtype == torch.float64
    (g,) = TORCH.grad([a * a], [a], [np.ones(2)])
    np.testing.assert_array_equal(TORCH.value(g), [2.0, 4.0])


def test_the_hessian_of_a_linear_graph_is_zero_not_an_error():
    # sum(x0): its gradient is a constant, so the second backward has nothing to differentiate
    from gradcheck.graphs.ir import Graph, Input, OpNode

    x = np.array([0.5, -1.0, 2.0])
    graph = Graph(
        [Input("x0", x, (3,))], [OpNode("sum", (0,), (("dims", (0,)),))], [1], meta={"kind": "tensor"}
    )
    hvp = TORCH.run_hvp(graph, [x], [np.array(1.0)], [np.ones(3)])
    assert np.array_equal(np.asarray(hvp[0]), np.zeros(3))


def test_a_linear_graph_has_a_zero_hessian_vector_product_as_an_engine():
    # the gradients of -x or x + x are constants: no graph to differentiate again, and no error
    from gradcheck.graphs.ir import Graph, Input, OpNode
    from gradcheck.parity.compare import check_graph

    x0 = Input("x0", np.array([[1.0, 2.0, 3.0]]), (1, 3))
    for node in (OpNode("neg", (0,)), OpNode("add", (0, 0))):
        graph = Graph([x0], [node], [1], meta={"kind": "tensor"})
        ones = [np.ones((1, 3))]
        assert TORCH.run_hvp(graph, [x0.value], ones, ones)[0].tolist() == [[0.0] * 3]
        assert check_graph(graph, TORCH).passed
