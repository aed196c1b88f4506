"""How a Tensor takes part in the autograd core: `backward`, `retain_grad` and the `Node` hooks.

`AutogradMethods` is a base of `Tensor`. A pass runs the op's derivative rule on arrays (or, under
`create_graph`, on Tensors); a shared elementwise rule's gradients are summed back to each
input's shape here. `.grad` is filled only for leaves that require grad and for tensors that
called `retain_grad()`, never sharing memory between two `.grad`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from minigrad import autograd
from minigrad.elementary import ARRAYS
from minigrad.grad_mode import switches
from minigrad.op import TensorOp, quietly
from minigrad.tensor_args import _check_seed_shape
from minigrad.tensor_core import Rule, TensorCore
from minigrad.tensor_dispatch import sum_to

if TYPE_CHECKING:  # Self: the Tensor this is a base of (minigrad.tensor imports this module)
    from typing_extensions import Self

    from minigrad.elementwise import Elementwise


class AutogradMethods(TensorCore):
    """The autograd part of `Tensor` (it relies on Tensor's slots and its `_leaf`)."""

    __slots__ = ()

    def backward(self, gradient: Any = None) -> None:
        """Add d(self)/d(leaf) into `.grad` of every leaf that requires grad (seed 1 for a scalar).

        The graph is kept, so calling backward again adds the same gradients once more (torch with
        `retain_graph=True`). Non-leaf tensors get `.grad` only after `retain_grad()`.
        """
        if not self._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        _quiet_pass.on, previous = True, _quiet_pass.on
        try:
            quietly(autograd.backward, [self], [gradient])  # once for the whole pass, not per node
        finally:
            _quiet_pass.on = previous

    def retain_grad(self) -> None:
        """Make backward fill `.grad` of this non-leaf tensor too."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains = True

    def _local_grads(self, g: Any, create_graph: bool) -> Sequence[Any]:
        rule = self._rule
        assert rule is not None  # the core only asks nodes that have inputs
        out: Any
        inputs: Sequence[Any]
        if create_graph:
            if isinstance(g, ARRAYS):
                g = self._leaf(np.asarray(g))
            out, inputs = self, self._prev
        else:
            out, inputs = self.data, [p.data for p in self._prev]
        if rule.arithmetic and not _quiet_pass.on:
            grads = quietly(_call_rule, rule, g, out, inputs, self)
        else:
            grads = _call_rule(rule, g, out, inputs, self)
        if switches.anomaly_enabled:
            _check_backward_anomaly(self, g, grads)
        return grads

    # the core's own order, found without the AttributeError that looking for a missing hook raises
    _topological_order = staticmethod(autograd.cleared_order)

    @staticmethod
    def _propagate(order: list[Any], create_graph: bool, into_grad: bool = False) -> bool:
        """The core's propagation (`autograd.propagate`) for a pass on arrays inside
        `Tensor.backward`: the same walk, calling each node's rule directly instead of through
        `_local_grads`, and keeping track of the gradient buffers the pass owns, which a rule may
        overwrite and a sum may go into (see `TensorOp.fresh_grads`). Other passes (`create_graph`,
        anomaly detection, `grad()`) take the core's, which overwrites nothing. `.grad` is left to
        `_accumulate_grads` (so the answer to `into_grad` is always False)."""
        if create_graph or switches.anomaly_enabled or not _quiet_pass.on:
            return autograd.propagate(order, create_graph)
        # nodes whose `_g` only this pass holds: made for them alone by a `fresh_grads` rule, or a
        # sum made here; never a retained node's (it becomes that node's `.grad` as it is)
        owned: set[Any] = set()
        for node in reversed(order):
            g = node._g
            rule = node._rule
            if g is None or rule is None:
                continue
            inputs = node._prev
            out = node.data
            arrays = [p.data for p in inputs]
            if rule.elementwise:
                owns = rule.reuses_grad and node in owned
                grads = _elementwise_grads(rule, g, out, arrays, node._needs, node._params, owns)
            elif rule.reuses_grad:
                grads = rule.backward(g, out, *arrays, needs=node._needs, owned=node in owned, **node._params)
            else:
                grads = rule.backward(g, out, *arrays, needs=node._needs, **node._params)
            fresh = rule.fresh_grads
            for parent, parent_g in zip(inputs, grads):
                if parent_g is None:
                    continue
                old = parent._g
                if old is None:
                    parent._g = parent_g
                    mine = fresh and parent._rule is not None and not parent._retains
                    if mine and type(parent_g) is np.ndarray:
                        # (a leaf's is kept as it is: only a sum there is worth owning; a numpy
                        # scalar cannot be written in place, so only arrays are ever owned)
                        owned.add(parent)
                elif parent in owned and old.shape == parent_g.shape and old.dtype == parent_g.dtype:
                    old += parent_g  # the same sum as `old + parent_g`, into the pass's own array
                else:
                    parent._g = old + parent_g
                    if not parent._retains and type(parent._g) is np.ndarray:
                        owned.add(parent)  # a sum just made
        return False

    @staticmethod
    def _accumulate_grads(order: list[Any]) -> None:
        stored: set[int] = set()  # arrays already handed to a .grad in this pass
        for node in order:
            g = node._g
            if g is None:
                continue
            node._g = None
            if not node._requires_grad or (node._rule is not None and not node._retains):
                continue
            if type(g) is not np.ndarray:
                g = np.asarray(g)
            if g.dtype != node.data.dtype:
                g = g.astype(node.data.dtype)
            owner = id(g if g.base is None else g.base)
            if not g.flags.writeable or owner in stored:
                g = g.copy()  # never let two .grad share memory, nor keep a read-only view
                owner = id(g)
            stored.add(owner)
            if node.grad is None:
                node.grad = node._leaf(g)
            else:
                node.grad.data = node.grad.data + g

    def _seed(self, gradient: Any, create_graph: bool) -> Any:
        if gradient is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (output has shape {self.shape})"
                )
            seed = np.empty(self.data.shape, dtype=self.data.dtype)
            seed.fill(1)  # np.ones is three Python calls (its own, empty and copyto's dispatcher)
        else:
            if create_graph and isinstance(gradient, type(self)):
                _check_seed_shape(gradient.shape, self.shape)
                return gradient.to(self.dtype) if gradient.dtype != self.dtype else gradient
            array = gradient.data if isinstance(gradient, type(self)) else np.asarray(gradient)
            _check_seed_shape(array.shape, self.shape)
            seed = np.array(array, dtype=self.dtype)
        return self._leaf(seed) if create_graph else seed

    def _export_grad(self, g: Any, create_graph: bool) -> Self:
        if not isinstance(g, ARRAYS):
            return g
        g = np.asarray(g)
        return self._leaf(g if g.dtype == self.dtype else g.astype(self.dtype))

    def _zero_grad_like(self, create_graph: bool) -> Self:
        return self._leaf(np.zeros(self.shape, dtype=self.dtype))


def _call_rule(rule: Rule, g: Any, out: Any, inputs: Sequence[Any], node: Any) -> Sequence[Any]:
    """The rule's gradients; a shared elementwise rule's are summed back to each input's shape."""
    if not rule.elementwise:
        return cast("type[TensorOp]", rule).backward(g, out, *inputs, needs=node._needs, **node._params)
    shared = cast("type[Elementwise]", rule)  # the flag is what marks a shared elementwise rule
    return _elementwise_grads(shared, g, out, inputs, node._needs, node._params)


def _elementwise_grads(
    rule: type[Elementwise],
    g: Any,
    out: Any,
    inputs: Sequence[Any],
    needs: tuple[bool, ...],
    params: dict,
    owned: bool = False,
) -> Sequence[Any]:
    """A shared elementwise rule's gradients, each summed back to its input's shape and dtype.
    `owned`: g is the pass's own, for a one-input rule that `reuses_grad` (relu)."""
    if rule.arity == 2:
        grads = rule.backward(g, out, *inputs, needs=needs)
        return [sum_to(grad, x) if need else None for grad, x, need in zip(grads, inputs, needs)]
    if owned:
        (grad,) = rule.backward(g, out, *inputs, owned=True, **params)
    else:
        (grad,) = rule.backward(g, out, *inputs, **params)  # PowConst's exponent c
    return (sum_to(grad, inputs[0]),)  # one input: the core only asks when it needs a gradient


class _QuietPass:
    """`on` while Tensor.backward runs a whole pass inside one np.errstate (grad() passes don't)."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False


_quiet_pass = _QuietPass()


def _has_nan(x: Any) -> bool:
    array = np.asarray(x) if isinstance(x, ARRAYS) else x.data
    return array.dtype.kind == "f" and bool(np.isnan(array).any())


def check_forward_anomaly(rule: Rule, out: np.ndarray, inputs: tuple[Any, ...]) -> None:
    if _has_nan(out) and not any(_has_nan(t) for t in inputs):
        shapes = ", ".join(str(t.shape) for t in inputs)
        raise RuntimeError(
            f"detect_anomaly: forward of '{rule.name}' with input shapes ({shapes}) returned nan"
        )


def _check_backward_anomaly(node: Any, g: Any, grads: Sequence[Any]) -> None:
    if _has_nan(g):
        return
    for index, grad in enumerate(grads):
        if grad is not None and _has_nan(grad):
            assert node._rule is not None
            shapes = ", ".join(str(p.shape) for p in node._prev)
            raise RuntimeError(
                f"detect_anomaly: backward of '{node._rule.name}' with input shapes ({shapes}) returned "
                f"nan in its gradient for input {index}"
            )
