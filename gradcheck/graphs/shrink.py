"""Shrink a failing graph to a small one that still fails (for campaign failures, outside hypothesis).

Greedy passes, repeated until none helps: keep a single batch point; drop an op node no output
uses (the engine still runs it: one that raises or writes into its argument is kept while the
failure needs it); drop outputs; bypass an op node (its users read one of its arguments
instead); freeze an op node (`frozen`: its users read a new input holding the value it had, so
`0.0 / sigmoid(x0)` becomes `0.0 / x1` whatever sigmoid gave there, a pole or overflow point
included); drop inputs nothing uses; simplify input values (round them to fewer digits); move
constants toward 0 and 1.
A candidate is kept only when the caller says it still fails (the caller asks for the same
failure, not any failure, so an engine with several bugs does not drift from one to another),
and only candidates that keep every op inside its domain and off its kinks are tried, unless the
failing graph itself is outside (a failure at a pole shrinks to a smaller graph at that pole).

The caller judges candidates a list at a time (`FirstFailing`: the first of them that still
fails), so that a batched judge can evaluate a list in one go; `shrink` stops when it has judged
its budget of candidates (counted work: the same graph at any load), or at a deadline (a safety
cap only: what it gives then depends on the machine's speed, and the result says it was cut).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.graphs.generate import graph_in_domain
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.spellings import spelling_of, unspelled

# Which of a list of candidates still fails: the index of the first that does, or None.
FirstFailing = Callable[[Sequence[Graph]], "int | None"]
# Candidates judged per call of a `FirstFailing`.
CANDIDATES_PER_CALL = 8


@dataclass(frozen=True)
class Shrunk:
    """What shrinking gave: the smallest graph found, whether the passes ran to the end (False:
    the check budget or the deadline cut them short), how many candidates were judged, and
    whether the deadline (not the count) cut them short."""

    graph: Graph
    complete: bool
    checks: int = 0
    timed_out: bool = False


def shrink(
    graph: Graph,
    first_failing: FirstFailing,
    *,
    deadline: float | None = None,
    max_checks: int = 400,
    failing_point: int | None = None,
) -> Shrunk:
    """The smallest graph found by greedy passes for which `first_failing` says it still fails,
    candidates judged `CANDIDATES_PER_CALL` at a time, until no candidate is smaller and fails,
    `max_checks` candidates were judged or `time.monotonic()` passes `deadline` (a safety cap).

    `failing_point`: the batch point that failed (the graph is first cut down to it).
    """
    checks = [max_checks]

    def done(best: Graph, complete: bool, timed_out: bool = False) -> Shrunk:
        return Shrunk(best, complete, max_checks - checks[0], timed_out)

    domain_only = graph_in_domain(graph)

    def admissible(candidate: Graph) -> bool:
        try:
            candidate.validate()
        except ValueError:
            return False
        return not domain_only or graph_in_domain(candidate)

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    def judge(candidates: list[Graph]) -> int | None:
        hit = first_failing(candidates)
        checks[0] -= len(candidates) if hit is None else hit + 1
        return hit

    best = graph
    if graph.points is not None:
        single = graph.instance(failing_point or 0)
        if admissible(single) and judge([single]) == 0:
            best = single
    improved = True
    while improved:
        improved = False
        size = _size(best)
        smaller = (c for c in _candidates(best) if _size(c) < size and admissible(c))
        while not improved:
            if checks[0] <= 0:
                return done(best, complete=False)
            if out_of_time():
                return done(best, complete=False, timed_out=True)
            batch = list(itertools.islice(smaller, min(CANDIDATES_PER_CALL, checks[0])))
            if not batch:
                break
            hit = judge(batch)
            if hit is not None:
                best, improved = batch[hit], True
    return done(best, complete=True)


def shrink_graph(
    graph: Graph,
    still_fails: Callable[[Graph], bool],
    max_checks: int = 400,
    failing_point: int | None = None,
) -> Graph:
    """The smallest graph found (by greedy passes) for which `still_fails` holds (`shrink`, the
    candidates judged one by one).

    `failing_point`: the batch point that failed (the graph is first cut down to it).
    """

    def first_failing(candidates: Sequence[Graph]) -> int | None:
        return next((i for i, c in enumerate(candidates) if still_fails(c)), None)

    return shrink(graph, first_failing, max_checks=max_checks, failing_point=failing_point).graph


def _size(g: Graph) -> tuple[int, int, int, int, int]:
    digits = sum(len(repr(i.value)) for i in g.inputs if not i.shape)
    digits += sum(len(repr(c)) for c in g.cotangent or [] if isinstance(c, float))
    digits += sum(_constant_rank(c.value) for n in g.nodes for c in n.consts)
    spelled = sum(1 for n in g.nodes if spelling_of(n) is not None)  # the default spelling is simpler
    return (len(g.nodes), len(g.outputs), g.n_inputs, digits, spelled)


def _constant_rank(value: float) -> int:
    """How far a constant is from the simplest ones: 0 and 1 rank lowest."""
    return {0.0: 0, 1.0: 1}.get(value, 2 + len(repr(value)))


def _candidates(g: Graph) -> Iterator[Graph]:
    yield from _without_dead(g)
    yield from _fewer_outputs(g)
    yield from _bypassed(g)
    yield from _frozen(g)
    yield from _simpler_values(g)
    yield from _simpler_constants(g)
    yield from _default_spellings(g)


def _default_spellings(g: Graph) -> Iterator[Graph]:
    """Each node drawn in one of the adapter's spellings back in its op's default spelling: a
    failure that stays needs no spelling, and its finding is named by the op alone."""
    for i, node in enumerate(g.nodes):
        if spelling_of(node) is not None:
            nodes = list(g.nodes)
            nodes[i] = unspelled(node)
            yield Graph(g.inputs, nodes, g.outputs, g.points, g.cotangent, g.meta)


def _simpler_constants(g: Graph) -> Iterator[Graph]:
    """Each constant operand replaced by 0.0, then by 1.0 (the graph's structure unchanged)."""
    for i, node in enumerate(g.nodes):
        for j, c in enumerate(node.consts):
            for simpler in (0.0, 1.0):
                if _constant_rank(simpler) < _constant_rank(c.value):
                    consts = list(node.consts)
                    consts[j] = Constant(c.at, simpler, c.tensor)
                    nodes = list(g.nodes)
                    nodes[i] = OpNode(node.op, node.args, node.attrs, tuple(consts))
                    yield Graph(g.inputs, nodes, g.outputs, g.points, g.cotangent, g.meta)


def _fewer_outputs(g: Graph) -> Iterator[Graph]:
    if len(g.outputs) < 2:
        return
    for j in range(len(g.outputs)):
        keep = [k for k in range(len(g.outputs)) if k != j]
        cot = None if g.cotangent is None else [g.cotangent[k] for k in keep]
        fewer = Graph(g.inputs, g.nodes, [g.outputs[k] for k in keep], g.points, cot, g.meta)
        yield _prune(fewer, keep=_dead(g))


def _bypassed(g: Graph) -> Iterator[Graph]:
    """Each op node replaced by one of its arguments (latest nodes first: they are the outputs)."""
    n_in = g.n_inputs
    for i in reversed(range(len(g.nodes))):
        node_id = n_in + i
        for arg in dict.fromkeys(g.nodes[i].args):
            yield _prune(_replace_uses(g, node_id, arg), keep=_dead(g))


def _frozen(g: Graph) -> Iterator[Graph]:
    """Each op node replaced by a new input holding its value at the graph's one point (latest
    nodes first); nothing for a batched graph."""
    if g.points is not None:
        return
    values = _reference_values(g)
    if values is None:
        return
    for i in reversed(range(len(g.nodes))):
        yield frozen(g, [i], values)


def frozen(g: Graph, nodes: Sequence[int], values: Sequence[Any] | None = None) -> Graph:
    """One-point `g` with op nodes `nodes` (positions in `g.nodes`) each replaced by a new input
    holding the value it had, then pruned: the graph as it would be were those nodes right.
    `values`: every node's value, inputs first (default: the registry's reference forward)."""
    if g.points is not None:
        raise ValueError("frozen: the graph must hold one point (a failing instance)")
    if values is None:
        values = _reference_values(g)
        if values is None:
            raise ValueError(f"frozen: the reference forward of ops {g.ops()} cannot run at this point")
    n_in, order = g.n_inputs, list(dict.fromkeys(nodes))
    added = []
    for j, i in enumerate(order):
        value = values[n_in + i]
        shape = np.shape(value)
        name = f"x{n_in + j}"
        added.append(
            Input(name, np.asarray(value, dtype=np.float64), shape) if shape else Input(name, float(value))
        )
    shift = len(order)
    moved = {n_in + i: n_in + j for j, i in enumerate(order)}  # a frozen node's id -> its input

    def renumbered(a: int) -> int:
        return a if a < n_in else moved.get(a, a + shift)

    nodes_after = [n.with_args(tuple(renumbered(a) for a in n.args)) for n in g.nodes]
    outputs = list(dict.fromkeys(renumbered(o) for o in g.outputs))
    cot = g.cotangent
    if cot is not None and len(outputs) != len(g.outputs):
        first: dict[int, Any] = {}
        for o, c in zip(g.outputs, cot):
            first.setdefault(renumbered(o), c)
        cot = [first[o] for o in outputs]
    kept = _dead(g) - set(order)  # a node no output uses still runs (and may raise, or write)
    return _prune(Graph([*g.inputs, *added], nodes_after, outputs, None, cot, g.meta), keep=kept)


def _reference_values(g: Graph) -> list[object] | None:
    """Every node's value (inputs first) by the registry's numpy forward (None if it cannot run)."""
    values: list[object] = [np.asarray(v, dtype=np.float64) for v in g.input_values(0)]
    try:
        with np.errstate(all="ignore"):
            for node in g.nodes:
                values.append(np.asarray(REGISTRY[node.op].numpy(node.operands(values), node.attr)))
    except (ValueError, TypeError, IndexError):
        return None
    return values


def _replace_uses(g: Graph, old: int, new: int) -> Graph:
    nodes = [n.with_args(tuple(new if a == old else a for a in n.args)) for n in g.nodes]
    outputs = list(dict.fromkeys(new if o == old else o for o in g.outputs))
    cot = g.cotangent
    if cot is not None and len(outputs) != len(g.outputs):
        seen: dict[int, Any] = {}
        for o, c in zip(g.outputs, cot):
            seen.setdefault(new if o == old else o, c)
        cot = [seen[o] for o in outputs]
    return Graph(g.inputs, nodes, outputs, g.points, cot, g.meta)


def _dead(g: Graph) -> set[int]:
    """The positions of the op nodes no output depends on."""
    n_in = g.n_inputs
    live = set(g.outputs)
    for i in reversed(range(len(g.nodes))):
        if n_in + i in live:
            live.update(g.nodes[i].args)
    return {i for i in range(len(g.nodes)) if n_in + i not in live}


def _without_dead(g: Graph) -> Iterator[Graph]:
    """Each op node no output depends on removed (an engine still evaluates such a node: it may
    raise, or write into its argument, so it goes only when the failure stays without it)."""
    dead = _dead(g)
    for i in sorted(dead, reverse=True):
        yield _prune(g, keep=dead - {i})


def _prune(g: Graph, keep: set[int] | frozenset[int] = frozenset()) -> Graph:
    """Drop op nodes no output depends on, except those at positions `keep` (and what they use),
    and inputs no node uses; renumber."""
    n_in = g.n_inputs
    live = set(g.outputs) | {n_in + i for i in keep}
    for i in reversed(range(len(g.nodes))):
        if n_in + i in live:
            live.update(g.nodes[i].args)
    keep_inputs = [i for i in range(n_in) if i in live] or [0]
    keep_nodes = [i for i in range(len(g.nodes)) if n_in + i in live]
    new_id: dict[int, int] = {}
    for k, i in enumerate(keep_inputs):
        new_id[i] = k
    for k, i in enumerate(keep_nodes):
        new_id[n_in + i] = len(keep_inputs) + k
    inputs = [Input(f"x{k}", g.inputs[i].value, g.inputs[i].shape) for k, i in enumerate(keep_inputs)]
    nodes = [g.nodes[i].with_args(tuple(new_id[a] for a in g.nodes[i].args)) for i in keep_nodes]
    points = None if g.points is None else [g.points[i] for i in keep_inputs]
    return Graph(inputs, nodes, [new_id[o] for o in g.outputs], points, g.cotangent, dict(g.meta))


def _simpler_values(g: Graph) -> Iterator[Graph]:
    if g.points is not None:
        return
    for i, inp in enumerate(g.inputs):
        if inp.shape:
            continue
        for simpler in _rounded(float(inp.value)):
            inputs = list(g.inputs)
            inputs[i] = Input(inp.name, simpler, inp.shape)
            yield Graph(inputs, g.nodes, g.outputs, None, g.cotangent, g.meta)
        if g.cotangent is not None:
            for j, c in enumerate(g.cotangent):
                if isinstance(c, float) and c not in (1.0, -1.0):
                    cot = list(g.cotangent)
                    cot[j] = 1.0 if c > 0 else -1.0
                    yield Graph(g.inputs, g.nodes, g.outputs, None, cot, g.meta)


def _rounded(x: float) -> Iterator[float]:
    for digits in (0, 1, 2, 3):
        r = round(x, digits)
        if r != x and len(repr(r)) < len(repr(x)):
            yield r
