"""Checking a campaign's input before any work: the engine, its ops, and a one-op smoke test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import UnknownEngineError, load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.shapes import graph_shapes


def scalar_ops() -> tuple[str, ...]:
    """The registry's scalar ops (a scalar campaign draws from these)."""
    return tuple(SCALAR_OPS)


def tensor_ops() -> tuple[str, ...]:
    """The registry's tensor ops."""
    return tuple(TENSOR_OPS)


def load_adapter(name: str) -> EngineAdapter:
    """The engine adapter for `name`; CampaignError when it is unknown or its constructor raises."""
    try:
        return load_engine(name)
    except UnknownEngineError as exc:
        raise CampaignError(str(exc)) from None
    except Exception as exc:
        raise CampaignError(
            f"engine {name!r}: loading its adapter raised {type(exc).__name__}: {exc}"
        ) from exc


def campaign_ops(settings: Settings, adapter: EngineAdapter) -> tuple[str, ...]:
    """The ops a campaign draws from, in registry order: --ops, or all the engine supports."""
    pool = tensor_ops() if settings.tensor else scalar_ops()
    if settings.tensor and not pool:
        raise CampaignError("the registry has no tensor ops yet: tensor campaigns cannot run")
    if settings.ops is None:
        ops = tuple(op for op in pool if op in adapter.ops)
        if not ops:
            kind = "tensor" if settings.tensor else "scalar"
            raise CampaignError(f"engine {settings.engine!r} supports none of the registry's {kind} ops")
        return ops
    unknown = [op for op in settings.ops if op not in REGISTRY]
    if unknown:
        raise CampaignError(f"unknown op(s) {unknown}; the registry has {sorted(REGISTRY)}")
    wrong_kind = [op for op in settings.ops if op not in pool]
    if wrong_kind:
        kind = "tensor" if settings.tensor else "scalar"
        other = "drop --tensor" if settings.tensor else "add --tensor"
        raise CampaignError(f"op(s) {wrong_kind} are not {kind} ops ({other}?); {kind} ops: {list(pool)}")
    unsupported = [op for op in settings.ops if op not in adapter.ops]
    if unsupported:
        supported = sorted(adapter.ops)
        raise CampaignError(
            f"engine {settings.engine!r} does not support op(s) {unsupported}; it supports {supported}"
        )
    return tuple(dict.fromkeys(settings.ops))


def validate(settings: Settings) -> tuple[str, ...]:
    """Check engine, ops and graph kind before any work; return the ops. Raises CampaignError.

    The adapter must also evaluate a one-op graph of each op: an adapter that raises there is
    broken (bad input), not an engine finding.
    """
    adapter = load_adapter(settings.engine)
    if settings.tensor and not getattr(adapter, "tensor", False):
        raise CampaignError(
            f"engine {settings.engine!r} evaluates scalar graphs only; drop --tensor "
            "(minigrad's tensor engine is --engine minigrad-tensor)"
        )
    if not settings.tensor and getattr(adapter, "tensor", False):
        raise CampaignError(f"engine {settings.engine!r} evaluates tensor graphs only: add --tensor")
    if settings.dtype != "float64" and not (settings.tensor and settings.dtype in adapter.dtypes):
        raise CampaignError(
            f"--dtype {settings.dtype} needs --tensor and an engine that computes in it; engine "
            f"{settings.engine!r} computes in {list(adapter.dtypes)}"
        )
    ops = campaign_ops(settings, adapter)
    _smoke_test(settings, adapter, ops)
    return ops


def _smoke_test(settings: Settings, adapter: EngineAdapter, ops: Sequence[str]) -> None:
    missing = adapter.missing_methods()
    if missing:
        raise CampaignError(
            f"engine {settings.engine!r}: adapter {type(adapter).__name__} does not implement "
            f"{', '.join(missing)} (see docs/adapters.md)"
        )
    one_op = Sizes(inputs=(2, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)
    for op in ops:
        rng = np.random.default_rng([settings.seed, 0])
        graph = random_graph(rng, ops=[op], tensor=settings.tensor, sizes=one_op)
        if not graph.nodes:
            continue
        values = graph.input_values(0)
        shapes = graph_shapes(graph)
        cotangent = [np.ones(shapes[o]) if shapes[o] else 1.0 for o in graph.outputs]
        try:  # the protocol the check itself uses
            forward, grads = next(adapter.run_points(graph, [values], [cotangent]))
            [np.asarray(v, dtype=np.float64) for v in [*forward, *grads]]
        except Exception as exc:
            node = graph.nodes[0]
            names = node.operands([graph.name_of(k) for k in range(graph.n_inputs)], lambda c: repr(c.value))
            code = REGISTRY[op].snippet(names, node.attr, "minigrad")
            at = ", ".join(f"{inp.name}={v!r}" for inp, v in zip(graph.inputs, values))
            raise CampaignError(
                f"engine {settings.engine!r}: its adapter raised {type(exc).__name__}: {exc} "
                f"evaluating `{code}` at {at}; fix the adapter (or leave {op!r} out of its `ops`)"
            ) from exc
