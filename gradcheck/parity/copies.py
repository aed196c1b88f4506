"""A graph evaluated by torch on copies of its points, with the derivatives a rounding bound reads
(`parity.bound`).

Each of K points is copied once per flattened input entry (a gradient copy, weighted by the
point's cotangent) and once per flattened output entry (an output copy, weighted by a unit
cotangent at that entry). Each op reads each operand through a view of its own, so the view's
adjoint is that one use's contribution; linear ops (sum, matmul) are also evaluated on absolute
operands. Later passes run when asked: the derivatives of each gradient copy's entry with respect
to every node, view and (seeded at every node, zero) adjoint; and for a Hessian-vector product,
the product as the gradient of <gradient, direction>, and its derivatives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.ir import Graph, plain_constant
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes, pad
from gradcheck.parity.torch_reference import batched_reference_rule, reference_rule, reverse, torch_constant


@dataclass
class Use:
    """Operand `position` of op node `consumer` (index in graph.nodes) reads node `node` through
    `alias`: a view of it (broadcast to the op's result shape when the op is elementwise)."""

    node: int
    consumer: int
    position: int
    alias: Any


class Copies:
    """Torch's evaluation of `graph` on the copies of its K points: `batch` holds each input's
    values, (K,) or (K, *shape); `cotangent` each output's weights ((n_out, K) for a scalar graph,
    a list of (K, *shape) for a tensor graph); `direction` (like `batch`): the Hessian-vector
    product's. `full`: run the passes a full bound reads at once (a differentiable backward, and
    seeded adjoints for a Hessian-vector product) instead of the cheaper ones first."""

    def __init__(
        self, graph: Graph, batch: Sequence[Any], cotangent: Any, direction: Any = None, full: bool = False
    ) -> None:
        self.graph = graph
        self.k = int(np.shape(batch[0])[0])
        self.tensor = graph.is_tensor
        self.shapes = graph_shapes(graph) if self.tensor else [()] * (graph.n_inputs + len(graph.nodes))
        self.sizes = [math.prod(s) for s in self.shapes]
        self.in_offsets = np.cumsum([0, *self.sizes[: graph.n_inputs]])
        self.e_in = int(self.in_offsets[-1])
        self.out_offsets = np.cumsum([0, *[self.sizes[o] for o in graph.outputs]])
        self.copies = self.e_in + int(self.out_offsets[-1])
        self.b = self.k * self.copies
        self.role = np.tile(np.arange(self.copies), self.k)  # copy p * copies + r: point p, role r
        self.gradient_rows = self.role < self.e_in
        self.direction = direction
        self._inputs = (batch, cotangent)
        second_order = direction is not None
        self._run(
            seeded=self.tensor or (full and second_order), differentiable=full or self.tensor or second_order
        )

    def _run(self, seeded: bool, differentiable: bool) -> None:
        """The forward and backward passes (with zero adjoints seeded at every node: `seeded`;
        the backward kept `differentiable` for the passes after it)."""
        self.uses: list[Use] = []
        self._passes: dict[str, Any] = {}
        self.differentiable = differentiable
        self._forward(self._inputs[0])
        self._backward(self._inputs[1], seeded)

    def _forward(self, batch: Sequence[Any]) -> None:
        """Every node on the copies (`raw`: each op's own result; `nodes`: in the padded layout
        consumers read), each operand through an alias; linear ops also on absolute operands."""
        graph, copies = self.graph, self.copies
        self.leaves = [torch.from_numpy(_on_copies(v, copies)).requires_grad_() for v in batch]
        self.nodes: list[Any] = [
            pad(leaf, inp.shape) if self.tensor else leaf for leaf, inp in zip(self.leaves, graph.inputs)
        ]
        self.raw: list[Any] = list(self.leaves)
        self.shadows: dict[int, tuple[list[Any], Any]] = {}
        ids_of = list(range(len(graph.inputs) + len(graph.nodes)))
        for c, node in enumerate(graph.nodes):
            spec = REGISTRY[node.op]
            args = node.operands(self.nodes, torch_constant)
            ids = node.operands(ids_of, lambda _: None)
            target = None
            if self.tensor and spec.shape is None:  # elementwise: read each operand broadcast
                # numpy's, not torch's: torch.broadcast_shapes imports sympy on first use
                target = np.broadcast_shapes(*[tuple(a.shape) for a in args if isinstance(a, torch.Tensor)])
            operands = []
            for position, (arg, node_id) in enumerate(zip(args, ids)):
                if node_id is not None and arg.requires_grad:
                    arg = arg.expand(target) if target is not None else arg.view_as(arg)
                    self.uses.append(Use(node_id, c, position, arg))
                operands.append(arg)
            # the reference's own spelling where it has one (abs): the same bits
            rule = batched_reference_rule(node.op) if self.tensor else reference_rule(node.op)
            out = rule(operands, node.attr)
            if spec.accuracy.linear:
                absolute = [
                    a.detach().abs().requires_grad_() if i is not None else _abs(a) for a, i in zip(args, ids)
                ]
                self.shadows[c] = (absolute, spec.apply_torch_batched(absolute, node.attr))
            self.raw.append(out)
            self.nodes.append(pad(out, self.shapes[graph.n_inputs + c]) if self.tensor else out)

    def _backward(self, cotangent: Any, seeded: bool) -> None:
        """The backward pass (kept differentiable): the gradients, each use's contribution and
        each node's adjoint; a zero adjoint seeded at every node when d n / d input must come from
        torch (tensor graphs) or its derivative is needed (the full bound of Hessian-vector
        products)."""
        graph, n_in = self.graph, self.graph.n_inputs
        self.live = [i for i in range(n_in, len(self.raw)) if self.raw[i].requires_grad]
        outputs = [self.nodes[o] for o in graph.outputs]
        self.cot = [c.reshape(o.shape) for c, o in zip(self._cotangents(cotangent), outputs)]
        self.seeds = [torch.zeros_like(self.raw[i]).requires_grad_() for i in self.live] if seeded else []
        self.aliases = [u.alias for u in self.uses]
        self.raw_live = [self.raw[i] for i in self.live]
        first = reverse(
            outputs + self.raw_live[: len(self.seeds)],
            self.leaves + self.aliases + self.raw_live,
            self.cot + self.seeds,
            create_graph=self.differentiable,
        )
        n_leaves, n_uses = len(self.leaves), len(self.aliases)
        self.grads = first[:n_leaves]
        self.contributions = first[n_leaves : n_leaves + n_uses]
        self.adjoints = dict(zip(self.live, first[n_leaves + n_uses :]))
        self.shadow_grads = self._shadow_backward()

    def _pass(self, name: str) -> Any:
        """A later pass, run once: "gradient" (d gradient entry / d node, alias, seed),
        "hvp" (H v and phi's contribution at each use), "third" (d H v entry / d node, alias,
        seed)."""
        if name not in self._passes:
            self._passes[name] = getattr(self, f"_{name}_pass")()
        return self._passes[name]

    def _gradient_pass(self) -> tuple[dict[int, Any], Sequence[Any], dict[int, np.ndarray]]:
        second = self._selected_derivatives(self.grads)
        n_live, n_uses = len(self.live), len(self.aliases)
        seeds = second[n_live + n_uses :]
        jacobian = {i: np.abs(self._flat(s)) for i, s in zip(self.live, seeds)}
        return dict(zip(self.live, second[:n_live])), second[n_live : n_live + n_uses], jacobian

    def _jacobian(self, paths: bool = False) -> dict[int, np.ndarray]:
        """|d node / d (the copy's input entry)| for every live op node (`paths`: summed path by
        path in absolute value; a tensor graph's as the plain one)."""
        if self.tensor:
            return self._pass("gradient")[2]
        if "scalar jacobian" not in self._passes:
            self._passes["scalar jacobian"] = self._scalar_jacobians()
        return self._passes["scalar jacobian"][1 if paths else 0]

    def _hvp_pass(self) -> tuple[Sequence[Any], Sequence[Any]]:
        """H v as the gradient of phi = <gradient, v> (differentiable), and phi's contribution at
        each use."""
        phi = sum(
            (g * torch.from_numpy(_on_copies(v, self.copies)).reshape(g.shape)).sum()
            for g, v in zip(self.grads, self.direction)
            if g is not None and g.requires_grad
        )
        n_leaves = len(self.leaves)
        if not isinstance(phi, torch.Tensor):  # a linear graph: no second derivatives at all
            return [None] * n_leaves, [None] * len(self.aliases)
        differentiable = bool(self.seeds)  # the full bound differentiates H v again
        second = torch.autograd.grad(
            phi, self.leaves + self.aliases, create_graph=differentiable, retain_graph=True, allow_unused=True
        )
        return second[:n_leaves], second[n_leaves:]

    def _third_pass(self) -> tuple[dict[int, Any], Sequence[Any], dict[int, np.ndarray]]:
        third = self._selected_derivatives(self._pass("hvp")[0])
        n_live, n_uses = len(self.live), len(self.aliases)
        moved = {i: np.abs(self._flat(s)) for i, s in zip(self.live, third[n_live + n_uses :])}
        return dict(zip(self.live, third[:n_live])), third[n_live : n_live + n_uses], moved

    def _selected_derivatives(self, entries: Sequence[Any]) -> Sequence[Any]:
        """The derivatives of each gradient copy's entry (of `entries`, one per input) with respect
        to every live node, alias and seed."""
        selected = [
            (g * torch.from_numpy(self._one_hot(j)).reshape(g.shape)).sum()
            for j, g in enumerate(entries)
            if g is not None and g.requires_grad
        ]
        wrt = self.raw_live + self.aliases + self.seeds
        if not selected:
            return [None] * len(wrt)
        return torch.autograd.grad(sum(selected), wrt, allow_unused=True, retain_graph=True)

    def _scalar_jacobians(self) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        """|d node / d (the copy's input entry)| for every op node of a scalar graph, forward mode
        through the registry's local derivatives; and the same summed path by path in absolute
        value (what a rounding carried along paths that cancel exactly leaves behind)."""
        graph = self.graph
        stacked = torch.stack([r.detach() for r in self.raw], dim=1).numpy(force=True)
        values: list[Any] = list(stacked.T)
        tangents: list[Any] = [self._one_hot(j)[:, 0] for j in range(graph.n_inputs)]
        paths = list(tangents)
        ids_of = list(range(len(values)))
        for c, node in enumerate(graph.nodes):
            spec = REGISTRY[node.op]
            ids = node.operands(ids_of, lambda _: None)
            if spec.grads is None:  # pragma: no cover - every scalar op has its derivatives
                raise ValueError(f"entry_bounds: op {node.op!r} has no local derivatives in the registry")
            operands = node.operands(values, plain_constant)
            with np.errstate(all="ignore"):
                partials = spec.grads(operands, node.attr, values[graph.n_inputs + c])
            tangent, path = np.zeros(self.b), np.zeros(self.b)
            for partial, i in zip(partials, ids):
                if i is not None:
                    tangent = tangent + partial * tangents[i]
                    path = path + np.abs(partial) * paths[i]
            tangents.append(tangent)
            paths.append(path)
        reach = {i: np.abs(tangents[i])[:, None] for i in self.live}
        return reach, {i: paths[i][:, None] for i in self.live}

    def _shadow_backward(self) -> dict[int, list[Any]]:
        """For each linear op: its backward at absolute operands, seeded with |adjoint| (the
        sizes of the terms each contribution sums)."""
        found: dict[int, list[Any]] = {c: [None] * len(a) for c, (a, _) in self.shadows.items()}
        terms, wrt, owners = [], [], []
        for c, (absolute, out) in self.shadows.items():
            adjoint = self.adjoints.get(self.graph.n_inputs + c)
            if adjoint is None or not out.requires_grad:
                continue
            terms.append((out * adjoint.detach().abs().reshape(out.shape)).sum())
            for position, a in enumerate(absolute):
                if isinstance(a, torch.Tensor) and a.requires_grad:
                    wrt.append(a)
                    owners.append((c, position))
        if terms:
            for (c, position), g in zip(owners, torch.autograd.grad(sum(terms), wrt, allow_unused=True)):
                found[c][position] = g
        return found

    def _cotangents(self, cotangent: Any) -> list[Any]:
        """Each output's cotangent on the copies: the point's on gradient copies, a unit one at
        the copy's output entry on output copies."""
        result = []
        for j, o in enumerate(self.graph.outputs):
            size = self.sizes[o]
            weights = np.asarray(cotangent[j], dtype=np.float64).reshape(self.k, size)
            c = np.repeat(weights, self.copies, axis=0)
            c[~self.gradient_rows] = 0.0
            start = self.e_in + self.out_offsets[j]
            rows = np.flatnonzero((self.role >= start) & (self.role < start + size))
            c[rows, self.role[rows] - start] = 1.0
            result.append(torch.from_numpy(c))
        return result

    def _one_hot(self, j: int) -> np.ndarray:
        """(b, size of input j): a gradient copy's row is 1 at its entry when it is one of input j's."""
        offset, size = int(self.in_offsets[j]), self.sizes[j]
        out = np.zeros((self.b, size))
        rows = np.flatnonzero((self.role >= offset) & (self.role < offset + size) & self.gradient_rows)
        out[rows, self.role[rows] - offset] = 1.0
        return out

    # --- as matrices ---------------------------------------------------------------------------

    def _columns(self) -> Columns:
        if "columns" not in self._passes:
            self._passes["columns"] = Columns(self)
        return self._passes["columns"]

    def _use_matrix(self, tensors: Sequence[Any], absolute: bool = False) -> np.ndarray:
        """One tensor per use (None: zeros), each summed onto its node's shape (of |elements| when
        `absolute`), side by side: (b, use columns)."""
        if not tensors:
            return np.zeros((self.b, 0))
        if not self.tensor:
            zero = torch.zeros(self.b, dtype=torch.float64)
            matrix = torch.stack([zero if t is None else t.detach() for t in tensors], dim=1).numpy(
                force=True
            )
            return np.abs(matrix) if absolute else matrix
        parts = []
        for t, use in zip(tensors, self.uses):
            if t is None:
                parts.append(np.zeros((self.b, self.sizes[use.node])))
                continue
            t = t.detach().abs() if absolute else t.detach()
            parts.append(self._flat(self._reduced(t, use.node)))
        return np.concatenate(parts, axis=1)

    def _node_matrix(self, found: dict[int, Any], absolute: bool = False) -> np.ndarray:
        """One tensor or array per live node (absent: zeros) side by side: (b, node columns); a
        scalar graph's tensors in one conversion."""
        cols = self._columns()
        if not self.tensor and all(not isinstance(x, np.ndarray) for x in found.values()):
            zero = torch.zeros(self.b, dtype=torch.float64)
            columns = [zero if found.get(i) is None else found[i].detach() for i in range(len(self.raw))]
            matrix = torch.stack(columns, dim=1).numpy(force=True)
        else:
            matrix = np.zeros((self.b, cols.n_node))
            for i in self.live:
                x = found.get(i)
                if x is not None:
                    matrix[:, cols.node[i] : cols.node[i + 1]] = (
                        x if isinstance(x, np.ndarray) else self._flat(x)
                    )
        return np.abs(matrix) if absolute else matrix

    def _reduced(self, x: Any, i: int) -> Any:
        """An alias-shaped tensor summed back onto node i's shape (itself when they agree)."""
        shape = self.nodes[i].shape
        return x if x.shape == shape else x.sum_to_size(shape)

    def _flat(self, x: Any) -> np.ndarray:
        """A tensor (None: zeros) as float64 numpy, one row per copy."""
        if x is None:
            return np.zeros((self.b, 1))
        return x.detach().numpy(force=True).astype(np.float64, copy=False).reshape(self.b, -1)


class Columns:
    """The matrices' columns: each node's elements (inputs first), each use's (its node's
    elements again); `gather` sums use columns onto their node columns. `summing`: per node
    column, (terms - 1) / 2 for the sum of its adjoint's contributions and cotangent
    (`summing_uses`: without the cotangent); `cotangent`: |cotangent| at output columns."""

    def __init__(self, run: Copies) -> None:
        n = len(run.raw)
        self.node = np.cumsum([0, *run.sizes[:n]])
        self.n_node = int(self.node[-1])
        self.use = np.cumsum([0, *[run.sizes[u.node] for u in run.uses]])
        self.n_use = int(self.use[-1])
        self.target = np.concatenate(
            [np.arange(self.node[u.node], self.node[u.node + 1]) for u in run.uses]
            or [np.zeros(0, dtype=int)]
        )
        uses = np.zeros(self.n_node)
        np.add.at(uses, self.target, 1.0)
        seeds = np.zeros(self.n_node)
        self.cotangent = np.zeros((run.b, self.n_node))
        for j, o in enumerate(run.graph.outputs):
            seeds[self.node[o] : self.node[o + 1]] += 1.0
            self.cotangent[:, self.node[o] : self.node[o + 1]] += np.abs(run._flat(run.cot[j]))
        self.summing = 0.5 * np.maximum(uses + seeds - 1.0, 0.0)
        self.summing_uses = 0.5 * np.maximum(uses - 1.0, 0.0)

    def gather(self, matrix: np.ndarray) -> np.ndarray:
        out = np.zeros((matrix.shape[0], self.n_node))
        if self.n_use:
            np.add.at(out.T, self.target, matrix.T)
        return out


def _abs(x: Any) -> Any:
    """A constant operand's size (a Python float or a 0-d tensor)."""
    return x.abs() if isinstance(x, torch.Tensor) else abs(x)


def _on_copies(x: Any, copies: int) -> np.ndarray:
    """A batch (K first) with each point repeated once per copy."""
    return np.repeat(np.asarray(x, dtype=np.float64), copies, axis=0)
