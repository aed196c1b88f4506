"""Plain-number evaluation (numpy float64) and gradients by central differences.

The whole difference stencil is one numpy pass: every input is an (M, K) array whose rows are
the unperturbed point and the point moved by +-h/4, +-h/2, +-h and +-2h along each input, for all K batch
points at once. Richardson extrapolation of each pair of steps cancels the h^2 error term; the gap between the
coarse and the fine extrapolation is the error estimate used in the comparison tolerance. A point
whose stencil crosses a kink (an op's `branch` changes) or leaves a domain is marked invalid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes, pad

EPS = np.finfo(np.float64).eps
# relative step: h = STEP * max(1, |x|); with Richardson the truncation error is O(h^4)
STEP = 1e-5


@dataclass
class NumericResult:
    """Outputs (n_out, K); cotangent-weighted gradients (n_in, K) with error estimates; valid (K,)."""

    forward: np.ndarray
    grads: np.ndarray
    error: np.ndarray
    valid: np.ndarray


def evaluate(graph: Graph, inputs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """All node values for inputs of any common shape (..., K); also a (K,) mask of valid points.

    A point is invalid when some row of it is non-finite or an op's branch differs between rows.
    """
    nodes = [np.asarray(x, dtype=np.float64) for x in inputs]
    k = nodes[0].shape[-1]
    valid = np.ones(k, dtype=bool)
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            spec = REGISTRY[node.op]
            args = node.operands(nodes)
            attr = node.attr
            out = spec.numpy(args, attr)
            if spec.branch is not None:
                b = spec.branch(args, attr)
                if b.ndim > 1:
                    valid &= (b == b[:1]).all(axis=tuple(range(b.ndim - 1)))
            nodes.append(out)
    for o in graph.outputs:
        out = nodes[o]
        valid &= np.isfinite(out).all(axis=tuple(range(out.ndim - 1))) if out.ndim > 1 else np.isfinite(out)
    return nodes, valid


def central_differences(graph: Graph, points: Sequence[np.ndarray], cotangent: np.ndarray) -> NumericResult:
    """Gradients of sum_j cotangent_j * output_j w.r.t. each input at each of K points.

    points[i]: input i's (K,) values; cotangent: (n_out, K).
    """
    n = len(points)
    x = np.stack([np.asarray(p, dtype=np.float64) for p in points])  # (n, K)
    h = STEP * np.maximum(1.0, np.abs(x))  # (n, K)
    offsets = np.array([1.0, -1.0, 2.0, -2.0, 0.25, -0.25, 0.5, -0.5])
    r = len(offsets)
    # rows: 0 = base; then for each input i and offset o: x + o * h_i e_i
    m = 1 + r * n
    stencil = np.broadcast_to(x, (m, n, x.shape[1])).copy()
    for i in range(n):
        stencil[1 + r * i : 1 + r * (i + 1), i, :] += offsets[:, None] * h[i]
    nodes, valid = evaluate(graph, [stencil[:, i, :] for i in range(n)])
    outs = np.stack([nodes[o] for o in graph.outputs])  # (n_out, m, K)
    f = np.einsum("jmk,jk->mk", outs, cotangent)  # weighted sum, (m, K)
    row = [f[1 + np.arange(n) * r + j] for j in range(r)]  # each (n, K)
    d_h = (row[0] - row[1]) / (2 * h)
    d_2h = (row[2] - row[3]) / (4 * h)
    d_q = (row[4] - row[5]) / (0.5 * h)
    d_half = (row[6] - row[7]) / h
    coarse = (4 * d_h - d_2h) / 3  # Richardson: the h^2 terms cancel
    fine = (4 * d_q - d_half) / 3
    # the coarse estimate's error bounds the fine one's truncation; add the fine stencil's rounding
    scale = np.abs(outs[:, 0, :]).max(axis=0) * np.abs(cotangent).max(axis=0) + np.abs(f[0])
    error = np.abs(coarse - fine) + 4 * EPS * scale / h
    return NumericResult(outs[:, 0, :], fine, error, valid)


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
    n = x.shape[1]
    h = STEP * np.maximum(1.0, np.abs(x))
    offsets = np.array([1.0, -1.0, 2.0, -2.0, 0.25, -0.25, 0.5, -0.5])
    r = len(offsets)
    m = 1 + r * n
    stencil = np.broadcast_to(x, (m, k, n)).copy()
    for e in range(n):
        stencil[1 + r * e : 1 + r * (e + 1), :, e] += offsets[:, None] * h[:, e]
    flat = stencil.reshape(m * k, n)
    inputs, start = [], 0
    for inp in graph.inputs:
        size = int(np.prod(inp.shape))
        inputs.append(pad(flat[:, start : start + size].reshape(m * k, *inp.shape), inp.shape))
        start += size
    nodes = list(inputs)
    valid = np.ones(k, dtype=bool)
    with np.errstate(all="ignore"):
        for node, shape in zip(graph.nodes, shapes[graph.n_inputs :]):
            spec = REGISTRY[node.op]
            args = node.operands(nodes)
            if spec.branch is not None:
                b = np.asarray(spec.branch(args, node.attr)).reshape(m, k, -1)
                valid &= (b == b[:1]).all(axis=(0, 2))
            nodes.append(pad(spec.numpy(args, node.attr), shape))
    outs = [nodes[o].reshape(m, k, -1) for o in graph.outputs]  # (m, K, size_j)
    for out in outs:
        valid &= np.isfinite(out).all(axis=(0, 2))
    cots = [np.asarray(c, dtype=np.float64).reshape(k, -1) for c in cotangent]
    f = sum(np.einsum("mke,ke->mk", out, c) for out, c in zip(outs, cots))  # (m, K)
    row = [f[1 + np.arange(n) * r + j] for j in range(r)]  # each (N, K)
    hT = h.T
    d_h = (row[0] - row[1]) / (2 * hT)
    d_2h = (row[2] - row[3]) / (4 * hT)
    d_q = (row[4] - row[5]) / (0.5 * hT)
    d_half = (row[6] - row[7]) / hT
    coarse = (4 * d_h - d_2h) / 3
    fine = (4 * d_q - d_half) / 3
    scale = sum(np.abs(out[0]).sum(axis=1) * np.abs(c).max(axis=1) for out, c in zip(outs, cots)) + np.abs(
        f[0]
    )
    error = np.abs(coarse - fine) + 4 * EPS * scale / hT
    forward = np.concatenate([out[0].T for out in outs], axis=0)  # (F, K)
    return NumericResult(forward, fine, error, valid)
