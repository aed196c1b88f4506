"""The variant of an op a failure needs: what a finding's title names beside the op.

An engine's rule often fails for one form of an op only: a reduction over a tuple of dims, a
division with a number on the left (no `__rtruediv__`), a matmul with a 1-D operand, a sum
keeping its dims, an addition broadcasting a size-1 dim, `x ** 0`, one of the adapter's spellings
of the op (`np.absolute` for abs: "as np.absolute"). A minimal failing graph of one op node
shows which forms it takes (`variant_of`); grouping keeps the fewest qualifiers the failures
share (a failure of a plainer form joins it), so the title names the variant that matters
("amax over a tuple of dims — engine raised TypeError"), never one input's values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gradcheck.graphs.ir import Graph, OpNode
from gradcheck.graphs.spellings import spelling_of
from gradcheck.graphs.surface import VARIANTS

TUPLE_DIMS = "over a tuple of dims"
KEEPDIM = "keeping the reduced dims"
VECTOR_OPERAND = "with a 1-D operand"
BATCHED = "batched"
NUMBER_LEFT = "with a number on the left"
NUMBER_RIGHT = "with a number on the right"
SIZE_ONE_BROADCAST = "broadcasting a size-1 dim"
ADDED_DIMS_BROADCAST = "broadcasting over added dims"
SAME_OPERAND = "with one node on both sides"
POWER_ZERO = "to the power 0"
NEGATIVE_POWER = "to a negative power"
FRACTIONAL_POWER = "to a fractional power"
# In the order a title says them.
QUALIFIERS = (
    POWER_ZERO,
    NEGATIVE_POWER,
    FRACTIONAL_POWER,
    NUMBER_LEFT,
    NUMBER_RIGHT,
    SAME_OPERAND,
    TUPLE_DIMS,
    KEEPDIM,
    VECTOR_OPERAND,
    BATCHED,
    SIZE_ONE_BROADCAST,
    ADDED_DIMS_BROADCAST,
)

# The registry's attribute variants (`gradcheck.graphs.surface`, which an adapter opts in to by
# name) as titles say them: a finding of a variant the surface let through names it so.
SURFACE_QUALIFIERS = {
    "sum.keepdim": KEEPDIM,
    "mean.keepdim": KEEPDIM,
    "matmul.vector": VECTOR_OPERAND,
    "matmul.batched": BATCHED,
}

_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin"})
_KEEPDIM = frozenset({"sum", "mean", "max_dim", "min_dim"})
_ELEMENTWISE_BINARY = frozenset({"add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum"})


def variant_of(graph: Mapping[str, Any] | Graph) -> tuple[str, ...]:
    """The qualifiers of a one-op graph's node (in `QUALIFIERS` order); () for a graph of several
    op nodes or one that cannot be read (its ops are its whole description)."""
    try:
        g = graph if isinstance(graph, Graph) else Graph.from_dict(graph)
    except Exception:
        return ()
    if len(g.nodes) != 1:
        return ()
    node = g.nodes[0]
    shapes = node.operands([tuple(i.shape) for i in g.inputs], lambda c: None)
    return node_variant(node, shapes)


def spelled_as(name: str) -> str:
    """The qualifier of a node drawn in the adapter's spelling `name`: "as np.absolute"."""
    return f"as {name}"


def spelling_qualifiers(variant: Sequence[str]) -> tuple[str, ...]:
    """The qualifiers among `variant` that name a spelling (a title names them in every tier:
    another spelling is another function of the engine's)."""
    return tuple(q for q in variant if q.startswith("as "))


def node_variant(node: OpNode, shapes: Sequence[tuple[int, ...] | None]) -> tuple[str, ...]:
    """The qualifiers of `node` whose operands have `shapes` (None for a constant operand): its
    spelling first, then the others in `QUALIFIERS` order."""
    spelling = spelling_of(node)
    spelled = (spelled_as(spelling),) if spelling is not None else ()
    found: set[str] = set()
    attrs = node.attr
    for c in node.consts:
        found.add(NUMBER_LEFT if c.at == 0 else NUMBER_RIGHT)
    if len(node.args) > 1 and len(set(node.args)) < len(node.args):
        found.add(SAME_OPERAND)
    if node.op in _REDUCTIONS and len(tuple(attrs.get("dims") or ())) > 1:
        found.add(TUPLE_DIMS)
    if node.op in _KEEPDIM and attrs.get("keepdim"):
        found.add(KEEPDIM)
    if node.op == "pow_const":
        found.update(_power(float(attrs.get("exponent", 1.0))))
    tensors = [s for s in shapes if s is not None]
    if node.op == "matmul" and len(tensors) == 2:
        if any(len(s) == 1 for s in tensors):
            found.add(VECTOR_OPERAND)
        if any(len(s) > 2 for s in tensors):
            found.add(BATCHED)
    if node.op in _ELEMENTWISE_BINARY and len(tensors) == 2:
        found.update(_broadcast(*tensors))
    return spelled + tuple(q for q in QUALIFIERS if q in found)


def _power(exponent: float) -> set[str]:
    """The form of a constant power: 0, negative and/or fractional (a positive integer: none)."""
    found = set()
    if exponent == 0:
        found.add(POWER_ZERO)
    if exponent < 0:
        found.add(NEGATIVE_POWER)
    if exponent % 1:
        found.add(FRACTIONAL_POWER)
    return found


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> set[str]:
    """How two operand shapes broadcast: a size-1 dim stretched, and/or dims added in front."""
    found = set()
    if len(a) != len(b):
        found.add(ADDED_DIMS_BROADCAST)
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and 1 in (x, y):
            found.add(SIZE_ONE_BROADCAST)
    return found


def phrase(variant: Sequence[str]) -> str:
    """The qualifiers as a title says them: "over a tuple of dims, keeping the reduced dims"."""
    return ", ".join(variant)


def plainer(variant: Sequence[str], other: Sequence[str]) -> bool:
    """Whether `other` names fewer of the same qualifiers than `variant` (a proper subset)."""
    return set(other) < set(variant)


def surface_words(names: Iterable[str]) -> str:
    """Surface variants as a title says them, each with the name an adapter opts in by:
    "sum keeping the reduced dims (sum.keepdim)"."""
    named = {n: f"{VARIANTS[n].op} {SURFACE_QUALIFIERS[n]} ({n})" for n in SURFACE_QUALIFIERS}
    return "; ".join(named.get(n, n) for n in sorted(names))
