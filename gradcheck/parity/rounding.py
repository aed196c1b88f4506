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

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.program import Program
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import torch_reference

SAMPLES = 8
# The engine's rounding may exceed torch's (another order of the same sums): this much leeway.
SPREAD_SAFETY = 10.0
EPS = float(np.finfo(np.float64).eps)


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


def forward_rounding(graph: Graph, values: Sequence[Any]) -> np.ndarray:
    """Per flattened output entry at one point: how far float64 rounding of the values the graph
    computes can move it, to first order (an absolute floor for the forward comparison).

    Each value the graph computes or reads (inputs included: they are the terms of the first ops)
    may carry a relative rounding of EPS; its effect on an output is that times the output's
    derivative with respect to it, so the bound is EPS * sum over values n of |d out / d n| * |n|.
    An output that cancels exactly (`log(x / x)`) is then zero up to the size of the terms that
    cancelled: an engine's -1.1e-16 there is rounding, its 1e-12 is not.
    """
    _, nodes, outputs = _torch_nodes(graph, values)
    return _sensitivity([o.reshape(-1)[e] for o in outputs for e in range(o.numel())], nodes)


def gradient_rounding(
    graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any] | None = None
) -> np.ndarray:
    """`forward_rounding` for the cotangent-weighted gradient (with `direction`: for the
    Hessian-vector product), per flattened input entry: how far the rounding of the forward
    values moves it (a gradient proportional to a cancelled value, `log(x / x) / y ** 3`, is
    rounding amplified). `gradient_spread` and `rounding_spread` measure the rounding of the
    backward passes themselves."""
    leaves, nodes, outputs = _torch_nodes(graph, values)
    loss = sum((o * _like(c, o)).sum() for o, c in zip(outputs, cotangent))
    grads = torch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    if direction is not None:
        pairs = [(g, d) for g, d in zip(grads, direction) if g is not None and g.requires_grad]
        terms = [(g * _like(d, g)).sum() for g, d in pairs]
        grads = (None,) * len(leaves)
        if terms:
            grads = torch.autograd.grad(sum(terms), leaves, create_graph=True, allow_unused=True)
    entries = [
        None if g is None else g.reshape(-1)[e] for g, leaf in zip(grads, leaves) for e in range(leaf.numel())
    ]
    return _sensitivity(entries, nodes)


def _like(x: Any, template: Any) -> Any:
    """A float64 array (or number) as a torch tensor of `template`'s shape."""
    return torch.as_tensor(np.asarray(x, dtype=np.float64)).reshape(template.shape)


def _sensitivity(entries: Sequence[Any], nodes: Sequence[Any]) -> np.ndarray:
    """EPS * sum over `nodes` of |d entry / d node| * |node|, per entry (torch scalars; None or
    one that depends on no node: 0)."""
    live = [n for n in nodes if n.requires_grad]
    bound = np.zeros(len(entries))
    for j, entry in enumerate(entries):
        if entry is None or not entry.requires_grad:
            continue
        adjoints = torch.autograd.grad(entry, live, retain_graph=True, allow_unused=True)
        terms = [(g.abs() * n.detach().abs()).sum() for g, n in zip(adjoints, live) if g is not None]
        bound[j] = float(sum(terms))
    return EPS * bound


def _torch_nodes(graph: Graph, values: Sequence[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """Torch's leaves for one point's `values` (a batch of one), every value of `graph` computed
    from them, and its outputs."""
    leaves = [torch.tensor(np.asarray(v, dtype=np.float64)[None], requires_grad=True) for v in values]
    if graph.is_tensor:
        return leaves, *torch_reference.tensor_nodes(graph, leaves)
    nodes = Program(graph, lambda op: REGISTRY[op].torch_rule).run(leaves, torch_reference.torch_constant)
    return leaves, nodes, [nodes[o] for o in graph.outputs]
