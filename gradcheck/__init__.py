"""gradcheck: numerical gradient checking for minigrad (and any float64 callable), and parity
checks of any autograd engine against PyTorch on random expression graphs."""

import importlib

from gradcheck.checker.check import gradcheck, gradgradcheck
from gradcheck.checker.failure import GradcheckError, GradcheckResult, Mismatch
from gradcheck.checker.kinks import Differentiability, is_differentiable_at
from gradcheck.checker.numerical import numerical_jacobian, numerical_jvp, numerical_vjp
from gradcheck.checker.oracle import MPValue, accurate_gradient
from gradcheck.checker.tolerance import Tolerance, policy_for
from gradcheck.engines import EngineAdapter, load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, GraphFormatError

# The parity check needs torch; it is imported on first use, so `import gradcheck` to check a
# function numerically does not pay for torch (PEP 562).
_PARITY = ("GraphCheck", "check_graph", "check_kinks")


def __getattr__(name: str) -> object:
    if name in _PARITY:
        return getattr(importlib.import_module("gradcheck.parity"), name)
    raise AttributeError(f"module 'gradcheck' has no attribute {name!r}")


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
