"""Engines the harness drives: minigrad (Value, Tensor), torch, plain-number numerics, micrograd."""

from gradcheck.backends.base import BUILTIN_ENGINES, EngineAdapter, UnknownEngineError, load_engine

__all__ = ["BUILTIN_ENGINES", "EngineAdapter", "UnknownEngineError", "load_engine"]
