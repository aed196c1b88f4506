"""The backward pass over a graph of `Value`s, written for speed: the core's two loops, specialised.

`autograd` walks any graph through the `Node` protocol (`_prev`, `_local_grads`), two Python calls
per node. A scalar graph is the engine's hot path, so `Value` gives the core these two loops
instead: they read a node's operand slots directly and call the op's derivative rule and nothing
else. Nodes these loops do not know (micrograd-style closures) go through the protocol as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minigrad.autograd import cleared_order, propagate
from minigrad.grad_mode import switches

_PLACE = object()  # stack marker: the node just below it has all of its inputs placed

# The gradient buffer `_g` of a node the walk has reached and nothing has flowed into yet: a zero,
# so that adding to it is right, and an object of its own, so that the first gradient replaces it
# as it is (its type and the sign of a zero kept, as when the buffer was empty).
REACHED = float("0.0")


def topological_order(roots: Iterable[Any], create_graph: bool) -> list[Any]:
    """Every Value the roots depend on, each after its inputs; iterative, so depth is free.

    For a pass on floats each node's gradient buffer `_g` is set to `REACHED` when the node is
    reached, which is also how the walk knows it (outside a pass every `_g` is None). Under
    `create_graph` the buffers start empty (None), as the core's generic walk expects.
    """
    if create_graph:
        return cleared_order(roots, create_graph)
    order: list[Any] = []
    stack = list(roots)
    try:
        _place_in_order(stack, order)
    except BaseException:  # never leave a node marked as reached
        for node in order + stack:
            if node is not _PLACE:
                node._g = None
        raise
    return order


def _place_in_order(stack: list[Any], order: list[Any]) -> None:
    """Depth-first with an explicit stack, as the core's: a node goes back on the stack under a
    `_PLACE` marker with its inputs above it, and is placed once they all are. Constants in the
    operand slots are floats and are skipped; a node whose inputs are all placed (a leaf, or a
    weight times an activation reached before) is placed at once."""
    place = order.append
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is _PLACE:
            place(pop())
            continue
        if node._g is not None:
            continue  # reached already
        node._g = REACHED
        a = node._a
        if a is None:
            if node._rule is None:
                place(node)  # a leaf
            else:
                push(node)
                push(_PLACE)
                stack.extend(node._prev)
            continue
        b = node._b
        visit_a = type(a) is not float and a._g is None
        visit_b = b is not None and type(b) is not float and b._g is None
        if not (visit_a or visit_b):
            place(node)  # a reached input is never still open: a graph has no cycles
            continue
        push(node)
        push(_PLACE)
        if visit_a:
            push(a)
        if visit_b:
            push(b)


def propagate_floats(order: list[Any], create_graph: bool) -> None:
    """Walk `order` backwards adding each node's gradient times its local derivatives into its
    operands' buffers (each starts as `REACHED`, see `topological_order`)."""
    if create_graph or switches.anomaly_enabled:
        propagate(order, create_graph)  # the protocol's loop, which checks each rule's gradients
        return
    _propagate(order)


def _propagate(order: list[Any]) -> None:
    for node in reversed(order):
        a = node._a
        if a is None:
            if node._rule is not None:  # an op made the micrograd way
                _through_protocol(node, node._g)
            continue
        rule = node._rule
        g = node._g
        b = node._b
        if b is None:
            (grad,) = rule.backward(g, node.data, a.data)
            old = a._g
            a._g = grad if old is REACHED else old + grad
        else:
            gradients = rule.gradients if rule.direct else rule.backward
            if type(b) is float:  # a constant on the right: its gradient is dropped
                grad = gradients(g, node.data, a.data, b)[0]
                old = a._g
                a._g = grad if old is REACHED else old + grad
            elif type(a) is float:  # a constant on the left
                grad = gradients(g, node.data, a, b.data)[1]
                old = b._g
                b._g = grad if old is REACHED else old + grad
            else:
                grad_a, grad_b = gradients(g, node.data, a.data, b.data)
                old = a._g
                a._g = grad_a if old is REACHED else old + grad_a
                old = b._g
                b._g = grad_b if old is REACHED else old + grad_b


def _through_protocol(node: Any, g: Any) -> None:
    for parent, grad in zip(node._prev, node._local_grads(g, False)):
        old = parent._g
        parent._g = grad if old is REACHED else old + grad
