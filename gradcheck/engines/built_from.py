"""Which of an engine's own operations each registry op creates, read from the graph its values
expose: a tutorial engine builds `-x` as `x * -1`, `x - y` as `x + (-y)` and `x / y` as
`x * y ** -1`, so a wrong `mul` fails neg, sub and div too, and the campaign blames mul for them.

Each scalar op is evaluated once at the sample point on fresh leaves, and the nodes its result
holds are walked by the parents they keep (`_prev`, `_parents`, `_children`) down to the leaves
passed in and to constants (nodes without parents), each named by its `_op` ('*', '+', '**-1';
numbers dropped: '**2.0' and '**-1' are one operation). An op whose result is one node over just
its operands is a primitive, and its node's name is the engine's spelling of it; an op whose result
holds anything else (several nodes, or one node over a constant: `x * -1`) is built from the
primitives whose spellings its nodes carry. Engines whose values keep no `_op` and parents learn
nothing (`built_from` returns {}).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS

# The point every op is evaluated at (as `value_class.SAMPLE`: off every kink and pole).
SAMPLE = (0.7, 1.3)
# Where a node may keep its operands, and its operation's name, in the order looked for.
PARENT_NAMES = ("_prev", "_parents", "_children")
OP_NAMES = ("_op",)
# The most nodes walked in one op's result (an op is a handful of nodes; anything more is no op).
MOST_NODES = 64
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def learn_built_from(adapter: Any) -> dict[str, frozenset[str]]:
    """op -> the primitives (registry ops) it is built from in `adapter`'s engine, for each scalar op
    of `adapter.ops` that is not its own node; {} when its values expose no graph."""
    if getattr(adapter, "tensor", False):
        return {}
    ops = [op for op in SCALAR_OPS if op in adapter.ops]
    try:
        if _parents(adapter.leaf(SAMPLE[0])) is None:
            return {}
    except Exception:
        return {}
    spelled: dict[str, list[str]] = {}  # op -> the names of the interior nodes of its result
    primitive: dict[str, set[str]] = {}  # an engine node name -> the primitives spelled so
    for op in ops:
        walked = _walk(adapter, op)
        if walked is None:
            continue
        names, alone = walked
        spelled[op] = names
        if alone:
            primitive.setdefault(names[0], set()).add(op)
    built: dict[str, frozenset[str]] = {}
    for op, names in spelled.items():
        if any(op in ps for ps in primitive.values()):
            continue  # a primitive: its own node
        parts = frozenset(p for name in names for p in primitive.get(name, ()) if p != op)
        if parts:
            built[op] = parts
    return built


def built_from_text(primitive: str, ops: Sequence[str]) -> str:
    """ "neg, sub and div are built from mul in this engine"."""
    names = list(ops)
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    verb = "is" if len(names) == 1 else "are"
    return f"{listed} {verb} built from {primitive} in this engine"


def _walk(adapter: Any, op: str) -> tuple[list[str], bool] | None:
    """The names of the interior nodes of `op`'s result at the sample point, and whether it is one
    node over just the leaves passed in (None: the op fails there, or its nodes expose no graph)."""
    try:
        leaves = [adapter.leaf(v) for v in SAMPLE[: REGISTRY[op].arity]]
        out = adapter.apply(op, leaves, {"exponent": 2.0})
    except Exception:
        return None
    names: list[str] = []
    seen = {id(leaf) for leaf in leaves}
    stack, alone = [out], True
    while stack and len(names) < MOST_NODES:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        parents = _parents(node)
        if not parents:  # a constant (or a result that keeps no operands)
            if node is out:
                return None
            continue
        name = _name(node)
        if name is None:
            return None
        names.append(name)
        if node is out:
            alone = all(any(p is leaf for leaf in leaves) for p in parents)
        stack.extend(parents)
    return names, alone and len(names) == 1


def _parents(node: Any) -> list[Any] | None:
    """The operands a node keeps (None: it keeps none in any attribute looked for)."""
    for name in PARENT_NAMES:
        held = getattr(node, name, None)
        if isinstance(held, (set, frozenset, tuple, list)):
            return list(held)
    return None


def _name(node: Any) -> str | None:
    """A node's operation name, its numbers dropped ('**-1' -> '**')."""
    for attribute in OP_NAMES:
        held = getattr(node, attribute, None)
        if isinstance(held, str) and held:
            return _NUMBER.sub("", held).strip() or held
    return None
