"""How much rounding a gradient or a Hessian-vector product carries: its spread over re-rounded
evaluations.

An entry of a gradient or of a Hessian-vector product can be a small difference of large terms
(a shift by 1e6 * x that log_softmax cancels, differentiated once or twice): then any float64
evaluation, the engine's or torch's, carries a rounding error that is a large part of the
entry, and the two differ by percents, or in sign, while both are right to rounding. A fixed
tolerance cannot know that; this measures it. Torch evaluates the entry again `SAMPLES` times
at the same point with the cotangent and the direction rescaled by factors in [0.5, 2], undone
afterwards: the same entry, with every product and sum of the backward passes rounded
differently. The spread of the results is the rounding level of that entry. An engine whose
difference from torch stays within `SPREAD_SAFETY` times it is right to rounding; a wrong
derivative differs by the size of the terms, far beyond it. The inputs are not moved: a move of
an ulp can cross a kink, where torch's derivative jumps, and the jump would then excuse an
engine's other convention there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.parity import torch_reference

SAMPLES = 8
# The engine's rounding may exceed torch's (another order of the same sums): this much leeway.
SPREAD_SAFETY = 10.0


def rounding_spread(
    graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any]
) -> np.ndarray:
    """Per entry of the flattened H·v at one point: the largest change of torch's product over
    `SAMPLES` re-rounded evaluations (the plain one evaluated in the same batch as the first)."""
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
    copies = [np.repeat(np.asarray(v, dtype=np.float64)[None], SAMPLES + 1, axis=0) for v in values]
    dirs: Any = None
    if graph.is_tensor:
        cots: Any = [_scaled(c, cot_scale) for c in cotangent]
        if direction is not None:
            dirs = [_scaled(d, dir_scale) for d in direction]
        result = torch_reference.run_torch_tensor_batch(graph, copies, cots, dirs)
    else:
        cots = np.stack([_scaled(c, cot_scale) for c in cotangent])
        if direction is not None:
            dirs = np.stack([_scaled(d, dir_scale) for d in direction])
        result = torch_reference.run_torch_batch(graph, copies, cots, dirs)
    hvp = None if result.hvp is None else _spread(result.hvp / (cot_scale * dir_scale))
    return _spread(result.grads / cot_scale), hvp


def _spread(samples: np.ndarray) -> np.ndarray:
    """Per row: the largest distance of a sample from the first (the unscaled evaluation)."""
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(samples - samples[:, :1]), axis=1)


def _scaled(x: Any, scale: np.ndarray) -> np.ndarray:
    """Copies of `x` (batch first), copy j times scale[j]."""
    x = np.asarray(x, dtype=np.float64)
    return x[None] * scale.reshape(-1, *([1] * x.ndim))


def rounding_only(engine: np.ndarray, torch: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Per entry: whether the engine differs from torch by no more than rounding (finite entries)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(spread) & (np.abs(engine - torch) <= SPREAD_SAFETY * spread)
