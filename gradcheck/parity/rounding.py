"""How much rounding a Hessian-vector product carries: its spread over re-rounded evaluations.

The rounding bound (`parity.bound`) models the second backward pass of a Hessian-vector product
by the sizes of its contributions, not of the terms each sums: an entry that is a difference of
large terms there (a shift by 1e4 * x that log_softmax cancels, differentiated twice; a row of
a product with a direction that cancels) carries more rounding than it says. Where an entry
exceeds the bound, its rounding is measured instead: torch evaluates the product again
`SAMPLES` times at the same point with the cotangent and the direction rescaled by factors in
[0.5, 2], undone afterwards: the same entry, with every product and sum of the backward passes
rounded differently. The largest change of the results stands in for the entry's rounding when
it is larger. The inputs are not moved: a move of an ulp can cross a kink, where torch's
derivative jumps, and the jump would then excuse an engine's other convention there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.parity import torch_reference
from gradcheck.parity.answers import one_point
from gradcheck.parity.bound import RoundingBounds
from gradcheck.parity.errors import BOUND_SAFETY, HVP_AGREEING_ULPS, HVP_SAFETY
from gradcheck.parity.exact_errors import Precision

SAMPLES = 8


def rounding_spread(
    graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any]
) -> np.ndarray:
    """Per entry of the flattened H·v at one point: the largest change of torch's product over
    `SAMPLES` re-rounded evaluations (the plain one evaluated in the same batch as the first)."""
    rng = np.random.default_rng(0)
    # H·(b v) weighted by a c is a b c times H·v: the same entries, rounded differently throughout
    cot_scale = np.concatenate([[1.0], rng.uniform(0.5, 2.0, SAMPLES)])
    dir_scale = np.concatenate([[1.0], rng.uniform(0.5, 2.0, SAMPLES)])
    copies = [np.repeat(np.asarray(v, dtype=np.float64)[None], SAMPLES + 1, axis=0) for v in values]
    if graph.is_tensor:
        cots: Any = [_scaled(c, cot_scale) for c in cotangent]
        dirs: Any = [_scaled(d, dir_scale) for d in direction]
        result = torch_reference.run_torch_tensor_batch(graph, copies, cots, dirs)
    else:
        cots = np.stack([_scaled(c, cot_scale) for c in cotangent])
        dirs = np.stack([_scaled(d, dir_scale) for d in direction])
        result = torch_reference.run_torch_batch(graph, copies, cots, dirs)
    if result.hvp is None:  # pragma: no cover - a direction always asks for the product
        raise RuntimeError("rounding_spread: torch returned no Hessian-vector product")
    samples = result.hvp / (cot_scale * dir_scale)
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(samples - samples[:, :1]), axis=1)


def _scaled(x: Any, scale: np.ndarray) -> np.ndarray:
    """Copies of `x` (batch first), copy j times scale[j]."""
    x = np.asarray(x, dtype=np.float64)
    return x[None] * scale.reshape(-1, *([1] * x.ndim))


def hvp_bound(
    graph: Graph,
    values: list[Any],
    cot: list[Any],
    direction: list[Any],
    exact: np.ndarray,
    precision: Precision,
    errors: np.ndarray | None = None,
) -> np.ndarray:
    """Per H·v entry at one point, the bound BOUND_SAFETY times of which is allowed: HVP_SAFETY
    times torch's H·v rounding bound, plus the underflow room, never less than HVP_AGREEING_ULPS
    of the exact value; and, in float64, where `errors` still exceed that (the terms of the second
    backward pass cancel) or where no errors are given (a repro), the spread of torch's re-rounded
    evaluations where larger (`rounding.rounding_spread`)."""
    ulps = HVP_AGREEING_ULPS * precision.unit * np.abs(exact)
    direction_batch = [np.asarray(d, dtype=np.float64)[None] for d in direction]
    bounds = RoundingBounds(graph, *one_point(graph, values, cot), direction=direction_batch, full=True)
    bound = HVP_SAFETY * np.nan_to_num(bounds.full(precision.float32).grads[:, 0], nan=np.inf)
    bound = np.maximum(bound + precision.floor, ulps / BOUND_SAFETY)
    outside = errors is None or bool((~(errors <= BOUND_SAFETY * bound)).any())
    if outside and not precision.float32 and np.isfinite(exact).all():
        bound = np.fmax(bound, rounding_spread(graph, values, cot, direction))  # a nan spread: torch's nan
    return bound
