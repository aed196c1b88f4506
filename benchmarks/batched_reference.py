"""An experiment that did not pay: torch's reference for many scalar graphs in a few torch calls.

`bench_batched_reference.py` measures it against the harness's per-graph references (see
docs/performance.md); the harness does not use it.

Checking a graph calls torch once per node, and a call costs about the same whether it computes
one number or a thousand. So a batch of graphs is evaluated together, as DyNet's autobatching
does: nodes whose operands are all computed are ready; the ready nodes that apply the same op
with the same attributes (and constants), whichever graph they belong to, form one group, and
the largest group is computed next by one torch call on its operands gathered side by side.
Every value lives in one growing vector (the leaves first, then each group's results), from
which a group gathers its operands by index. One `autograd.grad` then differentiates every
graph's cotangent-weighted outputs at once, and one more gives every Hessian-vector product.

Scalar ops are elementwise, so each graph's numbers are those `torch_reference.run_torch_batch`
gives for it alone, up to the last bit where torch's vectorised kernel for a long operand rounds
otherwise than its scalar one for a short one, or sums a node's gradient contributions in
another order. Constants join a group as a vector when that cannot change a bit: as either
operand of add, sub and mul and as the divisor of div, which round correctly either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.ir import Constant, Graph
from gradcheck.parity.torch_reference import TorchResult, reference_rule, torch_constant

# (op, constant position) pairs whose constant may differ within a group: a float operand and a
# float64 vector of it give the same bits (correctly rounded arithmetic, the same derivative).
VECTOR_CONSTANTS = frozenset(
    {("add", 0), ("add", 1), ("sub", 0), ("sub", 1), ("mul", 0), ("mul", 1), ("div", 1)}
)


@dataclass(frozen=True)
class ScalarReferenceRequest:
    """One scalar graph's reference to compute: inputs (n_in, K), cotangent (n_out, K) and, for the
    Hessian-vector product, the direction (n_in, K) or None."""

    graph: Graph
    points: np.ndarray
    cotangent: np.ndarray
    direction: np.ndarray | None = None


def group_key(op: str, attrs: tuple[tuple[str, Any], ...], consts: Sequence[Constant]) -> tuple[Any, ...]:
    """What the nodes of one group share: op, attributes, and each constant's position, with its
    value unless the group takes it as a vector (`VECTOR_CONSTANTS`)."""
    return (
        op,
        attrs,
        tuple((c.at,) if (op, c.at) in VECTOR_CONSTANTS else (c.at, c.value, c.tensor) for c in consts),
    )


class BatchSchedule:
    """The groups of a batch of scalar graphs in the order they are computed, and where each node's
    value sits in the value vector (graph g's node i at `slots[g][i]`, K_g entries)."""

    def __init__(self, graphs: Sequence[Graph], ks: Sequence[int]) -> None:
        self.graphs, self.ks = graphs, ks
        self.slots: list[list[int]] = []
        size = 0
        for graph, k in zip(graphs, ks):
            self.slots.append([size + i * k for i in range(graph.n_inputs)] + [-1] * len(graph.nodes))
            size += graph.n_inputs * k
        self.leaf_size = size
        self.groups: list[tuple[tuple[Any, ...], list[tuple[int, int]]]] = []
        waiting: list[list[int]] = []  # per graph, per op node: operands not computed yet
        consumers: list[list[list[int]]] = []  # per graph, per node id: the op nodes reading it
        keys: list[list[tuple[Any, ...]]] = []
        ready: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
        for g, graph in enumerate(graphs):
            n_in = graph.n_inputs
            readers: list[list[int]] = [[] for _ in range(n_in + len(graph.nodes))]
            counts, node_keys = [], []
            for c, node in enumerate(graph.nodes):
                distinct = set(node.args)
                for a in distinct:
                    readers[a].append(c)
                counts.append(sum(1 for a in distinct if a >= n_in))
                node_keys.append(group_key(node.op, node.attrs, node.consts))
                if counts[-1] == 0:
                    ready.setdefault(node_keys[-1], []).append((g, c))
            waiting.append(counts)
            consumers.append(readers)
            keys.append(node_keys)
        while ready:
            key = max(ready, key=lambda k: len(ready[k]))
            members = ready.pop(key)
            self.groups.append((key, members))
            for g, c in members:
                self.slots[g][graphs[g].n_inputs + c] = size
                size += ks[g]
                for reader in consumers[g][graphs[g].n_inputs + c]:
                    waiting[g][reader] -= 1
                    if waiting[g][reader] == 0:
                        ready.setdefault(keys[g][reader], []).append((g, reader))
        self.size = size

    def operand_index(self, members: Sequence[tuple[int, int]], position: int) -> np.ndarray:
        """The value-vector indices of each member's node operand number `position`."""
        graphs, slots = self.graphs, self.slots
        starts = np.fromiter(
            (slots[g][graphs[g].nodes[c].args[position]] for g, c in members),
            dtype=np.int64,
            count=len(members),
        )
        return _ranges(
            starts, np.fromiter((self.ks[g] for g, _ in members), dtype=np.int64, count=len(members))
        )

    def constant_vector(self, members: Sequence[tuple[int, int]], at: int) -> np.ndarray:
        """Each member's constant at operand `at`, repeated over its points."""
        graphs = self.graphs
        values = [next(x.value for x in graphs[g].nodes[c].consts if x.at == at) for g, c in members]
        return np.repeat(np.asarray(values, dtype=np.float64), [self.ks[g] for g, _ in members])


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated ranges start..start+length-1."""
    if (lengths == 1).all():
        return starts
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + offsets


def run_torch_scalar_batches(requests: Sequence[ScalarReferenceRequest]) -> list[TorchResult]:
    """Torch's outputs, cotangent-weighted input gradients and (where asked) Hessian-vector
    products of every request's graph, each as `run_torch_batch` returns them for that graph."""
    if not requests:
        return []
    tensor = [r.graph for r in requests if r.graph.is_tensor]
    if tensor:
        raise ValueError(
            f"run_torch_scalar_batches: every graph must be a scalar graph; {len(tensor)} have tensor inputs"
        )
    ks = [int(np.shape(r.points)[1]) for r in requests]
    schedule = BatchSchedule([r.graph for r in requests], ks)
    leaves = torch.from_numpy(
        np.concatenate([np.asarray(r.points, dtype=np.float64).ravel() for r in requests])
    )
    leaves.requires_grad_()
    values = leaves
    for key, members in schedule.groups:
        values = torch.cat([values, _group_result(schedule, values, key, members)])
    out_index = [
        np.arange(schedule.slots[g][o], schedule.slots[g][o] + ks[g])
        for g, r in enumerate(requests)
        for o in r.graph.outputs
    ]
    outputs = values.index_select(0, torch.from_numpy(np.concatenate(out_index)))
    cotangent = np.concatenate([np.asarray(r.cotangent, dtype=np.float64).ravel() for r in requests])
    want_hvp = any(r.direction is not None for r in requests)
    (grads,) = torch.autograd.grad(
        outputs, leaves, torch.from_numpy(cotangent), allow_unused=True, create_graph=want_hvp
    )
    forward = outputs.detach().numpy()
    gradient = np.zeros(schedule.leaf_size) if grads is None else grads.detach().numpy()
    hvp = None
    if want_hvp:
        hvp = np.zeros(schedule.leaf_size)
        if grads is not None and grads.requires_grad:
            direction = np.concatenate(
                [
                    np.zeros(np.size(r.points)) if r.direction is None else np.asarray(r.direction).ravel()
                    for r in requests
                ]
            ).astype(np.float64)
            (second,) = torch.autograd.grad(grads, leaves, torch.from_numpy(direction), allow_unused=True)
            if second is not None:
                hvp = second.numpy()
    return _split(requests, ks, forward, gradient, hvp)


def _group_result(
    schedule: BatchSchedule, values: Any, key: tuple[Any, ...], members: Sequence[tuple[int, int]]
) -> Any:
    """One group's op applied once to its members' operands, gathered side by side."""
    op, attrs, consts = key
    first = schedule.graphs[members[0][0]].nodes[members[0][1]]
    operands: list[Any] = [
        values.index_select(0, torch.from_numpy(schedule.operand_index(members, p)))
        for p in range(len(first.args))
    ]
    for const in consts:  # in ascending position, as the node's constants are
        at = const[0]
        if len(const) == 1:
            operands.insert(at, torch.from_numpy(schedule.constant_vector(members, at)))
        else:
            operands.insert(at, torch_constant(Constant(at, const[1], const[2])))
    return reference_rule(op)(operands, dict(attrs))


def _split(
    requests: Sequence[ScalarReferenceRequest],
    ks: Sequence[int],
    forward: np.ndarray,
    gradient: np.ndarray,
    hvp: np.ndarray | None,
) -> list[TorchResult]:
    """The batch's flat results cut into each graph's (n_out, K) outputs and (n_in, K) gradients."""
    results, leaf_at, out_at = [], 0, 0
    for r, k in zip(requests, ks):
        n_in, n_out = r.graph.n_inputs, len(r.graph.outputs)
        leaf_end, out_end = leaf_at + n_in * k, out_at + n_out * k
        results.append(
            TorchResult(
                forward[out_at:out_end].reshape(n_out, k).copy(),
                gradient[leaf_at:leaf_end].reshape(n_in, k).copy(),
                None if hvp is None or r.direction is None else hvp[leaf_at:leaf_end].reshape(n_in, k).copy(),
            )
        )
        leaf_at, out_at = leaf_end, out_end
    return results
