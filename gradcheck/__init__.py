"""gradcheck: numerical gradient checking for minigrad (and any float64 callable)."""

from gradcheck.backends import EngineAdapter, load_engine
from gradcheck.check import gradcheck, gradgradcheck
from gradcheck.failure import GradcheckError, GradcheckResult, Mismatch
from gradcheck.generate import random_graph
from gradcheck.graph import Graph, GraphFormatError
from gradcheck.kinks import Differentiability, is_differentiable_at
from gradcheck.numerical import numerical_jacobian, numerical_jvp, numerical_vjp
from gradcheck.oracle import MPValue, accurate_gradient
from gradcheck.parity import GraphCheck, check_graph, check_kinks
from gradcheck.tolerance import Tolerance, policy_for

__all__ = [
    "Differentiability",
    "EngineAdapter",
    "Graph",
    "GraphCheck",
    "GraphFormatError",
    "check_graph",
    "check_kinks",
    "load_engine",
    "random_graph",
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
