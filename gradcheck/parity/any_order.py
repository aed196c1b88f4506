"""The rounding bound of any correct evaluation: how far a float64 evaluation of a graph's outputs
and cotangent-weighted gradients can sit from the exact values, whatever order it sums in and
whichever accurate formula it uses for each op and each local derivative.

`parity.bound` bounds *torch's* evaluation: its order of accumulation, its formulas, its
intermediate magnitudes. An engine that applies the same chain rule another way rounds
differently: a backward that sums over paths adds up path products whose sizes can dwarf the
result; a division through the reciprocal leaves an ulp where torch's contributions cancel to an
exact 0. This module bounds every such evaluation at once, by a running error analysis over
absolute values (Higham, "Accuracy and Stability of Numerical Algorithms", 2002, ch. 3-4):

- forward: a node's error is its operands' errors through the absolute local Jacobians, plus its
  own rounding: its op's accuracy in ulps (`OpSpec.accuracy`, plus `FORMULA_ULPS` for a formula
  other than the measured ones) of its scale, and (terms - 1) / 2 ulps of the sum of the terms'
  sizes for an op that sums (any order: Higham's (n - 1) u sum |x_i|);
- backward: each contribution adjoint x local derivative errs by the adjoint's error through the
  absolute Jacobian, by the derivative's own rounding (its op's gradient accuracy, relative to the
  sizes of the terms its vector-Jacobian product sums), and by the operands' forward errors
  through the op's second derivatives (a derivative computed from rounded values), or through the
  result's rounding for a derivative computed from the result (tanh' as 1 - t^2); a node's
  contributions sum in any order ((uses - 1) / 2 ulps of the sum of their sizes);
- with `accumulation="paths"` (an engine whose backward recurses down every path and adds path
  products at the leaves), each product is rounded at the size of its own path's terms, and each
  input's gradient sums as many terms as there are paths to it.

Everything is first order in the unit roundoff and uses no signed cancellation, so an exact
cancellation (x / x, softmax over one element, (v / v) / (v / v)) keeps the allowance of its
terms. The bound is of one evaluation against the exact value, not of the difference of two.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.ir import Graph, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes, pad
from gradcheck.parity.torch_reference import batched_reference_rule, reference_rule, torch_constant

EPS = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
# How many ulps worse than the measured spellings (`OpSpec.accuracy`) another accurate formula for
# an op or its derivative may be (1 / cosh(x) ** 2 for tanh', exp(-x) / (1 + exp(-x)) ** 2 for
# sigmoid', a * b ** -1 for a / b): a formula worse than that is no longer accurate.
FORMULA_ULPS = 1.0
ACCUMULATIONS = ("nodes", "paths")
# How fast a unary op's derivative moves with its rounded result, where the derivative computed
# from that result vanished with its slope: |d(1 - t^2)/dt| = 2 |t| <= 2 (tanh), |1 - 2s| <= 1
# (sigmoid), and an exact derivative below the result's rounding gives no more than this.
SATURATED_SLOPE = 2.0


@dataclass
class AnyOrderBounds:
    """Per point (columns): each flattened output entry's bound (`forward`, (F, K)) and each
    flattened cotangent-weighted input gradient entry's (`grads`, (N, K)), in absolute terms."""

    forward: np.ndarray
    grads: np.ndarray


def any_order_bounds(
    graph: Graph, batch: Sequence[Any], cotangent: Any, accumulation: str = "nodes", float32: bool = False
) -> AnyOrderBounds:
    """The bounds at K points: `batch` holds each input's values, (K,) or (K, *shape);
    `cotangent` each output's weights ((n_out, K) for a scalar graph, a list of (K, *shape) for a
    tensor graph). `accumulation`: "nodes" (every node's adjoint sums its contributions, in any
    order) or "paths" (the gradient of each input sums one product per path to it). `float32`:
    the bound of a float32 evaluation (float32's unit and the ops' float32 accuracies,
    `Accuracy.ulps`) at these inputs, which should then be float32 numbers; still computed in
    float64, and blind to float32's narrower range (a value that overflows float32 is not
    foreseen)."""
    if accumulation not in ACCUMULATIONS:
        raise ValueError(
            f"any_order_bounds: accumulation must be one of {ACCUMULATIONS}, got {accumulation!r}"
        )
    if not graph.is_tensor:  # elementwise throughout: all K points in one pass
        values = [torch.from_numpy(np.array(b, dtype=np.float64)) for b in batch]
        cot = [torch.from_numpy(np.array(c, dtype=np.float64)) for c in cotangent]
        forward, grads = _Analysis(graph, values, cot, accumulation, tensor=False, float32=float32).bounds()
        return AnyOrderBounds(np.stack(forward), np.stack(grads))
    k = int(np.shape(batch[0])[0])
    shapes = graph_shapes(graph)
    columns = []
    for p in range(k):  # one point at a time: the dense ops' Jacobians are per point
        values = [
            pad(torch.from_numpy(np.array(b[p : p + 1], dtype=np.float64)), s) for b, s in zip(batch, shapes)
        ]
        cot = [
            pad(torch.from_numpy(np.array(c[p : p + 1], dtype=np.float64)), shapes[o])
            for c, o in zip(cotangent, graph.outputs)
        ]
        forward, grads = _Analysis(graph, values, cot, accumulation, tensor=True, float32=float32).bounds()
        columns.append(
            (np.concatenate([f.reshape(-1) for f in forward]), np.concatenate([g.reshape(-1) for g in grads]))
        )
    return AnyOrderBounds(
        np.stack([f for f, _ in columns], axis=1), np.stack([g for _, g in columns], axis=1)
    )


@dataclass
class _Use:
    """Operand `position` of an op node reads node `node`: its local derivative, either `diagonal`
    (elementwise ops: per element of the result, with `second[q]` the derivative of it with
    respect to operand use q, per element) or `dense` ((result size, operand size), with
    `second[q]` (result size, operand size, size of use q's node))."""

    node: int
    position: int
    diagonal: Any = None
    dense: Any = None
    second: dict[int, Any] = field(default_factory=dict)


class _Analysis:
    """The running error analysis of one graph (scalar graphs: K points at once; tensor graphs:
    one point, in the padded layout with a batch of 1)."""

    def __init__(
        self,
        graph: Graph,
        values: list[Any],
        cot: list[Any],
        accumulation: str,
        tensor: bool,
        float32: bool = False,
    ) -> None:
        self.graph, self.tensor, self.paths = graph, tensor, accumulation == "paths"
        self.float32, self.unit = float32, EPS32 if float32 else EPS
        self.n_in = graph.n_inputs
        self.shapes = graph_shapes(graph) if tensor else [()] * (self.n_in + len(graph.nodes))
        self.values: list[Any] = list(values)
        self.uses: dict[int, list[_Use]] = {}
        self.roundings: dict[int, Any] = {}
        # per node of a backward-stable op (`Accuracy.backward_stable`), its operands' own rounding
        # as such a spelling may take it: position -> ulps of |operand|
        self.unsteady: dict[int, dict[int, Any]] = {}
        self.operands: dict[int, list[Any]] = {}
        self._pending: list[tuple[int, list[int], list[Any], Any]] = []  # elementwise nodes' aliases
        for c, node in enumerate(graph.nodes):
            self._node(self.n_in + c, node)
        self._diagonals()
        self.cot = cot

    # --- each node's value, local derivatives and own rounding --------------------------------------

    def _node(self, i: int, node: OpNode) -> None:
        spec = REGISTRY[node.op]
        args = node.operands(self.values, torch_constant)
        ids = node.operands(list(range(len(self.values))), lambda _: None)
        rule = batched_reference_rule(node.op) if self.tensor else reference_rule(node.op)
        live = [p for p, a in enumerate(ids) if a is not None]
        self.operands[i] = args
        if self.tensor and spec.shape is not None:
            with torch.no_grad():
                out = self._padded(rule(list(args), node.attr), i)
            self.uses[i] = self._dense(i, node, rule, args, ids, live)
        else:  # elementwise: each operand read through a copy broadcast to the result's shape
            with torch.no_grad():
                shape = self._padded(rule(list(args), node.attr), i).shape
            aliases = list(args)
            for p in live:
                aliases[p] = args[p].detach().expand(shape).clone().requires_grad_()
            result = rule(aliases, node.attr)
            out = result.detach()
            self.uses[i] = [_Use(ids[p], p) for p in live]
            self._pending.append((i, live, aliases, result))
        self.values.append(out)
        self.roundings[i] = self._rounding(i, node, args, out)
        if spec.accuracy.backward_stable:
            ulps = spec.accuracy.ulps(self.float32)[0] + FORMULA_ULPS
            self.unsteady[i] = {p: self.unit * ulps * args[p].abs() for p in live}

    def _padded(self, out: Any, i: int) -> Any:
        """A tensor op's result in the padded layout its consumers read (scalar graphs: as it is)."""
        return pad(out, self.shapes[i]) if self.tensor else out

    def _diagonals(self) -> None:
        """Every elementwise node's derivatives, per element of its result, in one backward pass
        (each node reads its own copies of its operands), and their derivatives in one more per
        operand position."""
        pending = [(i, live, aliases, r) for i, live, aliases, r in self._pending if r.requires_grad]
        wrt = [aliases[p] for _, live, aliases, _ in pending for p in live]
        if not wrt:
            pending = []
        first = iter(
            ()
            if not pending
            else torch.autograd.grad(
                sum(r.sum() for *_, r in pending), wrt, create_graph=True, allow_unused=True
            )
        )
        derivatives: dict[tuple[int, int], Any] = {}
        for i, live, _, result in pending:
            for p in live:
                d = next(first)
                derivatives[i, p] = torch.zeros_like(result) if d is None else d
        for position in range(max((len(live) for _, live, _, _ in pending), default=0)):
            moving = [d for (i, p), d in derivatives.items() if p == position and d.requires_grad]
            if not moving:
                continue
            second = iter(
                torch.autograd.grad(sum(d.sum() for d in moving), wrt, retain_graph=True, allow_unused=True)
            )
            for i, live, _, _ in pending:
                for q in live:
                    h = next(second)
                    if h is not None and position in live:
                        self._use_of(i, position).second[q] = h.detach()
        for (i, p), d in derivatives.items():
            self._use_of(i, p).diagonal = d.detach()
        for i, _, _, result in self._pending:  # a result that reads no operand's value: slope 0
            for use in self.uses[i]:
                if use.diagonal is None:
                    use.diagonal = torch.zeros_like(result.detach())

    def _use_of(self, i: int, position: int) -> _Use:
        return next(u for u in self.uses[i] if u.position == position)

    def _dense(
        self, i: int, node: OpNode, rule: Any, args: list[Any], ids: list[Any], live: list[int]
    ) -> list[_Use]:
        """A tensor op's Jacobian and second derivatives, as matrices over flattened elements."""
        base = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]

        def f(*xs: Any) -> Any:
            operands = list(base)
            for p, x in zip(live, xs):
                operands[p] = x
            return self._padded(rule(operands, node.attr), i)

        xs = [base[p] for p in live]
        argnums = tuple(range(len(xs)))
        jacobian = torch.func.jacrev(f, argnums=argnums)(*xs)
        hessian = torch.func.jacfwd(torch.func.jacrev(f, argnums=argnums), argnums=argnums)(*xs)
        out_size = math.prod(f(*xs).shape)
        uses = []
        for u, p in enumerate(live):
            size = xs[u].numel()
            second = {q: hessian[u][v].reshape(out_size, size, xs[v].numel()) for v, q in enumerate(live)}
            uses.append(_Use(ids[p], p, dense=jacobian[u].reshape(out_size, size), second=second))
        return uses

    def _rounding(self, i: int, node: OpNode, args: list[Any], out: Any) -> Any:
        """The node's own rounding: its op's accuracy (plus another formula's slack and the
        terms it sums, (n - 1) / 2 ulps) times its scale."""
        spec = REGISTRY[node.op]
        accuracy = spec.accuracy
        terms = self._terms(node, i)[0]
        ulps = accuracy.ulps(self.float32)[0] + FORMULA_ULPS + 0.5 * (terms - 1)
        scale = out.abs()
        if accuracy.linear:  # the terms' sizes: the op on absolute operands
            absolute = [a.abs() if isinstance(a, torch.Tensor) else abs(a) for a in args]
            rule = batched_reference_rule(node.op) if self.tensor else reference_rule(node.op)
            with torch.no_grad():
                scale = torch.maximum(scale, rule(absolute, node.attr).reshape(out.shape))
        if accuracy.scale is not None:
            with torch.no_grad():
                rule_scale = accuracy.scale(args, node.attr, out).abs()
            scale = torch.maximum(scale, rule_scale.reshape(out.shape))
        return self.unit * ulps * scale

    def _terms(self, node: OpNode, i: int) -> tuple[int, tuple[int, ...]]:
        """How many terms a result entry sums, and each operand's gradient entry (`Accuracy.terms`)."""
        if not self.tensor:
            return 1, (1,) * node.arity
        spec = REGISTRY[node.op]
        shapes = node.operands(self.shapes, lambda _: ())
        if spec.accuracy.terms is not None:
            return spec.accuracy.terms(shapes, node.attr)
        out = max(math.prod(self.shapes[i]), 1)
        sizes = [max(math.prod(s), 1) for s in shapes]
        if spec.shape is None:
            return 1, tuple(-(-out // s) for s in sizes)
        forward = max(1, -(-max(sizes) // out))
        return forward, tuple(max(1, -(-out * forward // s)) for s in sizes)

    # --- the passes ----------------------------------------------------------------------------------

    def bounds(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Each output's forward bound and each input's gradient bound (numpy, per element)."""
        errors = self._forward_errors()
        grads = self._gradient_errors(errors)
        forward = [self._plain(errors[o]) for o in self.graph.outputs]
        return forward, [self._plain(g) for g in grads]

    def _forward_errors(self) -> list[Any]:
        """Every node's forward error bound: operands' errors through |J|, plus its rounding."""
        errors: list[Any] = [torch.zeros_like(v) for v in self.values[: self.n_in]]
        for i in range(self.n_in, len(self.values)):
            total = self.roundings[i].clone()
            for use in self.uses[i]:
                total = total + self._forward_abs(use, self._error_of(i, use, errors), total.shape)
                for other in self.uses[i]:  # second order: where the first-order terms vanish (x^2 at 0)
                    total = total + 0.5 * self._curvature(i, use, other, errors, total.shape)
            errors.append(total)
        return errors

    def _error_of(self, i: int, use: _Use, errors: list[Any]) -> Any:
        """How far node i's operand `use` may be from its exact value as i's op reads it: its
        forward error, and for a backward-stable op its own rounding too."""
        unsteady = self.unsteady.get(i)
        if unsteady is None:
            return errors[use.node]
        return errors[use.node] + unsteady[use.position]

    def _curvature(self, i: int, use: _Use, other: _Use, errors: list[Any], shape: Any) -> Any:
        """|d^2 result / d operand d other| error(operand) error(other): the second-order term
        of the result's error."""
        h = use.second.get(other.position)
        if h is None:
            return torch.zeros(shape, dtype=torch.float64)
        e, f = self._error_of(i, use, errors), self._error_of(i, other, errors)
        if use.diagonal is not None:
            return h.abs() * e * f
        return torch.einsum("iab,a,b->i", h.abs(), e.reshape(-1), f.reshape(-1)).reshape(shape)

    def _gradient_errors(self, errors: list[Any]) -> list[Any]:
        """Each input's gradient error bound, by a reverse pass over absolute values (see the
        module docstring)."""
        n = len(self.values)
        adjoint: list[Any] = [torch.zeros_like(v) for v in self.values]  # the chain rule's own
        absolute: list[Any] = [torch.zeros_like(v) for v in self.values]  # |adjoint| path by path
        error: list[Any] = [torch.zeros_like(v) for v in self.values]
        term_sizes: list[Any] = [torch.zeros_like(v) for v in self.values]
        terms: list[Any] = [torch.zeros_like(v) for v in self.values]
        for o, c in zip(self.graph.outputs, self.cot):
            seed = c.reshape(self.values[o].shape) if self.tensor else c
            adjoint[o] = adjoint[o] + seed
            absolute[o] = absolute[o] + seed.abs()
            term_sizes[o] = term_sizes[o] + seed.abs()
            terms[o] = terms[o] + 1.0
        for i in range(n - 1, self.n_in - 1, -1):
            # node i's adjoint is complete: its contributions summed in any order
            if not self.paths:
                error[i] = error[i] + 0.5 * self.unit * (terms[i] - 1.0).clamp(min=0.0) * term_sizes[i]
            weight = absolute[i] if self.paths else adjoint[i].abs()
            node = self.graph.nodes[i - self.n_in]
            spec = REGISTRY[node.op]
            grad_ulps = spec.accuracy.ulps(self.float32)[1]
            sums = self._terms(node, i)[1]
            scales = self._grad_scales(node, i, adjoint[i])
            for use in self.uses[i]:
                a = use.node
                sizes = self._backward_abs(use, weight, self.values[a].shape)
                ulps = grad_ulps[min(use.position, len(grad_ulps) - 1)] + FORMULA_ULPS
                ulps += 0.5 * (sums[min(use.position, len(sums) - 1)] - 1)
                scale = sizes if scales is None else torch.maximum(sizes, self._to(scales[use.position], a))
                own = self.unit * ulps * scale
                carried = self._backward_abs(use, error[i], self.values[a].shape)
                moved = self._second(use, weight, errors, i)
                error[a] = error[a] + carried + own + moved
                adjoint[a] = adjoint[a] + self._backward(use, adjoint[i], self.values[a].shape)
                absolute[a] = absolute[a] + self._backward_abs(use, absolute[i], self.values[a].shape)
                term_sizes[a] = term_sizes[a] + self._backward_abs(
                    use, adjoint[i].abs(), self.values[a].shape
                )
                terms[a] = terms[a] + 1.0
        grads = []
        for j in range(self.n_in):
            e = error[j]
            if self.paths:
                count = self._path_counts()[j]
                e = e + 0.5 * self.unit * max(count - 1, 0) * absolute[j]
            else:
                e = e + 0.5 * self.unit * (terms[j] - 1.0).clamp(min=0.0) * term_sizes[j]
            grads.append(e)
        return grads

    def _grad_scales(self, node: OpNode, i: int, adjoint: Any) -> tuple[Any, ...] | None:
        """The op's own rule for the size its contributions round relative to (`Accuracy.grad_scale`)."""
        rule = REGISTRY[node.op].accuracy.grad_scale
        if rule is None:
            return None
        with torch.no_grad():
            return rule(self.operands[i], node.attr, self.values[i], adjoint)

    def _second(self, use: _Use, weight: Any, errors: list[Any], i: int) -> Any:
        """How far use's contribution moves when the op's operands (and, for a derivative computed
        from the result, the result) carry their forward errors: sum over operand uses q of
        sum over result elements of |weight| |d^2 result / d operand d q| error(q)."""
        shape = self.values[use.node].shape
        total = torch.zeros(shape, dtype=torch.float64)
        for q_use in self.uses[i]:
            h = use.second.get(q_use.position)
            if h is None:
                continue
            e = self._error_of(i, q_use, errors)
            if use.diagonal is not None:
                moved = (
                    weight.abs() * h.abs() * e.expand(h.shape)
                    if e.shape != h.shape
                    else weight.abs() * h.abs() * e
                )
                total = total + self._reduce(moved, shape)
            else:
                w = weight.abs().reshape(-1)
                total = total + torch.einsum("i,iab,b->a", w, h.abs(), e.reshape(-1)).reshape(shape)
        if use.diagonal is not None and len(self.uses[i]) == 1:  # a unary op: d as a function of its result
            d, h = use.diagonal, use.second.get(use.position)
            if h is not None:
                # where d and its slope both vanish the formula saturated (1 - t^2 at t = 1.0,
                # 1 / (1 + x^2) at x^2 = inf): the exact derivative is not 0 but below the
                # result's rounding, which moves it by SATURATED_SLOPE times that rounding
                saturated = torch.full_like(d, SATURATED_SLOPE)
                vanished = torch.where(h == 0, saturated, torch.zeros_like(d))
                ratio = torch.where(d != 0, h.abs() / d.abs().clamp(min=1e-300), vanished)
                total = total + self._reduce(weight.abs() * ratio * self.roundings[i], shape)
        return total

    # --- absolute Jacobians ---------------------------------------------------------------------------

    def _forward_abs(self, use: _Use, e: Any, shape: Any) -> Any:
        """|J| e: an operand's error carried into the result."""
        if use.diagonal is not None:
            return use.diagonal.abs() * e
        return (use.dense.abs() @ e.reshape(-1)).reshape(shape)

    def _backward(self, use: _Use, w: Any, shape: Any) -> Any:
        """J^T w: a result-shaped adjoint carried back onto the operand (the chain rule)."""
        if use.diagonal is not None:
            return self._reduce(use.diagonal * w, shape)
        return (use.dense.T @ w.reshape(-1)).reshape(shape)

    def _backward_abs(self, use: _Use, w: Any, shape: Any) -> Any:
        """|J|^T w: a result-shaped size carried back onto the operand."""
        if use.diagonal is not None:
            return self._reduce(use.diagonal.abs() * w, shape)
        return (use.dense.abs().T @ w.reshape(-1)).reshape(shape)

    def _reduce(self, x: Any, shape: Any) -> Any:
        """A result-shaped tensor summed back onto an operand's (broadcast) shape."""
        return x if tuple(x.shape) == tuple(shape) else x.sum_to_size(shape)

    def _to(self, scale: Any, a: int) -> Any:
        shape = self.values[a].shape
        scale = scale.abs()
        return scale if tuple(scale.shape) == tuple(shape) else scale.sum_to_size(shape)

    def _path_counts(self) -> list[float]:
        """How many paths lead from the outputs to each input (node by node)."""
        if not hasattr(self, "_paths_cache"):
            counts = [0.0] * len(self.values)
            for o in self.graph.outputs:
                counts[o] += 1.0
            for i in range(len(self.values) - 1, self.n_in - 1, -1):
                for use in self.uses[i]:
                    counts[use.node] += counts[i]
            self._paths_cache = counts
        return self._paths_cache[: self.n_in]

    def _plain(self, x: Any) -> np.ndarray:
        """Per point (scalar graphs: (K,)), or the point's elements flattened (tensor graphs)."""
        array = x.detach().numpy().astype(np.float64)
        return array[0].reshape(-1) if self.tensor else array
