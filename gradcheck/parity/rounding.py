"""How much rounding a gradient or a Hessian-vector product carries: its spread over re-rounded
evaluations.

An entry of a gradient or of a Hessian-vector product can be a small difference of large terms
(a shift by 1e6 * x that log_softmax cancels, differentiated once or twice): then any float64
evaluation, the engine's or torch's, carries a rounding error that is a large part of the
entry, and the two differ by percents, or in sign, while both are right to rounding. A fixed
tolerance cannot know that; this measures it. Torch evaluates the entry again at `SAMPLES`
copies of the point, each with its inputs moved by at most `ULPS` units in the last place (an
error any float64 evaluation may make in its inputs) and its cotangent and direction rescaled
by factors in [0.5, 2] (undone afterwards: the same entry, with every product and sum inside
rounded differently). Where the true value barely changes, the rounding does, and the spread of
the results is the rounding level of that entry. An engine whose difference from torch stays
within `SPREAD_SAFETY` times it is right to rounding; a wrong derivative differs by the size of
the terms, far beyond it. (Moving the inputs alone is not enough: the rounding of a cancelling
sum often does not change under a shift of a few ulps.)
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
    spread = _spreads(graph, values, cotangent, direction)[1]
    if spread is None:  # pragma: no cover - a direction always asks for the product
        raise RuntimeError("rounding_spread: torch returned no Hessian-vector product")
    return spread


def gradient_spread(graph: Graph, values: Sequence[Any], cotangent: Sequence[Any]) -> np.ndarray:
    """`rounding_spread` for the cotangent-weighted gradient at one point: one entry per
    flattened input entry."""
    return _spreads(graph, values, cotangent, None)[0]


def _spreads(
    graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The spreads of torch's gradient and (with a direction) H·v over the re-rounded samples."""
    rng = np.random.default_rng(0)
    # H·(b v) weighted by a c is a b c times H·v, and the gradient weighted by c is c times it:
    # the same entries, rounded differently throughout
    cot_scale = np.concatenate([[1.0], rng.uniform(0.5, 2.0, SAMPLES)])
    dir_scale = np.concatenate([[1.0], rng.uniform(0.5, 2.0, SAMPLES)])
    moved = [_moved(np.asarray(v, dtype=np.float64), rng) for v in values]
    dirs: Any = None
    if graph.is_tensor:
        cots: Any = [_scaled(c, cot_scale) for c in cotangent]
        if direction is not None:
            dirs = [_scaled(d, dir_scale) for d in direction]
        result = torch_reference.run_torch_tensor_batch(graph, moved, cots, dirs)
    else:
        cots = np.stack([_scaled(c, cot_scale) for c in cotangent])
        if direction is not None:
            dirs = np.stack([_scaled(d, dir_scale) for d in direction])
        result = torch_reference.run_torch_batch(graph, moved, cots, dirs)
    hvp = None if result.hvp is None else _spread(result.hvp / (cot_scale * dir_scale))
    return _spread(result.grads / cot_scale), hvp


def _spread(samples: np.ndarray) -> np.ndarray:
    """Per row: the largest distance of a sample from the first (the point itself)."""
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(samples - samples[:, :1]), axis=1)


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


def rounding_only(engine: np.ndarray, torch: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Per entry: whether the engine differs from torch by no more than rounding (finite entries)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(spread) & (np.abs(engine - torch) <= SPREAD_SAFETY * spread)
