"""PyTorch (float64) as the reference: one pass evaluates a graph at all K batch points at once.

Every scalar input becomes a length-K float64 vector; scalar ops are elementwise, so each point's
outputs and gradients are independent, and torch's per-op overhead is paid once for K points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from gradcheck.graph import Graph
from gradcheck.registry import REGISTRY


@dataclass
class TorchResult:
    """Outputs (n_out, K), input gradients (n_in, K) and, when asked, Hessian-direction products."""

    forward: np.ndarray
    grads: np.ndarray
    hvp: np.ndarray | None = None


def run_torch_batch(
    graph: Graph,
    points: Sequence[np.ndarray],
    cotangent: np.ndarray,
    direction: np.ndarray | None = None,
) -> TorchResult:
    """Evaluate a scalar graph at K points: points[i] is input i's (K,) values, cotangent (n_out, K).

    With `direction` (n_in, K) also returns the Hessian of the cotangent-weighted outputs times it.
    """
    leaves = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in points]
    nodes: list[Any] = list(leaves)
    for node in graph.nodes:
        nodes.append(REGISTRY[node.op].apply_torch([nodes[a] for a in node.args], node.attr))
    outputs = [nodes[o] for o in graph.outputs]
    cot = [torch.from_numpy(np.ascontiguousarray(c)) for c in cotangent]
    want_hvp = direction is not None
    grads = torch.autograd.grad(outputs, leaves, cot, allow_unused=True, create_graph=want_hvp)
    k = len(points[0])
    forward = np.stack([o.detach().numpy() for o in outputs])
    g = np.stack([np.zeros(k) if x is None else x.detach().numpy(force=True) for x in grads])
    hvp = None
    if want_hvp:
        assert direction is not None
        terms = [
            (x * torch.from_numpy(u)).sum()
            for x, u in zip(grads, direction)
            if x is not None and x.requires_grad
        ]
        if terms:
            second = torch.autograd.grad(sum(terms), leaves, allow_unused=True)
            hvp = np.stack([np.zeros(k) if x is None else x.numpy(force=True) for x in second])
        else:
            hvp = np.zeros((len(points), k))
    return TorchResult(forward, g, hvp)
