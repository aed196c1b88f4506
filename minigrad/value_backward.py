"""The backward pass over a graph of `Value`s, written for speed: the core's two loops, specialised.

`autograd` walks any graph through the `Node` protocol (`_prev`, `_local_grads`), two Python calls
per node. A scalar graph is the engine's hot path, so `Value` gives the core these two loops
instead: they read a node's operand slots directly and call the op's derivative rule and nothing
else. Nodes these loops do not know (micrograd-style closures) go through the protocol as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minigrad.autograd import propagate
from minigrad.grad_mode import switches

_PLACE = object()  # stack marker: the node just below it has all of its inputs placed


def topological_order(roots: Iterable[Any]) -> list[Any]:
    """Every Value the roots depend on, each after its inputs, with `_g` cleared; iterative.

    Depth-first with an explicit stack, as the core's; constants in the operand slots are floats
    and are skipped, leaves are placed at once.
    """
    order: list[Any] = []
    place = order.append
    seen: set[Any] = set()
    visit = seen.add
    stack = list(roots)
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if node is _PLACE:
            place(pop())
            continue
        if node in seen:
            continue
        visit(node)
        node._g = None
        a = node._a
        if a is None:
            if node._rule is None:
                place(node)  # a leaf
            else:
                push(node)
                push(_PLACE)
                stack.extend(node._prev)
            continue
        push(node)
        push(_PLACE)
        b = node._b
        if type(a) is not float and a not in seen:
            push(a)
        if b is not None and type(b) is not float and b not in seen:
            push(b)
    return order


def propagate_floats(order: list[Any], create_graph: bool) -> None:
    """Walk `order` backwards pushing each node's float gradient into its operands' `_g`."""
    if create_graph or switches.anomaly_enabled:
        propagate(order, create_graph)  # the protocol's loop, which checks each rule's gradients
        return
    for node in reversed(order):
        g = node._g
        if g is None:
            continue
        a = node._a
        if a is None:
            if node._rule is not None:  # an op made the micrograd way
                _through_protocol(node, g)
            continue
        rule = node._rule
        b = node._b
        if b is None:
            (grad,) = rule.backward(g, node.data, a.data)
            old = a._g
            a._g = grad if old is None else old + grad
        elif type(b) is float:
            if rule.partials:
                grad = rule.d_a(g, node.data, a.data, b)
            else:
                grad = rule.backward(g, node.data, a.data, b)[0]
            old = a._g
            a._g = grad if old is None else old + grad
        elif type(a) is float:
            if rule.partials:
                grad = rule.d_b(g, node.data, a, b.data)
            else:
                grad = rule.backward(g, node.data, a, b.data)[1]
            old = b._g
            b._g = grad if old is None else old + grad
        else:
            x, y = a.data, b.data
            if rule.partials:
                grad_a, grad_b = rule.d_a(g, node.data, x, y), rule.d_b(g, node.data, x, y)
            else:
                grad_a, grad_b = rule.backward(g, node.data, x, y)
            old = a._g
            a._g = grad_a if old is None else old + grad_a
            old = b._g
            b._g = grad_b if old is None else old + grad_b


def _through_protocol(node: Any, g: Any) -> None:
    for parent, grad in zip(node._prev, node._local_grads(g, False)):
        old = parent._g
        parent._g = grad if old is None else old + grad
