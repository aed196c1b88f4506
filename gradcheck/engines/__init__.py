"""Engines under test: the adapter protocols (object-style `EngineAdapter`, function-style
`FunctionAdapter`), `load_engine`, adapters built by inspecting a micrograd-style value class, the
built-in adapters (minigrad's Value and Tensor, PyPI micrograd, JAX, HIPS autograd), and
hypothesis strategies for the graphs an engine can evaluate. Engines with planted bugs, for the
harness's own tests, are in `gradcheck.testing`."""

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.functional import FunctionAdapter
from gradcheck.engines.loading import BUILTIN_ENGINES, UnknownEngineError, load_engine

__all__ = ["BUILTIN_ENGINES", "EngineAdapter", "FunctionAdapter", "UnknownEngineError", "load_engine"]
