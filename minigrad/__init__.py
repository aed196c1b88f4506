"""minigrad: a small, fast, correct automatic-differentiation engine (scalar Value and numpy Tensor)."""

from minigrad import nn, optim
from minigrad.autograd import grad
from minigrad.draw import draw_graph, render_graph
from minigrad.floatmath import NumberTooLargeError
from minigrad.grad_mode import (
    detect_anomaly,
    enable_grad,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from minigrad.scalar_ops import ScalarOp
from minigrad.tensor import (
    Tensor,
    bool_,
    cat,
    float32,
    float64,
    int32,
    int64,
    matmul,
    maximum,
    minimum,
    stack,
    where,
)
from minigrad.tensor_creation import (
    arange,
    from_numpy,
    full,
    manual_seed,
    ones,
    ones_like,
    rand,
    randn,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.tensor_ops import TensorOp
from minigrad.value import Value, apply_op

__all__ = [
    "nn",
    "optim",
    "NumberTooLargeError",
    "ScalarOp",
    "Tensor",
    "TensorOp",
    "Value",
    "apply_op",
    "arange",
    "bool_",
    "cat",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "int32",
    "int64",
    "manual_seed",
    "matmul",
    "maximum",
    "minimum",
    "ones",
    "ones_like",
    "rand",
    "randn",
    "stack",
    "tensor",
    "where",
    "zeros",
    "zeros_like",
    "detect_anomaly",
    "draw_graph",
    "enable_grad",
    "grad",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "render_graph",
    "set_grad_enabled",
]
