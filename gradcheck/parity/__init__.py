"""The three-way parity check of a graph: an engine against torch and the numerical reference.

Its names are imported on first use (PEP 562): importing a module of this package, or gradcheck
itself, does not import torch until a check runs.
"""

from gradcheck.lazy import lazy_names

_LAZY = {
    "GraphCheck": "gradcheck.parity.result",
    "check_graph": "gradcheck.parity.compare",
    "check_kinks": "gradcheck.parity.compare",
    "kink_graphs": "gradcheck.parity.compare",
}

__getattr__ = lazy_names("gradcheck.parity", _LAZY)


__all__ = ["GraphCheck", "check_graph", "check_kinks", "kink_graphs"]
