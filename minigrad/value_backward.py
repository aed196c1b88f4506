"""The backward pass over a graph of `Value`s, written for speed: the core's two loops, specialised.

`autograd` walks any graph through the `Node` protocol (`_prev`, `_local_grads`), two Python calls
per node. A scalar graph is the engine's hot path, so `Value` gives the core these two loops
instead: they read a node's operand slots directly and call the op's derivative rule and nothing
else, and in a `backward()` the propagation also adds each finished gradient into `.grad`, so the
core's third walk (`_accumulate_grads`) is not needed. Nodes these loops do not know
(micrograd-style closures) go through the protocol as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minigrad.autograd import cleared_order, propagate
from minigrad.grad_mode import switches

# The gradient buffer `_g` of a node the walk has reached and nothing has flowed into yet: a zero,
# so that adding to it is right, and an object of its own, so that the first gradient replaces it
# as it is (its type and the sign of a zero kept, as when the buffer was empty). Adding into minus
# zero instead would keep a zero's sign but turn an int from a custom rule into a float, hiding the
# rule's wrong type from gradcheck.
REACHED = float("0.0")

# The gradient buffer of a node the walk has opened (its inputs are being placed) but not placed.
_OPEN = object()


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
            node._g = None
        raise
    return order


def _place_in_order(stack: list[Any], order: list[Any]) -> None:
    """Depth-first with an explicit stack: a node seen for the first time is marked `_OPEN` and
    goes back on the stack, its unplaced inputs are visited, and met again it is placed. The walk
    goes straight on into the last of those inputs instead of through the stack. Constants in the
    operand slots are floats and are skipped; a node whose inputs are all placed (a leaf, or a
    weight times an activation reached before) is placed at once."""
    reached, opened = REACHED, _OPEN  # locals are read faster than globals
    while stack:
        node = stack.pop()
        state = node._g
        if state is not None:
            if state is opened:  # its inputs are placed now
                node._g = reached
                order.append(node)
            continue  # placed already (a node reached twice before it was opened)
        while True:  # `node` is unreached
            a = node._a
            if a is None:
                if node._rule is None:  # a leaf
                    node._g = reached
                    order.append(node)
                else:  # an op made the micrograd way
                    node._g = opened
                    stack.append(node)
                    stack.extend(node._prev)
                break
            b = node._b
            if type(a) is type(b):  # two Values (two constants make no node)
                open_a = a._g is None
                open_b = b._g is None
            else:
                open_a = type(a) is not float and a._g is None
                open_b = b is not None and type(b) is not float and b._g is None
            if not (open_a or open_b):  # a reached input is never still open: a graph has no cycles
                node._g = reached
                order.append(node)
                break
            node._g = opened
            stack.append(node)
            if open_a and open_b:
                stack.append(a)
                node = b
            else:
                node = a if open_a else b


def propagate_floats(order: list[Any], create_graph: bool, into_grad: bool = False) -> bool:
    """Walk `order` backwards adding each node's gradient times its local derivatives into its
    operands' buffers (each starts as `REACHED`, see `topological_order`).

    With `into_grad` (a `backward()`), a node's gradient is final when the walk reaches it, so it
    is added into `.grad` and the buffer cleared right there, saving the core a third walk; the
    return value says whether that was done.
    """
    if create_graph or switches.anomaly_enabled:
        propagate(order, create_graph)  # the protocol's loop, which checks each rule's gradients
        return False
    _propagate(order, into_grad)
    return into_grad


def _propagate(order: list[Any], into_grad: bool) -> None:
    reached = REACHED  # locals are read faster than globals
    for node in reversed(order):
        g = node._g
        if into_grad:
            node._g = None
            node.grad += g
        a, b = node._a, node._b
        if b is None:
            if a is not None:
                grad = node._rule.scalar_backward(g, node.data, a.data)[0]
                old = a._g
                a._g = grad if old is reached else old + grad
            elif node._rule is not None:  # an op made the micrograd way
                _through_protocol(node, g)
            continue
        if type(a) is not type(b):  # (two Values are of one type but for subclasses)
            if type(b) is float:  # a constant on the right: its gradient is dropped
                grad = node._rule.scalar_backward(g, node.data, a.data, b)[0]
                old = a._g
                a._g = grad if old is reached else old + grad
                continue
            if type(a) is float:  # a constant on the left
                grad = node._rule.scalar_backward(g, node.data, a, b.data)[1]
                old = b._g
                b._g = grad if old is reached else old + grad
                continue
        grad_a, grad_b = node._rule.scalar_backward(g, node.data, a.data, b.data)
        old = a._g
        a._g = grad_a if old is reached else old + grad_a
        old = b._g
        b._g = grad_b if old is reached else old + grad_b


def _through_protocol(node: Any, g: Any) -> None:
    for parent, grad in zip(node._prev, node._local_grads(g, False)):
        old = parent._g
        parent._g = grad if old is REACHED else old + grad
