"""The numeric reference of the parity check: a graph evaluated in plain numbers (the registry's
numpy forward) and differentiated numerically, at K batch points at once.

The difference stencil (`checker.numerical.batch_stencil`) is one numpy pass: the unperturbed point
and the point moved by +-h/4, +-h/2, +-h and +-2h along each input. Richardson extrapolation of each
pair of steps cancels the h^2 error term; the gap between the coarse and the fine extrapolation is
the error estimate used in the comparison tolerance. A point whose stencil crosses a kink (an op's
`branch` changes) or leaves a domain is marked invalid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradcheck.checker.numerical import batch_extrapolate, batch_stencil
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes, pad

EPS = np.finfo(np.float64).eps


@dataclass
class NumericResult:
    """Outputs (n_out, K); cotangent-weighted gradients (n_in, K) with error estimates; valid (K,):
    points whose differences mean something; kinked (K,): points whose stencil crosses a kink
    (an op's branch changes, at a tie say) with finite outputs, where only torch can judge."""

    forward: np.ndarray
    grads: np.ndarray
    error: np.ndarray
    valid: np.ndarray
    kinked: np.ndarray | None = None


def evaluate(graph: Graph, inputs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """All node values for inputs of any common shape (..., K); also (K,) masks of the points where
    every row is finite, and of those where no op's branch differs between rows (smooth)."""
    nodes = [np.asarray(x, dtype=np.float64) for x in inputs]
    k = nodes[0].shape[-1]
    smooth = np.ones(k, dtype=bool)
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            spec = REGISTRY[node.op]
            args = node.operands(nodes) if node.consts else [nodes[i] for i in node.args]
            attr = dict(node.attrs) if node.attrs else {}
            out = spec.numpy(args, attr)
            if spec.branch is not None:
                b = spec.branch(args, attr)
                if b.ndim > 1:
                    smooth &= np.logical_and.reduce(b == b[:1], axis=tuple(range(b.ndim - 1)))
            nodes.append(out)
    finite = np.ones(k, dtype=bool)
    for o in graph.outputs:
        out = nodes[o]
        ok = np.isfinite(out)
        finite &= np.logical_and.reduce(ok, axis=tuple(range(out.ndim - 1))) if out.ndim > 1 else ok
    return nodes, finite, smooth


def central_differences(graph: Graph, points: Sequence[np.ndarray], cotangent: np.ndarray) -> NumericResult:
    """Gradients of sum_j cotangent_j * output_j w.r.t. each input at each of K points.

    points[i]: input i's (K,) values; cotangent: (n_out, K).
    """
    x = np.stack([np.asarray(p, dtype=np.float64) for p in points])  # (n, K)
    stencil, h = batch_stencil(x)
    nodes, finite, smooth = evaluate(graph, [stencil[:, i, :] for i in range(len(points))])
    outs = np.stack([nodes[o] for o in graph.outputs])  # (n_out, m, K)
    f = np.einsum("jmk,jk->mk", outs, cotangent)  # weighted sum, (m, K)
    coarse, fine = batch_extrapolate(f, h)
    # the coarse estimate's error bounds the fine one's truncation; add the fine stencil's rounding
    scale = np.abs(outs[:, 0, :]).max(axis=0) * np.abs(cotangent).max(axis=0) + np.abs(f[0])
    error = np.abs(coarse - fine) + 4 * EPS * scale / h
    return NumericResult(outs[:, 0, :], fine, error, finite & smooth, finite & ~smooth)


def central_differences_tensor(
    graph: Graph, points: Sequence[np.ndarray], cotangent: Sequence[np.ndarray]
) -> NumericResult:
    """`central_differences` for tensor graphs: every input element is a coordinate.

    points[i]: input i's values, shape (K, *shape_i); cotangent[j]: (K, *shape of output j).
    Returns forward (sum of output sizes, K) and grads/error (sum of input sizes, K), flattened
    in input order, C order within each input.
    """
    shapes = graph_shapes(graph)
    k = points[0].shape[0]
    x = np.concatenate([np.asarray(p, dtype=np.float64).reshape(k, -1) for p in points], axis=1)  # (K, N)
    stencil, h = batch_stencil(x.T)  # (m, N, K), (N, K)
    m, n = stencil.shape[0], x.shape[1]
    flat = stencil.transpose(0, 2, 1).reshape(m * k, n)
    inputs, start = [], 0
    for inp in graph.inputs:
        size = int(np.prod(inp.shape))
        inputs.append(pad(flat[:, start : start + size].reshape(m * k, *inp.shape), inp.shape))
        start += size
    nodes = list(inputs)
    smooth = np.ones(k, dtype=bool)
    with np.errstate(all="ignore"):
        for node, shape in zip(graph.nodes, shapes[graph.n_inputs :]):
            spec = REGISTRY[node.op]
            args = node.operands(nodes)
            if spec.branch is not None:
                b = np.asarray(spec.branch(args, node.attr)).reshape(m, k, -1)
                smooth &= (b == b[:1]).all(axis=(0, 2))
            nodes.append(pad(spec.numpy(args, node.attr), shape))
    outs = [nodes[o].reshape(m, k, -1) for o in graph.outputs]  # (m, K, size_j)
    finite = np.ones(k, dtype=bool)
    for out in outs:
        finite &= np.isfinite(out).all(axis=(0, 2))
    cots = [np.asarray(c, dtype=np.float64).reshape(k, -1) for c in cotangent]
    f = sum(np.einsum("mke,ke->mk", out, c) for out, c in zip(outs, cots))  # (m, K)
    coarse, fine = batch_extrapolate(f, h)
    scale = sum(np.abs(out[0]).sum(axis=1) * np.abs(c).max(axis=1) for out, c in zip(outs, cots)) + np.abs(
        f[0]
    )
    error = np.abs(coarse - fine) + 4 * EPS * scale / h
    forward = np.concatenate([out[0].T for out in outs], axis=0)  # (F, K)
    return NumericResult(forward, fine, error, finite & smooth, finite & ~smooth)
