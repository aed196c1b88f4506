"""gradcheck: numerical gradient checking for minigrad (and any float64 callable)."""

from gradcheck.check import gradcheck, gradgradcheck
from gradcheck.failure import GradcheckError, GradcheckResult, Mismatch
from gradcheck.kinks import Differentiability, is_differentiable_at
from gradcheck.numerical import numerical_jacobian, numerical_jvp, numerical_vjp
from gradcheck.oracle import MPValue, accurate_gradient
from gradcheck.tolerance import Tolerance, policy_for

__all__ = [
    "Differentiability",
    "GradcheckError",
    "GradcheckResult",
    "MPValue",
    "Mismatch",
    "Tolerance",
    "accurate_gradient",
    "gradcheck",
    "gradgradcheck",
    "is_differentiable_at",
    "numerical_jacobian",
    "numerical_jvp",
    "numerical_vjp",
    "policy_for",
]
