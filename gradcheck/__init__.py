"""gradcheck: numerical gradient checking for minigrad (and any float64 callable), and parity
checks of any autograd engine against PyTorch on random expression graphs."""

from gradcheck.checker.check import gradcheck, gradgradcheck
from gradcheck.checker.failure import GradcheckError, GradcheckResult, Mismatch
from gradcheck.checker.kinks import Differentiability, is_differentiable_at
from gradcheck.checker.numerical import numerical_jacobian, numerical_jvp, numerical_vjp
from gradcheck.checker.oracle import MPValue, accurate_gradient
from gradcheck.checker.tolerance import Tolerance, policy_for
from gradcheck.engines import EngineAdapter, load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, GraphFormatError
from gradcheck.lazy import lazy_names

# The parity check needs torch; it is imported on first use, so `import gradcheck` to check a
# function numerically does not pay for torch (PEP 562).
_PARITY = dict.fromkeys(("GraphCheck", "check_graph", "check_kinks"), "gradcheck.parity")
__getattr__ = lazy_names("gradcheck", _PARITY)


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
