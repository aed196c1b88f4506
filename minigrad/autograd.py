"""The autograd core shared by `Value` and `Tensor`: topological order, the backward pass, `grad`.

A node is any object with the attributes of `Node` below. The core knows nothing about floats or
arrays: each engine says how to compute its local gradients, how to seed an output and how to
store a finished gradient. Gradients flow through the `_g` slot of each node during one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from minigrad.grad_mode import switches


class Node(Protocol):
    """What the core needs from a graph node (`Value` and `Tensor` implement it)."""

    _g: Any

    @property
    def _prev(self) -> Sequence[Node]:
        """The nodes this one was computed from (empty for a leaf)."""
        ...

    def _local_grads(self, g: Any, create_graph: bool) -> Sequence[Any]:
        """Gradients of the final output w.r.t. each of `_prev`, given this node's gradient `g`."""
        ...

    @staticmethod
    def _accumulate_grads(order: list[Node]) -> None:
        """Add each node's finished `_g` into its user-visible `.grad`, and clear `_g`."""
        ...

    def _seed(self, gradient: Any, create_graph: bool) -> Any:
        """The starting gradient for this node as an output (`gradient` None means implicit)."""
        ...

    def _export_grad(self, g: Any, create_graph: bool) -> Any:
        """Turn a pass's internal gradient into what `grad()` returns."""
        ...

    def _zero_grad_like(self, create_graph: bool) -> Any:
        """A zero gradient of this node's shape, for `materialize_grads`."""
        ...


_PLACE = object()  # stack marker: the node just below it has all of its inputs placed


def topological_order(roots: Iterable[Node]) -> list[Node]:
    """Every node the roots depend on, each after all of its inputs; iterative, so depth is free.

    Depth-first with an explicit stack: a node seen for the first time goes back on the stack under
    a `_PLACE` marker with its inputs above it, so it is placed once they all are; a leaf is placed
    at once.
    """
    order: list[Node] = []
    seen: set[Node] = set()
    stack: list[Any] = list(roots)  # nodes, and the `_PLACE` markers between them
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is _PLACE:
            order.append(pop())
        elif node not in seen:
            seen.add(node)
            prev = node._prev
            if prev:
                push(node)
                push(_PLACE)
                stack.extend(prev)
            else:
                order.append(node)
    return order


def propagate(order: list[Node], create_graph: bool, into_grad: bool = False) -> bool:
    """Walk `order` backwards, pushing each node's `_g` into its inputs' `_g` (summing reuse).

    Returns whether it also stored the gradients into `.grad` (an engine's own walk may, when asked
    with `into_grad`; this one never does, `backward` then calls `_accumulate_grads`)."""
    for node in reversed(order):
        g = node._g
        prev = node._prev
        if g is None or not prev:
            continue
        for parent, parent_g in zip(prev, node._local_grads(g, create_graph)):
            if parent_g is not None:
                old = parent._g
                parent._g = parent_g if old is None else old + parent_g
    return False


def cleared_order(roots: Iterable[Node], create_graph: bool) -> list[Node]:
    """The topological order with every node's `_g` cleared for a new pass."""
    order = topological_order(roots)
    for node in order:
        node._g = None
    return order


def _run(
    outputs: Sequence[Node], gradients: Sequence[Any], create_graph: bool, into_grad: bool = False
) -> tuple[list[Node], bool]:
    """One backward pass from `outputs`; returns the order, with `_g` filled in (caller clears it)
    unless the walk stored the gradients into `.grad` itself (the second value), as asked by
    `into_grad`."""
    if len(gradients) != len(outputs):
        raise ValueError(
            f"backward: got {len(gradients)} gradients for {len(outputs)} outputs; "
            "pass one gradient per output (or None)"
        )
    engine = type(outputs[0])  # an engine may bring its own, faster, versions of the two walks
    order = getattr(engine, "_topological_order", cleared_order)(outputs, create_graph)
    walk = getattr(engine, "_propagate", propagate)
    previous = switches.grad_enabled
    if not create_graph:
        switches.grad_enabled = False  # the pass computes numbers, it records no graph
    try:
        for output, gradient in zip(outputs, gradients):
            seed = output._seed(gradient, create_graph)
            output._g = seed if output._g is None else output._g + seed
        stored = walk(order, create_graph, into_grad)
    except BaseException:  # a failed pass leaves no gradient buffer behind for the next one
        for node in order:
            node._g = None
        raise
    finally:
        switches.grad_enabled = previous
    return order, stored


def backward(outputs: Sequence[Node], gradients: Sequence[Any] | None = None) -> None:
    """Add d(outputs)/d(node) into `.grad` of every node the outputs depend on.

    The graph is kept, so backward may run again on it; gradients then accumulate, as in torch
    with `retain_graph=True`.
    """
    previous, switches.closures_allowed = switches.closures_allowed, True
    try:
        order, stored = _run(outputs, gradients or [None] * len(outputs), create_graph=False, into_grad=True)
    finally:
        switches.closures_allowed = previous
    if not stored:
        type(outputs[0])._accumulate_grads(order)


def grad(
    outputs: Node | Sequence[Node],
    inputs: Node | Sequence[Node],
    grad_outputs: Any | Sequence[Any] | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Gradients of `outputs` w.r.t. `inputs`, returned instead of stored (like torch.autograd.grad).

    With `create_graph=True` the gradients are graph nodes themselves, so they can be
    differentiated again for second and higher derivatives. `.grad` is never touched.
    """
    output_list = _as_node_list(outputs)
    input_list = _as_node_list(inputs)
    if grad_outputs is None:
        seeds: list[Any] = [None] * len(output_list)
    elif isinstance(grad_outputs, (list, tuple)) and (
        not _is_node(outputs) or (len(grad_outputs) == 1 and _is_node(grad_outputs[0]))
    ):
        seeds = list(grad_outputs)
    else:
        seeds = [grad_outputs]
    previous, switches.closures_allowed = switches.closures_allowed, False
    try:
        order, _ = _run(output_list, seeds, create_graph)
    finally:
        switches.closures_allowed = previous
    try:
        results = []
        for index, node in enumerate(input_list):
            g = node._g
            if g is None:
                if materialize_grads:
                    results.append(node._zero_grad_like(create_graph))
                    continue
                if not allow_unused:
                    raise RuntimeError(
                        f"grad: input {index} ({node!r}) was not used to compute the outputs; "
                        "pass allow_unused=True to get None for it"
                    )
                results.append(None)
            else:
                results.append(node._export_grad(g, create_graph))
        return tuple(results)
    finally:
        for node in order:
            node._g = None


def _is_node(obj: Any) -> bool:
    return hasattr(obj, "_local_grads")


def _as_node_list(obj: Any) -> list[Node]:
    items = [obj] if _is_node(obj) else list(obj)
    for item in items:
        if not _is_node(item):
            raise TypeError(f"grad: expected Value or Tensor outputs and inputs, got {type(item).__name__}")
    return items
