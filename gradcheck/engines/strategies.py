"""Hypothesis strategies for graphs an engine can evaluate: the graph strategies restricted to its ops."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from gradcheck.engines.adapter import EngineAdapter, loaded
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import TENSOR_OPS, resolve_ops
from gradcheck.graphs.strategies import scalar_graphs, tensor_graphs
from gradcheck.graphs.surface import adapter_variants


def engine_graphs(engine: EngineAdapter, **kwargs: Any) -> st.SearchStrategy[Graph]:
    """`scalar_graphs` restricted to the ops an engine adapter supports, in the forms it handles
    (`gradcheck.graphs.surface`)."""
    adapter = loaded(engine, "engine_graphs")
    ops = [op for op in resolve_ops(kwargs.pop("ops", None)) if op in adapter.ops]
    kwargs.setdefault("variants", adapter_variants(adapter))
    return scalar_graphs(ops=ops, **kwargs)


def engine_tensor_graphs(engine: EngineAdapter, **kwargs: Any) -> st.SearchStrategy[Graph]:
    """`tensor_graphs` restricted to the ops a tensor engine adapter supports, in the forms it
    handles."""
    adapter = loaded(engine, "engine_tensor_graphs")
    ops = [op for op in resolve_ops(kwargs.pop("ops", None), TENSOR_OPS) if op in adapter.ops]
    kwargs.setdefault("variants", adapter_variants(adapter))
    return tensor_graphs(ops=ops, **kwargs)
