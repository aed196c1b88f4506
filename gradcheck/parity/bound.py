"""Each entry's rounding bound: how far one floating-point evaluation of a graph's outputs and
cotangent-weighted gradients (or Hessian-vector product) can sit from the exact values.

Higham's running error analysis ("Accuracy and Stability of Numerical Algorithms", 2002) over
the graph's forward and backward computation, to first order: every value an evaluation rounds
errs by at most its op's accuracy in ulps (`OpSpec.accuracy`, measured) times EPS times its
scale, and moves an entry by that error times the entry's sensitivity to the value. An entry's
bound sums, over

- each op node n: n's rounding times |d entry / d n|. For a gradient entry this is a second
  derivative: n's rounding moves the gradient through the values computed from n and through
  the local derivatives that read n. It is taken path by path (each use of n apart, and the
  derivative rules that read n itself, as tanh's reads its result), so an engine whose rules
  read other values than torch's stays within the same bound;
- each adjoint (gradient entries only): the rounding of each use's contribution to it and of
  their sum, times |d n / d input entry| (an adjoint's error reaches the input's gradient
  through the Jacobian of n); and, second order, the same rounding carried along paths that
  cancel exactly (x / x, whose Jacobian is 0) and rounded again on the way, EPS per step.

For a Hessian-vector product, the product is the gradient of phi = <gradient, v>: its entries
move with the forward values (a third derivative), with each adjoint of the gradient's backward
pass, with each contribution of phi's own backward pass (its terms taken from the first
contribution's size and the rates the operands move at along v) and with each tangent it
carries. Torch computes the derivatives (`parity.copies`); `partial` gives the part that needs
no derivative of a backward pass, enough to pass an entry well within it, `full` all of it. An
engine and torch computing the same function each stay within the bound, so they differ by at
most twice it; `errors.BOUND_SAFETY` is the measured factor allowed on top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.ir import Graph, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.copies import Copies, Use
from gradcheck.parity.torch_reference import torch_constant

EPS = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
# A node this small (in size) is taken as this large when its rate of change is relative to it.
RATE_FLOOR = 1e-12


@dataclass
class EntryBounds:
    """Per point (columns): the bound of each flattened output entry (`forward`, (F, K)) and of
    each flattened cotangent-weighted input gradient entry (`grads`, (N, K)), in absolute terms."""

    forward: np.ndarray
    grads: np.ndarray


def entry_bounds(
    graph: Graph, batch: Sequence[Any], cotangent: Any, float32: bool = False, direction: Any = None
) -> EntryBounds:
    """The bounds at K points (`RoundingBounds(...).full(float32)`)."""
    return RoundingBounds(graph, batch, cotangent, direction, full=True).full(float32)


class RoundingBounds(Copies):
    """A graph's rounding bounds at K points: `batch` holds each input's values, (K,) or
    (K, *shape); `cotangent` each output's weights ((n_out, K) for a scalar graph, a list of
    (K, *shape) for a tensor graph); with `direction` (like `batch`) the `grads` of the bounds
    are those of the Hessian-vector product instead.

    The passes are spent as needed: `partial()` gives the forward values' bounds whole and, for
    the gradient (or Hessian-vector product) entries, the part that needs no derivative of the
    backward pass (each adjoint's own rounding): a lower bound, enough to pass an entry well
    within it. `full()` adds the rest. float32: the bound of a float32 evaluation (float32 ulps
    and the ops' float32 accuracies), still computed in float64.
    """

    def partial(self, float32: bool = False) -> EntryBounds:
        """The forward values' bounds, and a lower bound of the other entries' (see the class)."""
        return self._bounds(float32, full=False)

    def full(self, float32: bool = False) -> EntryBounds:
        """Every entry's bound."""
        if self.direction is not None and not self.seeds:  # H v's bound reads the seeds' derivatives
            self._run(seeded=True, differentiable=True)
        elif not self.differentiable:  # the gradient's bound differentiates the backward pass
            self._run(seeded=self.tensor, differentiable=True)
        return self._bounds(float32, full=True)

    def _bounds(self, float32: bool, full: bool) -> EntryBounds:
        """Every entry's bound (`full`), or its lower part (see the class), per copy; the sums over
        nodes and uses run on matrices: one column per node element, one per use element."""
        second_order = self.direction is not None
        cols = self._columns()
        value_ulps, use_ulps = self._ulps(float32)
        contributions = self._use_matrix(self.contributions)
        sizes = (
            np.abs(contributions) if not self.tensor else self._use_matrix(self.contributions, absolute=True)
        )
        adjoints = self._node_matrix(self.adjoints)
        on_outputs = _paths(adjoints, cols.gather(contributions), cols.gather(sizes))
        sensitivity = np.where(self.gradient_rows[:, None], 0.0, on_outputs)
        if full:  # d entry / d node: the gradient's (or H v's) own derivatives, path by path
            by_node, by_use, moved = self._pass("third" if second_order else "gradient")
            used = self._use_matrix(by_use)
            used_sizes = np.abs(used) if not self.tensor else self._use_matrix(by_use, absolute=True)
            on_grads = _paths(self._node_matrix(by_node), cols.gather(used), cols.gather(used_sizes))
            sensitivity = np.where(self.gradient_rows[:, None], on_grads, sensitivity)
        roundings = value_ulps * self._value_scales()
        total = (roundings * sensitivity).sum(axis=1)
        # second order: where every first-order term vanishes (v * v at v = 0, v the rounding of
        # x / x - 1) the entry still moves by products of two roundings: unit times their sum,
        # times the entry's largest sensitivity to a node (at least 1)
        unit = EPS32 if float32 else EPS
        reach_most = np.maximum(np.nan_to_num(np.abs(sensitivity), nan=np.inf).max(axis=1, initial=0.0), 1.0)
        total += unit * roundings.sum(axis=1) * reach_most
        reach = self._reach()
        scales = self._use_scales(sizes)
        error = cols.gather(use_ulps * scales) + cols.summing * (cols.gather(sizes) + cols.cotangent)
        if second_order:  # the gradient's adjoints reach H v through d(dn/dx . v)/dx ...
            if full:
                total += (self._node_matrix(moved, absolute=True) * error).sum(axis=1)
            # ... and phi's own backward pass rounds its contributions, through d n / d x: each
            # the derivative along v of a first contribution a * p, whose terms are a' p and a p':
            # a p' taken as the first contribution's terms times the rates its op's operands move
            # at along v (exact for products and powers)
            tangents = self._use_matrix(self._pass("hvp")[1], absolute=True)
            tangents = tangents + scales * self._operand_rates(reach)
            error = cols.gather(use_ulps * tangents) + cols.summing_uses * cols.gather(tangents)
        total += np.where(self.gradient_rows, (reach * error).sum(axis=1), 0.0)
        if not second_order:  # second order: an adjoint's rounding carried along paths that cancel
            # exactly (x / x) is rounded again at each step, and leaves that much behind
            residue = self._reach(paths=True) * error
            total += np.where(self.gradient_rows, EPS * len(self.graph.nodes) * residue.sum(axis=1), 0.0)
        if second_order and full:
            total += self._tangent_rounding(float32)
        per_role = unit * total.reshape(self.k, self.copies).T
        return EntryBounds(forward=per_role[self.e_in :], grads=per_role[: self.e_in])

    def _ulps(self, float32: bool) -> tuple[np.ndarray, np.ndarray]:
        """Per node column, its op's accuracy with the terms its result sums (0 for inputs); per
        use column, the accuracy of that contribution with the terms it sums."""
        cols = self._columns()
        value = np.zeros(cols.n_node)
        for i in self.live:
            node = self.graph.nodes[i - self.graph.n_inputs]
            ulps = REGISTRY[node.op].accuracy.ulps(float32)[0] + 0.5 * (self._terms(node, i)[0] - 1)
            value[cols.node[i] : cols.node[i + 1]] = ulps
        use = np.zeros(cols.n_use)
        for u, item in enumerate(self.uses):
            node = self.graph.nodes[item.consumer]
            grads = REGISTRY[node.op].accuracy.ulps(float32)[1]
            ulps = grads[min(item.position, len(grads) - 1)]
            ulps += 0.5 * (self._terms(node, self.graph.n_inputs + item.consumer)[1][item.position] - 1)
            use[cols.use[u] : cols.use[u + 1]] = ulps
        return value, use

    def _value_scales(self) -> np.ndarray:
        """Per node column, the size its rounding is relative to: its value's, the terms' it sums
        (linear ops), or its op's rule (0 for inputs)."""
        return self._node_matrix(
            {i: self._value_scale(self.graph.nodes[i - self.graph.n_inputs], i) for i in self.live}
        )

    def _use_scales(self, sizes: np.ndarray) -> np.ndarray:
        """Per use column, the size its contribution rounds relative to (`_use_scale`)."""
        cols = self._columns()
        scales = sizes.copy()
        for u, use in enumerate(self.uses):
            if (
                use.consumer in self.shadow_grads
                or REGISTRY[self.graph.nodes[use.consumer].op].accuracy.grad_scale
            ):
                scales[:, cols.use[u] : cols.use[u + 1]] = self._use_scale(
                    use, sizes[:, cols.use[u] : cols.use[u + 1]]
                )
        return scales

    def _reach(self, paths: bool = False) -> np.ndarray:
        """Per node column, |d node element / d (the copy's input entry)| (`paths`: path by path):
        inputs one-hot."""
        cols = self._columns()
        reach = self._node_matrix(self._jacobian(paths))
        for j in range(self.graph.n_inputs):
            reach[:, cols.node[j] : cols.node[j + 1]] = self._one_hot(j)
        return reach

    def _value_scale(self, node: OpNode, i: int) -> np.ndarray:
        """The size a node's rounding is relative to: its value's, the terms' it sums (linear
        ops), or its op's rule."""
        spec = REGISTRY[node.op]
        c = i - self.graph.n_inputs
        if c in self.shadows:
            return np.abs(self._flat(self.shadows[c][1]))
        if spec.accuracy.scale is not None:
            args = node.operands(self.nodes, torch_constant)
            scale = spec.accuracy.scale(args, node.attr, self.raw[i].detach())
            return np.abs(self._flat(torch.broadcast_to(scale, self.raw[i].shape)))
        return np.abs(self._flat(self.raw[i]))

    def _operand_rates(self, reach: np.ndarray) -> np.ndarray:
        """Per use column, the sum over its op's operands of the fastest relative rate of their
        elements (`_relative_rates`)."""
        cols = self._columns()
        rates = self._relative_rates(reach)
        fastest = {
            i: rates[:, cols.node[i] : cols.node[i + 1]].max(axis=1) for i in {u.node for u in self.uses}
        }
        by_consumer: dict[int, np.ndarray] = {}
        for use in self.uses:
            by_consumer[use.consumer] = by_consumer.get(use.consumer, 0.0) + fastest[use.node]
        out = np.zeros((self.b, cols.n_use))
        for u, use in enumerate(self.uses):
            out[:, cols.use[u] : cols.use[u + 1]] = by_consumer[use.consumer][:, None]
        return out

    def _relative_rates(self, reach: np.ndarray) -> np.ndarray:
        """Per node column, how fast the node moves along the direction relative to its size:
        sum over input entries e of |d n / d x_e| |v_e|, over |n| (|n| at least `RATE_FLOOR`)."""
        cols = self._columns()
        weights = np.concatenate(
            [np.abs(np.asarray(v, dtype=np.float64)).reshape(self.k, -1) for v in self.direction], axis=1
        )  # (K, e_in): |v| per input entry
        by_entry = reach.reshape(self.k, self.copies, cols.n_node)[:, : self.e_in]
        rates = np.repeat(np.einsum("ken,ke->kn", by_entry, weights), self.copies, axis=0)
        values = np.concatenate([np.abs(self._flat(r)) for r in self.raw], axis=1)
        return rates / np.maximum(values, RATE_FLOOR)

    def _tangent_rounding(self, float32: bool) -> np.ndarray:
        """Each tangent dn/dx . v phi's backward pass carries, rounded like n's value and its
        derivative, through d gradient entry / d n: per copy."""
        total = np.zeros(self.b)
        weights = np.concatenate(
            [np.abs(np.asarray(v, dtype=np.float64)).reshape(self.k, -1) for v in self.direction], axis=1
        )  # (K, e_in): |v| per input entry
        gradient_sensitivity = self._pass("gradient")[0]
        jacobian = self._jacobian()
        for i in self.live:
            node = self.graph.nodes[i - self.graph.n_inputs]
            value_ulps, grad_ulps = REGISTRY[node.op].accuracy.ulps(float32)
            ulps = value_ulps + max(grad_ulps, default=0.0)
            sensitivity = gradient_sensitivity.get(i)
            if ulps == 0 or sensitivity is None:
                continue
            reach = jacobian[i].reshape(self.k, self.copies, -1)[:, : self.e_in]  # (k, e_in, size)
            tangent = np.einsum("kes,ke->ks", reach, weights)  # sum_e |dn/dx_e| |v_e|
            tangent = np.repeat(tangent, self.copies, axis=0)
            total += ulps * (tangent * np.abs(self._flat(sensitivity))).sum(axis=1)
        return total

    def _use_scale(self, use: Use, magnitude: np.ndarray) -> np.ndarray:
        """The size a use's contribution rounds relative to: its own (summed over broadcast
        elements), the terms' a linear op's backward sums, or its op's rule."""
        node = self.graph.nodes[use.consumer]
        spec = REGISTRY[node.op]
        shadow = self.shadow_grads.get(use.consumer)
        if shadow is not None:
            g = shadow[use.position]
            if g is None:
                return np.zeros((self.b, self.sizes[use.node]))
            return self._flat(self._reduced(g.abs(), use.node))
        if spec.accuracy.grad_scale is not None:
            i = self.graph.n_inputs + use.consumer
            args = node.operands(self.nodes, torch_constant)
            adjoint = self.adjoints[i].detach()
            scale = spec.accuracy.grad_scale(args, node.attr, self.raw[i].detach(), adjoint)[use.position]
            return self._flat(self._reduced(torch.broadcast_to(scale.abs(), use.alias.shape), use.node))
        return magnitude

    def _terms(self, node: OpNode, i: int) -> tuple[int, tuple[int, ...]]:
        """How many terms a result entry of node i sums, and each operand's gradient entry."""
        if not self.tensor:  # scalar ops sum nothing
            return 1, (1,) * node.arity
        spec = REGISTRY[node.op]
        shapes = node.operands(self.shapes, lambda _: ())
        if spec.accuracy.terms is not None:
            return spec.accuracy.terms(shapes, node.attr)
        out = max(self.sizes[i], 1)
        sizes = [max(math.prod(s), 1) for s in shapes]
        if spec.shape is None:  # elementwise: an operand's gradient sums over its broadcast
            return 1, tuple(-(-out // s) for s in sizes)
        forward = max(1, -(-max(sizes) // out))
        return forward, tuple(max(1, -(-out * forward // s)) for s in sizes)


def _paths(total: np.ndarray, by_uses: np.ndarray, by_use_sizes: np.ndarray) -> np.ndarray:
    """|d entry / d node| path by path, per node column: each use's (`by_use_sizes`: the sum of
    its |elements| on the node's), and the rest (`total` less the uses' sum `by_uses`: the rules
    reading the node itself)."""
    return np.abs(total - by_uses) + by_use_sizes
