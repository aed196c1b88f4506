"""How much rounding a Hessian-vector product carries: its spread over re-rounded evaluations.

An entry of a Hessian-vector product can be a small difference of large terms (a shift that
log_softmax cancels, times 1e4, differentiated twice): then any float64 evaluation, the
engine's or torch's, carries a rounding error that is a large part of the entry, and the two
differ by percents, or in sign, while both are right to rounding. A fixed tolerance cannot know
that; this measures it. Torch evaluates the product again at `SAMPLES` copies of the point,
each with its inputs moved by at most `ULPS` units in the last place (an error any float64
evaluation may make in its inputs) and its cotangent and direction rescaled by factors in
[0.5, 2] (undone afterwards: the same product, with every product and sum inside rounded
differently). Where the true product barely changes, the rounding does, and the spread of the
results is the rounding level of that entry. An engine whose difference from torch stays
within `SPREAD_SAFETY` times it is right to rounding; a wrong second derivative differs by the
size of the terms, far beyond it. (Moving the inputs alone is not enough: the rounding of a
cancelling sum often does not change under a shift of a few ulps.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.parity import torch_reference

SAMPLES = 8
ULPS = 4
# The engine's rounding may exceed torch's (another order of the same sums): this much leeway.
SPREAD_SAFETY = 10.0


def rounding_spread(
    graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any]
) -> np.ndarray:
    """Per entry of the flattened H·v at one point: the largest change of torch's product over
    `SAMPLES` evaluations with every input entry moved by up to `ULPS` ulps (the point itself
    evaluated in the same batch as the first sample)."""
    rng = np.random.default_rng(0)
    # H·(b v) weighted by a c is a b c times H·v: the same product, rounded differently throughout
    cot_scale = np.concatenate([[1.0], rng.uniform(0.5, 2.0, SAMPLES)])
    dir_scale = np.concatenate([[1.0], rng.uniform(0.5, 2.0, SAMPLES)])
    moved = [_moved(np.asarray(v, dtype=np.float64), rng) for v in values]
    if graph.is_tensor:
        cots = [_scaled(c, cot_scale) for c in cotangent]
        dirs = [_scaled(d, dir_scale) for d in direction]
        hvp = torch_reference.run_torch_tensor_batch(graph, moved, cots, dirs).hvp
    else:
        cots = np.stack([_scaled(c, cot_scale) for c in cotangent])
        dirs = np.stack([_scaled(d, dir_scale) for d in direction])
        hvp = torch_reference.run_torch_batch(graph, moved, cots, dirs).hvp
    if hvp is None:  # pragma: no cover - a direction always asks for the product
        raise RuntimeError("rounding_spread: torch returned no Hessian-vector product")
    hvp = hvp / (cot_scale * dir_scale)
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(hvp - hvp[:, :1]), axis=1)


def _moved(value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`SAMPLES` + 1 copies of an input (batch first), each entry but the first copy's moved by
    up to `ULPS` ulps."""
    ulps = rng.integers(-ULPS, ULPS + 1, size=(SAMPLES + 1, *value.shape))
    ulps[0] = 0
    return value[None] * (1.0 + ulps * np.finfo(np.float64).eps)


def _scaled(x: Any, scale: np.ndarray) -> np.ndarray:
    """Copies of `x` (batch first), copy j times scale[j]."""
    x = np.asarray(x, dtype=np.float64)
    return x[None] * scale.reshape(-1, *([1] * x.ndim))


def rounding_only(hvp_e: np.ndarray, hvp_t: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Per entry: whether the engine differs from torch by no more than rounding (finite entries)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(spread) & (np.abs(hvp_e - hvp_t) <= SPREAD_SAFETY * spread)
