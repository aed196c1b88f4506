"""PyTorch (float64) as the reference: one pass evaluates a graph at all K batch points at once.

Every scalar input becomes a length-K float64 vector; scalar ops are elementwise, so each point's
outputs and gradients are independent, and torch's per-op overhead is paid once for K points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.ir import Constant, Graph
from gradcheck.graphs.program import Apply, Program
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes, pad, unpad


@dataclass
class TorchResult:
    """Outputs (n_out, K), input gradients (n_in, K) and, when asked, Hessian-direction products."""

    forward: np.ndarray
    grads: np.ndarray
    hvp: np.ndarray | None = None
    dtypes: list[str] | None = None  # each output's dtype (tensor graphs)
    adjoint_scale: np.ndarray | None = None  # (K,): the largest |d loss / d node| over all nodes and uses


def torch_constant(c: Constant) -> Any:
    """A graph constant as torch takes it: a Python float, or a 0-d float64 tensor."""
    return torch.tensor(c.value, dtype=torch.float64) if c.tensor else float(c.value)


def run_torch_batch(
    graph: Graph,
    points: Sequence[np.ndarray],
    cotangent: np.ndarray,
    direction: np.ndarray | None = None,
) -> TorchResult:
    """Evaluate a scalar graph at K points: points[i] is input i's (K,) values, cotangent (n_out, K).

    With `direction` (n_in, K) also returns the Hessian of the cotangent-weighted outputs times it.
    """
    leaves = [_leaf(p) for p in points]
    nodes = Program(graph, reference_rule).run(leaves, torch_constant)
    outputs = [nodes[o] for o in graph.outputs]
    cot = [torch.from_numpy(np.ascontiguousarray(c)) for c in cotangent]
    want_hvp = direction is not None
    grads = reverse(outputs, leaves, cot, create_graph=want_hvp)
    k = len(points[0])
    forward = np.stack([o.detach().numpy() for o in outputs])
    g = np.stack([np.zeros(k) if x is None else x.detach().numpy(force=True) for x in grads])
    hvp = None
    if want_hvp:
        assert direction is not None
        # d/dx of sum_i <grad_i, u_i>: the gradients' own backward, seeded with the direction
        pairs = [
            (x, torch.from_numpy(u)) for x, u in zip(grads, direction) if x is not None and x.requires_grad
        ]
        if pairs:
            second = reverse([x for x, _ in pairs], leaves, [u for _, u in pairs])
            hvp = np.stack([np.zeros(k) if x is None else x.numpy(force=True) for x in second])
        else:
            hvp = np.zeros((len(points), k))
    return TorchResult(forward, g, hvp)


def reverse(
    outputs: Sequence[Any], inputs: Sequence[Any], cotangents: Sequence[Any], create_graph: bool = False
) -> tuple[Any, ...]:
    """`torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True, create_graph=...)`, run
    by torch's engine directly, as grad() runs it once it has checked its arguments: the same
    gradients, None for an input the outputs do not reach. Not the check: its test of the
    cotangents' shapes (which match here by construction) imports sympy the first time it runs,
    half a second of each worker's start; skipping it shortens torch's share of each checked graph
    too (bench_throughput.py prints that share beside an older commit's)."""
    run_backward = torch.autograd.graph._engine_run_backward  # what grad() calls (torch is pinned)
    # (outputs, grad_outputs, retain_graph (grad()'s default: create_graph), create_graph, inputs,
    # allow_unused)
    args = (tuple(outputs), tuple(cotangents), create_graph, create_graph, tuple(inputs), True)
    return run_backward(*args, accumulate_grad=False)


def forward_values(graph: Graph, points: Sequence[np.ndarray]) -> np.ndarray:
    """Torch's outputs of a graph at K points, flattened per point as `TorchResult.forward`
    (F, K), without gradients: no autograd graph is recorded (the same numbers, for less).
    points[i]: input i's values, (K,) or (K, *shape)."""
    with torch.no_grad():
        leaves = [torch.from_numpy(np.array(p, dtype=np.float64)) for p in points]
        if graph.is_tensor:
            _, outputs = tensor_nodes(graph, leaves)
        else:
            nodes = Program(graph, reference_rule).run(leaves, torch_constant)
            outputs = [nodes[o] for o in graph.outputs]
    return flat_outputs(outputs, len(points[0]))


def flat_outputs(outputs: Sequence[Any], k: int) -> np.ndarray:
    """Outputs with K points first, as one float64 matrix: each output's entries flattened, one
    column per point (`TorchResult.forward`)."""
    return np.concatenate([o.detach().numpy().reshape(k, -1).T for o in outputs], axis=0).astype(np.float64)


def _leaf(values: np.ndarray) -> Any:
    """A float64 leaf tensor requiring grad, on a copy of `values` (`torch.tensor` costs 4x more)."""
    return torch.from_numpy(np.array(values, dtype=np.float64)).requires_grad_()


def reference_rule(op: str) -> Apply:
    """Registry op `op` on torch tensors (`OpSpec.torch_rule`, without `apply_torch`'s extra call),
    or the reference's own spelling of it with the same numbers (`REFERENCE_RULES`)."""
    return REFERENCE_RULES.get(op) or REGISTRY[op].torch_rule


def batched_reference_rule(op: str) -> Apply:
    """`reference_rule` for a tensor graph's batched, padded operands (`OpSpec.apply_torch_batched`)."""
    return REFERENCE_RULES.get(op) or REGISTRY[op].apply_torch_batched


@cache
def _abs() -> Any:
    """|x| with torch's derivative sgn(x) (0 at 0), whose own derivative is 0: torch's abs gives the
    same numbers, but differentiating its backward again runs sgn's derivative through one of
    torch's Python decompositions, many times slower than a kernel. Made on first use, as torch
    is imported (`torch_engine`)."""

    class ReferenceAbs(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x.abs()

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * x.sgn().detach()

    return ReferenceAbs


# Ops the reference (and the rounding bound's passes) spell their own way, each giving torch's
# numbers to the bit.
REFERENCE_RULES: dict[str, Apply] = {"abs": lambda args, attrs: _abs().apply(args[0])}


def run_torch_tensor_batch(
    graph: Graph,
    points: Sequence[np.ndarray],
    cotangent: Sequence[np.ndarray],
    direction: Sequence[np.ndarray] | None = None,
    dtype: str = "float64",
    adjoints: bool = False,
    jitter: tuple[np.random.Generator, float] | None = None,
) -> TorchResult:
    """A tensor graph at K points: points[i] (K, *shape_i), cotangent[j] (K, *shape of output j).

    Results are flattened per point as in `central_differences_tensor`: forward (F, K), grads
    (N, K); `direction` (like points) asks for the Hessian-vector product too. `dtype`: the
    inputs' and cotangents' dtype (0-d tensor constants stay float64, so type promotion shows).
    `adjoints`: also the largest adjoint |d loss / d node| per point (how much rounding any
    node's value can push into the gradients), counting each use of a node on its own: an op's
    contribution to each operand before the contributions are summed (div's two to y in y / y,
    each |g / y|, though their sum is 0). `jitter` (rng, relative size): every op node's adjoint,
    and each use's contribution to it, is multiplied by 1 +- size at random per element, as
    rounding it would (the float32 check's measure of how far a gradient moves when each adjoint
    and each term it sums is rounded).
    """
    k = points[0].shape[0]
    leaves = [torch.tensor(np.asarray(p, dtype=dtype), requires_grad=True) for p in points]
    uses: list[Any] | None = [] if adjoints or jitter is not None else None
    nodes, outputs = tensor_nodes(graph, leaves, uses)
    if jitter is not None:
        _jitter_adjoints(nodes[graph.n_inputs :] + (uses or []), *jitter)
    cot = [
        torch.from_numpy(np.ascontiguousarray(c, dtype=dtype)).reshape(o.shape)
        for c, o in zip(cotangent, outputs)
    ]
    want_hvp = direction is not None
    inner = [n for n in nodes[graph.n_inputs :] + (uses or []) if n.requires_grad] if adjoints else []
    every = reverse(outputs, leaves + inner, cot, create_graph=want_hvp)
    grads = every[: len(leaves)]
    adjoint_scale = None
    if adjoints:
        adjoint_scale = np.zeros(k)
        for g in every:
            if g is not None:
                adjoint_scale = np.maximum(adjoint_scale, g.detach().abs().reshape(k, -1).amax(dim=1).numpy())
    forward = flat_outputs(outputs, k)
    dtypes = [str(o.dtype).removeprefix("torch.") for o in outputs]

    def flat(gs: Sequence[Any]) -> np.ndarray:
        parts = [
            np.zeros((k, int(np.prod(inp.shape))))
            if g is None
            else g.detach().numpy(force=True).reshape(k, -1).astype(np.float64)
            for g, inp in zip(gs, graph.inputs)
        ]
        return np.concatenate(parts, axis=1).T

    hvp = None
    if want_hvp:
        assert direction is not None
        terms = [
            (g * torch.from_numpy(np.asarray(u, dtype=np.float64))).sum()
            for g, u in zip(grads, direction)
            if g is not None and g.requires_grad
        ]
        if terms:
            hvp = flat(torch.autograd.grad(sum(terms), leaves, allow_unused=True))
        else:
            hvp = np.zeros((sum(int(np.prod(i.shape)) for i in graph.inputs), k))
    return TorchResult(forward, flat(grads), hvp, dtypes, adjoint_scale)


def _jitter_adjoints(nodes: Sequence[Any], rng: np.random.Generator, size: float) -> None:
    """Hook each node (once) so its adjoint comes out multiplied by 1 +- size per element."""

    def rounded(g: Any) -> Any:
        return g * torch.from_numpy(1.0 + size * rng.choice([-1.0, 1.0], size=tuple(g.shape)))

    hooked: set[int] = set()
    for node in nodes:
        if node.requires_grad and id(node) not in hooked:
            hooked.add(id(node))
            node.register_hook(rounded)


def tensor_nodes(
    graph: Graph, leaves: Sequence[Any], uses: list[Any] | None = None
) -> tuple[list[Any], list[Any]]:
    """Every node of a tensor graph computed by torch from batched `leaves` (batch first), in the
    padded layout (`shapes.pad`), and the outputs as (batch, *shape).

    With a list `uses`, each op takes each of its differentiable operands through an alias of its
    own (an identity view), appended there: an alias's adjoint is that one use's contribution to
    the operand's adjoint, before the uses are summed."""
    shapes = graph_shapes(graph)
    nodes: list[Any] = [pad(leaf, inp.shape) for leaf, inp in zip(leaves, graph.inputs)]
    for node, shape in zip(graph.nodes, shapes[graph.n_inputs :]):
        args = node.operands(nodes, torch_constant)
        if uses is not None:
            args = [_alias(a, uses) for a in args]
        out = batched_reference_rule(node.op)(args, node.attr)
        nodes.append(pad(out, shape))
    return nodes, [unpad(nodes[o], shapes[o]) for o in graph.outputs]


def _alias(arg: Any, uses: list[Any]) -> Any:
    """`arg` through an identity view of its own (appended to `uses`) when it takes a gradient."""
    if not (isinstance(arg, torch.Tensor) and arg.requires_grad):
        return arg
    alias = arg.view_as(arg)
    uses.append(alias)
    return alias


def set_torch_threads(n: int) -> int | None:
    """Set torch's intra-op threads to `n`; returns the previous count (None without torch).

    A campaign's tensors are tiny: a second thread only adds synchronisation (measured: 35% more
    CPU per graph with torch's default two threads than with one).
    """
    if torch is None:  # pragma: no cover - torch is a test dependency
        return None
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    return previous
