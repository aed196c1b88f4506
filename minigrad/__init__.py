"""minigrad: a small, fast, correct automatic-differentiation engine (scalar Value and numpy Tensor)."""

from minigrad.autograd import grad
from minigrad.draw import draw_graph, render_graph
from minigrad.grad_mode import (
    detect_anomaly,
    enable_grad,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from minigrad.scalar_ops import ScalarOp
from minigrad.value import Value, apply_op

__all__ = [
    "ScalarOp",
    "Value",
    "apply_op",
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
