"""Naming a learner's mistake: an op's wrong gradient matched to one entry of its table.

The op-isolation pass runs each op alone at several random points (`campaign.isolation`). For
a one-op graph that fails with a wrong gradient, the engine's gradient at every point, with the
cotangent divided out, is the local derivative the learner computed by hand; when it matches one
entry of the op's table (`gradcheck.graphs.mistakes`) at every point within rounding, for every
operand whose partial is wrong, the finding says which (`named_mistake`). Anything else says
nothing: a name is never a guess.

The harness applies a lone output's cotangent outside the engine (`adapter.scaled_alone`): the
engine's backward starts from out.grad = 1, where a backward that leaves out the upstream gradient
is right. `upstream_probe` therefore runs the op with its result multiplied by a number (by the
engine's own `*`), so its backward gets out.grad ≠ 1, and names a partial that ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.value_class import BINARY_OPERATORS
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.mistakes import DERIVATIVES, MISTAKES, OPERANDS, Mistake, entry_key
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import wording

# Within rounding: the engine's local derivative and an entry's agree to this relative difference
# (a wrong rule is off by far more; the same rule in another spelling, by a few ulps).
MATCH_RTOL = 1e-9
MATCH_ATOL = 1e-300
# The graph meta key marking an upstream probe's graph (`upstream_probe`), and the number the
# probe multiplies the op's result by: far from 1 and -1, so a lost upstream is neither.
PROBE = "upstream-probe"
PROBE_FACTOR = 1.75
# The operators whose operands' order matters: a forward that swaps them is named.
_ORDERED = frozenset({"sub", "div", "pow"})
# The cotangents the matcher draws for its own run: magnitudes far from 1, either sign.
_COTANGENT_RANGE = (1.5, 3.0)


@dataclass(frozen=True)
class Named:
    """A mistake named: the sentence a learner reads and the table entries it says
    (`mistakes.entry_key`), one per operand whose partial is wrong."""

    sentence: str
    rules: tuple[str, ...]


def local_derivatives(
    graph: Graph, adapter: EngineAdapter, seed: int = 0, factor: float = 1.0
) -> dict[int, np.ndarray] | None:
    """The engine's local derivative of each operand of a one-op scalar graph at every point, as
    the isolation check's run computes it, its (random, non-unit) cotangent divided out: operand
    index -> values per point. `factor` ≠ 1: the op's result multiplied by it with the engine's
    own `*` first (the backward of the op then starts from out.grad = factor, divided out too).
    None when the graph is not one op on distinct inputs, or the engine cannot run it."""
    refs = _operand_inputs(graph)
    if refs is None:
        return None
    rng = np.random.default_rng([seed, 0x4D15])
    n = graph.n_points
    cotangents = rng.uniform(*_COTANGENT_RANGE, n) * rng.choice([-1.0, 1.0], n)
    run = graph if factor == 1.0 else _times(graph, factor)
    points = [graph.input_values(k) for k in range(n)]
    try:
        runs = list(adapter.run_points(run, points, [[c] for c in cotangents]))
        grads = np.array([[float(np.asarray(g)) for g in r[1]] for r in runs], dtype=np.float64)
    except Exception:  # the engine cannot run it again: nothing to name
        return None
    return {j: grads[:, i] / (cotangents * factor) for j, i in refs.items()}


def named_mistake(graph: Graph, adapter: EngineAdapter, seed: int = 0) -> Named | None:
    """The mistake of a one-op graph's wrong gradient named ("tanh's backward behaves like
    (1 - t) · out.grad, where t = tanh(x); the derivative is (1 - t²)"), or None when an
    operand's wrong partial matches no entry, or more than one, at every point. A constant
    operand is made an input too (at the constant's value), so every partial is named."""
    return _named(graph, adapter, seed, 1.0)


def upstream_probe(graph: Graph, adapter: EngineAdapter, seed: int = 0) -> tuple[Graph, Named] | None:
    """`graph` (one op, passing) with its result multiplied by `PROBE_FACTOR` through the engine's
    own `*` (its meta `PROBE` set), and the sentence naming the mistake, when that shows a partial
    that leaves out the upstream gradient (its entry alone matches at every point); None
    otherwise, also when the engine has no `*` or the graph is not one op."""
    if _operand_inputs(graph) is None or "mul" not in adapter.ops:
        return None
    sentence = _named(graph, adapter, seed, PROBE_FACTOR)
    if sentence is None:
        return None
    probe = _times(graph, PROBE_FACTOR)
    probe.meta[PROBE] = True
    return probe, sentence


def swapped_operands(graph: Graph, adapter: EngineAdapter) -> Named | None:
    """A one-op graph of an operator whose operands' order matters (`-`, `/`, `**`) whose engine
    value is the op of its operands swapped at every point (and not the op's own): named
    ("`2 - x` computes `x - 2`: __rsub__ swaps its operands", the reflected method's mistake when
    the number is on the left); None otherwise."""
    if graph.is_tensor or len(graph.nodes) != 1 or graph.outputs != [graph.n_inputs]:
        return None
    node = graph.nodes[0]
    if node.op not in _ORDERED or node.arity != 2:
        return None
    args = _operand_values(graph)
    spec = REGISTRY[node.op]
    n = graph.n_points
    points = [graph.input_values(k) for k in range(n)]
    try:
        runs = list(adapter.run_points(graph, points, [[1.0]] * n))
        engine = np.array([float(np.asarray(r[0][0])) for r in runs], dtype=np.float64)
    except Exception:  # the engine cannot run it again: nothing to name
        return None
    with np.errstate(all="ignore"):
        right = np.asarray(spec.numpy(args, node.attr), dtype=np.float64)
        swapped = np.asarray(spec.numpy(args[::-1], node.attr), dtype=np.float64)
    if not _matches(engine, swapped) or _matches(engine, right):
        return None
    symbol, _, reflected = BINARY_OPERATORS[node.op]
    constant = {c.at: c for c in node.consts}
    a, b = ("x", "y") if not constant else (_spelled(constant, j) for j in (0, 1))
    return Named(wording.swapped(a, symbol, b, reflected if 0 in constant else f"{node.op}'s forward"), ())


def _spelled(constants: dict[int, Constant], at: int) -> str:
    """Operand `at` of a one-op graph with a number beside an input: the number, or "x"."""
    return wording.short_number(float(constants[at].value)) if at in constants else "x"


def is_probe(graph: dict[str, Any]) -> bool:
    """Whether a finding's graph (as JSON) is an upstream probe's (`upstream_probe`)."""
    return bool(graph.get("meta", {}).get(PROBE))


def readable(graph: dict[str, Any]) -> bool:
    """Whether the matcher reads a local derivative from a finding's graph (as JSON): one scalar
    op of the table on distinct inputs. `x * x`, or an op with an input beside its result as a
    second output (weighted by the engine's other ops), has no partial of its own to match."""
    try:
        return _operand_inputs(Graph.from_dict(graph)) is not None
    except Exception:  # no graph, or one this release cannot read
        return False


def _named(graph: Graph, adapter: EngineAdapter, seed: int, factor: float) -> Named | None:
    """The sentence for the entries the engine's partials match on `graph` and on it with every
    constant an input (the same entries where both measure a partial); `factor`: see
    `local_derivatives` (≠ 1: only the entries leaving out out.grad are candidates)."""
    found = {}
    for run in (graph, _lifted(graph)):
        local = local_derivatives(run, adapter, seed, factor)
        matched = None if local is None else _found(run, local, factor)
        if matched is None or any(found.get(j, m) is not m for j, m in matched.items()):
            return None
        found.update(matched)
    wrong = sorted((j, m) for j, m in found.items() if m is not None)
    if not wrong:
        return None
    op = graph.nodes[0].op
    names = OPERANDS.get(op, ("x", "y")) if REGISTRY[op].arity > 1 else ("",)
    sentence = wording.mistake(op, [(names[j], m.wrote, DERIVATIVES[op][j], m.upstream) for j, m in wrong])
    return Named(sentence, tuple(entry_key(op, m) for _, m in wrong))


def _found(graph: Graph, local: dict[int, np.ndarray], factor: float) -> dict[int, Mistake | None] | None:
    """Operand -> the one entry its partial matches at every point (None: the partial is right),
    or None when a wrong partial matches no entry or several. `factor`: the upstream gradient
    the engine's backward saw (1 when the cotangent is applied outside the engine)."""
    node = graph.nodes[0]
    spec, table = REGISTRY[node.op], MISTAKES.get(node.op, ())
    attrs = node.attr
    args = [np.asarray(v, dtype=np.float64) for v in _operand_values(graph)]
    out = np.asarray(spec.numpy(args, attrs), dtype=np.float64)
    correct = spec.grads(args, attrs, out)
    found: dict[int, Mistake | None] = {}
    for j, engine in local.items():
        if _matches(engine, correct[j]):
            found[j] = None
            continue
        candidates = [
            m
            for m in table
            if m.operand == j
            and m.upstream is (factor == 1.0)
            and _matches(engine, m.local(args, attrs, out, factor))
        ]
        if len(candidates) != 1:
            return None
        found[j] = candidates[0]
    return found


def _times(graph: Graph, factor: float) -> Graph:
    """A one-op graph with its result multiplied by `factor` (a graph `mul` by a constant)."""
    n = graph.n_inputs
    scaled = OpNode("mul", (n,), consts=(Constant(1, factor),))
    return Graph(list(graph.inputs), [graph.nodes[0], scaled], [n + 1], graph.points, None, dict(graph.meta))


def _lifted(graph: Graph) -> Graph:
    """A one-op graph with each constant operand an input of its own, at the constant's value
    at every point (the op on engine values only)."""
    node = graph.nodes[0]
    if not node.consts:
        return graph
    n, k = graph.n_inputs, graph.n_points
    at = {c.at: c for c in node.consts}
    points = [np.array([float(graph.input_values(p)[i]) for p in range(k)]) for i in range(n)]
    inputs, args, ids = list(graph.inputs), [], iter(node.args)
    for i in range(node.arity):
        if i in at:
            inputs.append(Input(f"x{len(inputs)}", float(at[i].value)))
            points.append(np.full(k, float(at[i].value)))
            args.append(len(inputs) - 1)
        else:
            args.append(next(ids))
    lifted = OpNode(node.op, tuple(args), node.attrs)
    return Graph(inputs, [lifted], [len(inputs)], points, None, dict(graph.meta))


def _matches(engine: np.ndarray, rule: Any) -> bool:
    """Whether the engine's local derivative is `rule`'s at every point, within rounding."""
    expected = np.broadcast_to(np.asarray(rule, dtype=np.float64), engine.shape)
    if not (np.all(np.isfinite(engine)) and np.all(np.isfinite(expected))):
        return False
    allowed = MATCH_RTOL * np.maximum(np.abs(engine), np.abs(expected)) + MATCH_ATOL
    return bool(np.all(np.abs(engine - expected) <= allowed))


def _operand_inputs(graph: Graph) -> dict[int, int] | None:
    """A one-op scalar graph's operand index -> the input it is (constants left out), or None:
    not one op of the table on distinct inputs (x * x has no separate partials)."""
    if graph.is_tensor or len(graph.nodes) != 1 or graph.outputs != [graph.n_inputs]:
        return None
    node = graph.nodes[0]
    if node.op not in MISTAKES:
        return None
    refs = node.operands(list(range(graph.n_inputs)), constant=lambda c: None)
    used = [r for r in refs if r is not None]
    if not used or len(set(used)) != len(used):
        return None
    return {j: r for j, r in enumerate(refs) if r is not None}


def _operand_values(graph: Graph) -> list[np.ndarray]:
    """Each operand's value at every point (a constant repeated)."""
    node, n = graph.nodes[0], graph.n_points
    columns = [np.array([float(graph.input_values(k)[i]) for k in range(n)]) for i in range(graph.n_inputs)]
    return [np.full(n, v) if isinstance(v, float) else v for v in node.operands(columns)]


def local_lines(finding: Any, shown: int) -> list[str]:
    """For a one-op scalar finding's first `shown` problems, those of the gradient: the local
    derivative beside the graph's numbers, its cotangent divided out ("local derivative of x0
    (cotangent 0.923 divided out): engine 2, torch 2.7e-06"); none for any other finding."""
    try:
        graph = Graph.from_dict(finding.graph) if finding.graph else None
    except Exception:  # an earlier report's graph this release cannot read: nothing to add
        return []
    if graph is None or graph.is_tensor or len(graph.nodes) != 1 or not graph.cotangent:
        return []
    problems = finding.problems[:shown]
    c = float(np.asarray(graph.cotangent[0]))
    if c == 0:
        return []
    return [wording.local_derivative(p, c) for p in problems if _gradient_pair(p)]


def _gradient_pair(p: Any) -> bool:
    return p.check == "gradient" and p.input is not None and _number(p.engine) and _number(p.reference)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
