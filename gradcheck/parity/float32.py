"""The float32 check of a tensor graph: the engine in float32 judged by torch's own float32 accuracy.

The truth is torch in float64 at the same float32-rounded inputs and cotangents. Against it, the
engine's float32 error must stay within a small multiple of what float32 itself allows here: the
larger of torch's float32 error at that entry and the graph's conditioning (how far the float64
value or gradient moves when the inputs, and every node's adjoint, move by one float32 ulp: an
op's last-ulp rounding amplified by what follows, as sin amplifies exp's at exp(x) = 47, or a
sum of adjoints that cancels to 0 and is then scaled by 1000), plus a few ulps of the point's gradient
scale (or of the largest adjoint of any node, or of any one use's contribution to it before the
uses are summed, as div's two to y in y / y: the size of the terms a gradient sums). An engine
as accurate as torch passes; one that accumulates in float16 (~8,000 times
coarser) or loses a term fails. Each output's dtype must be torch's (type promotion: a Python
float or a 0-d float64 tensor operand keeps a float32 tensor float32).

Figures (GraphCheck fields) in float32 mode: `*_err_torch` are the engine's errors against the
float64 truth; `*_err_numeric` are torch's own float32 errors against it, for comparison.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import torch_reference
from gradcheck.parity.errors import SCALE_FLOOR, worst_error
from gradcheck.parity.problem import Problem, What, raised_problem
from gradcheck.parity.result import GraphCheck, record_failure
from gradcheck.parity.runs import TensorRun
from gradcheck.parity.torch_reference import torch

EPS32 = float(np.finfo(np.float32).eps)
# The engine may be this many times less accurate than torch's float32 (or the conditioning) ...
ACCURACY_FACTOR = 8.0
# ... plus this many float32 ulps of the point's gradient (or output) scale.
ULPS = 16.0
# Input perturbations (relative, in float32 ulps) that measure the graph's conditioning.
PROBES = 2


def check_float32(graph: Graph, adapter: EngineAdapter, result: GraphCheck, k: int, seed: int) -> GraphCheck:
    """Fill `result` with the float32 check of tensor graph `graph` at its first `k` points."""
    rng = np.random.default_rng(seed)
    run = TensorRun(graph, k, rng, hvp=False)
    batch = [round32(b) for b in run.batch]
    cot = [round32(c) for c in run.cot]
    t0 = time.perf_counter()
    truth = torch_reference.run_torch_tensor_batch(graph, batch, cot, adjoints=True)
    torch32 = torch_reference.run_torch_tensor_batch(graph, batch, cot, dtype="float32")
    moved, moved_forward = np.zeros_like(truth.grads), np.zeros_like(truth.forward)
    for _ in range(PROBES):
        factor = [1.0 + EPS32 * rng.choice([-1.0, 1.0], size=b.shape) for b in batch]
        probe = torch_reference.run_torch_tensor_batch(
            graph, [b * f for b, f in zip(batch, factor)], cot, jitter=(rng, EPS32)
        )
        with np.errstate(invalid="ignore"):
            moved = np.maximum(moved, np.abs(probe.grads - truth.grads))
            moved_forward = np.maximum(moved_forward, np.abs(probe.forward - truth.forward))
    t1 = time.perf_counter()
    result.timings = {"numeric": 0.0, "torch": t1 - t0}
    engine = adapter.in_dtype("float32")
    dtypes = torch_dtypes(graph, [b[0] for b in batch])
    for p in range(k):
        result.points_checked += 1
        values = [b[p].astype(np.float32) for b in batch]
        cotangent = [c[p].astype(np.float32) for c in cot]
        try:
            fwd, grads = engine.run(graph, values, cotangent)
        except Exception as e:  # an engine that raises is a finding, not a crash of the harness
            record_failure(result, graph, p, list(cotangent), raised_problem(Raised.of(e, engine)))
            break
        problems = dtype_problems(fwd, dtypes)
        problems += _compare(
            result,
            "forward",
            flat_vector(fwd),
            truth.forward[:, p],
            torch32.forward[:, p],
            moved_forward[:, p],
        )
        problems += _compare(
            result,
            "gradient",
            flat_vector(grads),
            truth.grads[:, p],
            torch32.grads[:, p],
            moved[:, p],
            run.labels,
            float(truth.adjoint_scale[p]) if truth.adjoint_scale is not None else 0.0,
        )
        if problems:
            record_failure(result, graph, p, [np.asarray(c, dtype=np.float64) for c in cotangent], *problems)
            break
    result.timings["engine"] = time.perf_counter() - t1
    return result


def torch_dtypes(graph: Graph, values: list[np.ndarray]) -> list[str] | None:
    """Each output's dtype in torch for float32 inputs of their own shapes (unbatched: whether an
    operand is 0-d decides type promotion, and a batch axis would hide that). None when torch
    refuses the graph at these shapes: a 0-d float32 value and a 0-d float64 constant make a
    float64 value, which expand or reshape can bring to a matmul with a float32 operand, and
    torch's matmul takes no mixed dtypes; torch then defines no dtype to match."""
    nodes: list[Any] = [torch.tensor(np.asarray(v, dtype=np.float32)) for v in values]
    with torch.no_grad():
        for node in graph.nodes:
            args = node.operands(nodes, torch_reference.torch_constant)
            try:
                nodes.append(REGISTRY[node.op].apply_torch(args, node.attr))
            except RuntimeError:
                return None
    return [str(nodes[o].dtype).removeprefix("torch.") for o in graph.outputs]


def round32(x: np.ndarray) -> np.ndarray:
    """`x` rounded to float32, held in float64 (what both float32 computations start from)."""
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def dtype_problems(forward: list[Any], torch_dtypes: list[str] | None) -> list[Problem]:
    """Each output whose dtype is not torch's, as a record (none when all are, or torch defines none)."""
    problems: list[Problem] = []
    if torch_dtypes is None:
        return problems
    for j, (out, want) in enumerate(zip(forward, torch_dtypes)):
        got = str(np.asarray(out).dtype)
        if got != want:
            problems.append(Problem(What.DTYPE, "forward", output=j, engine=got, reference=want))
    return problems


def _compare(
    result: GraphCheck,
    what: str,
    engine: np.ndarray,
    truth: np.ndarray,
    torch32: np.ndarray,
    moved: np.ndarray | None,
    labels: list[str] | None = None,
    adjoint: float = 0.0,
) -> list[Problem]:
    """The engine's float32 error against the float64 truth, allowed from torch's own and the
    conditioning; `adjoint` (the largest |d loss / d node|, or of one use of a node) widens the
    ulps term for gradients, since a gradient that is 0 in exact arithmetic is a sum of terms
    that large."""
    if truth.size == 0:
        return []
    scale = max(float(np.abs(truth).max()), adjoint, SCALE_FLOOR)
    err_e = np.abs(engine - truth)
    err_t = np.abs(torch32 - truth)
    budget = err_t if moved is None else np.maximum(err_t, moved)
    allowed = ACCURACY_FACTOR * budget + ULPS * EPS32 * max(scale, 1.0)
    if what == "forward":
        result.max_forward_err = max(result.max_forward_err, worst_error(err_e) / max(scale, 1.0))
    else:
        result.max_abs_err_torch = max(result.max_abs_err_torch, worst_error(err_e))
        result.max_rel_err_torch = max(result.max_rel_err_torch, worst_error(err_e) / max(scale, 1.0))
        result.max_abs_err_numeric = max(result.max_abs_err_numeric, worst_error(err_t))
        result.max_rel_err_numeric = max(result.max_rel_err_numeric, worst_error(err_t) / max(scale, 1.0))
    return [
        Problem(
            What.FLOAT32,
            what,
            input=labels[i] if labels else None,
            index=None if labels else int(i),
            engine=float(engine[i]),
            reference=float(truth[i]),
            torch32=float(torch32[i]),
            error=float(err_e[i]),
            allowed=float(allowed[i]),
            torch32_error=float(err_t[i]),
        )
        for i in np.flatnonzero(~(err_e <= allowed))[:3]
    ]
