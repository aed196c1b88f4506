"""A graph compiled once into flat steps, so that running it at many points skips reading the IR.

A check evaluates the same graph at K points with the engine and once more with torch; reading
each `OpNode` again every time (its operand list, its attribute dict, the registry lookup) cost
as much as the engine's own arithmetic. `Program(graph, resolve)` reads every node once: the
callable that computes it, the node ids that feed it, where its constant operands go and its
attributes. `run(leaves, constant)` then makes one call per node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradcheck.graphs.ir import SPELLING, Constant, Graph
from gradcheck.graphs.registry import REGISTRY

# An op as a callable on its operands and attributes, like `OpSpec.apply`.
Apply = Callable[[list[Any], dict[str, Any]], Any]


# One node: `apply(operands, attrs)`; operands are the node ids `args` with each constant inserted
# at its position (`constants`: (position, constant) pairs, ascending). A plain tuple: a NamedTuple
# costs 4x as much to make, and a check compiles a graph three times (engine, HVP, torch).
Step = tuple[Apply, tuple[int, ...], dict[str, Any], tuple[tuple[int, Constant], ...]]


def registry_apply(op: str) -> Apply:
    """The registry's spelling of `op` on autograd values (`OpSpec.apply`)."""
    return REGISTRY[op].apply


class Program:
    """`graph`'s nodes as steps, each op resolved to a callable by `resolve(op name)`, and a node
    drawn in one of the adapter's spellings by `spelled(op name, spelling)` (None: every node in
    its op's default spelling, as the references compute it)."""

    def __init__(
        self,
        graph: Graph,
        resolve: Callable[[str], Apply] = registry_apply,
        spelled: Callable[[str, str], Apply] | None = None,
    ) -> None:
        self.outputs = tuple(graph.outputs)
        applies: dict[tuple[str, Any], Apply] = {}  # each distinct op and spelling resolved once
        steps: list[Step] = []
        for node in graph.nodes:
            attrs = dict(node.attrs) if node.attrs else {}
            spelling = attrs.pop(SPELLING, None)  # how the engine is called: no attribute of the op
            if spelled is None:
                spelling = None
            apply = applies.get((node.op, spelling))
            if apply is None:
                rule = resolve(node.op) if spelled is None or spelling is None else spelled(node.op, spelling)
                apply = applies[(node.op, spelling)] = rule
            steps.append((apply, node.args, attrs, _constants(node.consts) if node.consts else ()))
        self.steps = tuple(steps)

    def run(self, leaves: Sequence[Any], constant: Callable[[Constant], Any]) -> list[Any]:
        """Every node's value: the leaves, then each step's result; `constant(c)` makes the
        operand standing for constant `c` (called at each run: it may be a fresh engine value)."""
        nodes = list(leaves)
        append = nodes.append
        for apply, args, attrs, constants in self.steps:
            if constants:
                operands = [nodes[i] for i in args]
                for at, c in constants:
                    operands.insert(at, constant(c))
            elif len(args) == 1:  # spelled out: a comprehension costs a call of its own
                operands = [nodes[args[0]]]
            elif len(args) == 2:
                operands = [nodes[args[0]], nodes[args[1]]]
            else:
                operands = [nodes[i] for i in args]
            append(apply(operands, attrs))
        return nodes


def _constants(consts: Sequence[Constant]) -> tuple[tuple[int, Constant], ...]:
    """(position, constant) pairs in ascending position, the order `run` inserts them in."""
    return tuple((c.at, c) for c in sorted(consts, key=lambda c: c.at))
