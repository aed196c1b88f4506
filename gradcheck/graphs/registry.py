"""The op registry: one `OpSpec` per op holds everything the harness knows about it.

Generation, evaluation, the numeric and torch references, snippets, the tolerance policy, the
mpmath oracle and the self-check's broken engines all read `REGISTRY`; adding an op is one
`OpSpec(...)` in `scalar_ops.py`, `tensor_ops.py`, `layout_ops.py` or `nn_ops.py` (or `register` at run time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.layout_ops import LAYOUT_SPECS
from gradcheck.graphs.nn_ops import NN_SPECS
from gradcheck.graphs.opspec import (
    CANCELLATION,
    KINK_MARGIN,
    MAX_MAGNITUDE,
    POLE_MARGIN,
    Chooser,
    Mask,
    OpSpec,
    points_axis,
)
from gradcheck.graphs.scalar_ops import SCALAR_SPECS
from gradcheck.graphs.tensor_ops import TENSOR_SPECS

REGISTRY: dict[str, OpSpec] = {
    spec.name: spec for spec in SCALAR_SPECS + TENSOR_SPECS + LAYOUT_SPECS + NN_SPECS
}
SCALAR_OPS: tuple[str, ...] = tuple(spec.name for spec in SCALAR_SPECS)
TENSOR_OPS: tuple[str, ...] = SCALAR_OPS + tuple(spec.name for spec in TENSOR_SPECS + LAYOUT_SPECS + NN_SPECS)


def register(spec: OpSpec) -> OpSpec:
    """Add an op to the registry (e.g. a custom op of your engine); returns it."""
    if spec.name in REGISTRY:
        raise ValueError(f"register: op {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
    return spec


def normalised(name: str) -> str:
    """An op name compared loosely: lower case, no underscores ("log_softmax" ~ "LogSoftmax")."""
    return name.lower().replace("_", "")


def find(name: str) -> OpSpec | None:
    """The registry entry named `name` (compared by `normalised`), or None."""
    spec = REGISTRY.get(name)
    if spec is not None:
        return spec
    key = normalised(name)
    return next((s for s in REGISTRY.values() if normalised(s.name) == key), None)


def in_domain(spec: OpSpec, args: Sequence[np.ndarray], attrs: dict[str, Any], out: np.ndarray) -> Mask:
    """Per batch point: arguments inside the domain and away from kinks, result finite and sane."""
    with np.errstate(all="ignore"):
        ok = np.isfinite(out) & (np.abs(out) <= MAX_MAGNITUDE)
        if spec.domain is not None:
            ok = ok & spec.domain(args, attrs)
    return points_axis(ok, out.ndim <= 1)


def resolve_ops(ops: Sequence[str] | None, allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    """Validate op names against the registry (and an engine's supported set); None means all."""
    if ops is None:
        return tuple(allowed) if allowed is not None else SCALAR_OPS
    unknown = [op for op in ops if op not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown op(s) {unknown}; the registry has {sorted(REGISTRY)}")
    pool = tuple(allowed) if allowed is not None else tuple(REGISTRY)
    unsupported = [op for op in ops if op not in pool]
    if unsupported:
        raise ValueError(f"op(s) {unsupported} not supported here; supported: {list(pool)}")
    return tuple(ops)


__all__ = [
    "CANCELLATION",
    "KINK_MARGIN",
    "MAX_MAGNITUDE",
    "POLE_MARGIN",
    "REGISTRY",
    "SCALAR_OPS",
    "TENSOR_OPS",
    "Chooser",
    "OpSpec",
    "find",
    "in_domain",
    "normalised",
    "register",
    "resolve_ops",
]
