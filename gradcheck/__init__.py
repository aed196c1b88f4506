"""gradcheck: numerical gradient checking for minigrad (and any float64 callable), and parity
checks of any autograd engine against PyTorch on random expression graphs."""

from gradcheck.lazy import lazy_names

# Every name is imported on first use (PEP 562): `import gradcheck` (and so `python -m gradcheck
# --help`) imports nothing heavy, and checking a function numerically does not pay for torch.
_NAMES = {
    **dict.fromkeys(("gradcheck", "gradgradcheck"), "gradcheck.checker.check"),
    **dict.fromkeys(("GradcheckError", "GradcheckResult", "Mismatch"), "gradcheck.checker.failure"),
    **dict.fromkeys(("Differentiability", "is_differentiable_at"), "gradcheck.checker.kinks"),
    **dict.fromkeys(("numerical_jacobian", "numerical_jvp", "numerical_vjp"), "gradcheck.checker.numerical"),
    **dict.fromkeys(("MPValue", "accurate_gradient"), "gradcheck.checker.oracle"),
    **dict.fromkeys(("Tolerance", "policy_for"), "gradcheck.checker.tolerance"),
    **dict.fromkeys(("EngineAdapter", "load_engine"), "gradcheck.engines"),
    "random_graph": "gradcheck.graphs.generate",
    **dict.fromkeys(("Graph", "GraphFormatError"), "gradcheck.graphs.ir"),
    **dict.fromkeys(("GraphCheck", "check_graph", "check_kinks"), "gradcheck.parity"),
    **dict.fromkeys(("EngineCheck", "EngineFinding", "Replayed", "check_engine"), "gradcheck.notebook"),
}
__getattr__ = lazy_names("gradcheck", _NAMES)


__all__ = [
    "Differentiability",
    "EngineAdapter",
    "Graph",
    "GraphCheck",
    "GraphFormatError",
    "EngineCheck",
    "EngineFinding",
    "Replayed",
    "check_engine",
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
