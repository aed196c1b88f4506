"""Engines under test: the adapter protocol (`EngineAdapter`), `load_engine`, the built-in
adapters (minigrad's Value and Tensor, PyPI micrograd), the self-check's broken engines, and
hypothesis strategies for the graphs an engine can evaluate."""

from gradcheck.engines.adapter import BUILTIN_ENGINES, EngineAdapter, UnknownEngineError, load_engine

__all__ = ["BUILTIN_ENGINES", "EngineAdapter", "UnknownEngineError", "load_engine"]
