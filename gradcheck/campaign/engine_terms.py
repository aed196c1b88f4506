"""An exception at a special input, in the engine's terms: the op as its registry spells it
("{0} ** {exponent}"), at the example's arguments, the exception, and what torch gives there, for
a finding's title ("`x ** 0` at `x = 0` raises ZeroDivisionError; torch gives gradient 0").

It describes the finding's example (its minimal graph, one op) and says nothing of what the
finding is: its signature, tier and identity stay as they are (`Finding.signature`). What torch
gives is the registry's reference for the op (`OpSpec.numpy`, `OpSpec.grads`: torch's answers,
its conventions included) at the example's arguments, its gradient times the graph's cotangent
as the repro's torch prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.graphs.mistakes import OPERANDS
from gradcheck.graphs.regions import ORDINARY
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import wording
from gradcheck.parity.kinds import Kind


@dataclass(frozen=True)
class RaisedAt:
    """`spelling` (the op on its operands' names and constants: "x ** 0") raised `raised` (the
    example's type first, then any other its cases raised) at `at` (each operand's name and value)
    in `check`, where torch gives `torch` (the value, or each input operand's gradient)."""

    spelling: str
    at: tuple[tuple[str, float], ...]
    raised: tuple[str, ...]
    check: str
    torch: tuple[float, ...]


def raised_at(finding: Any) -> RaisedAt | None:
    """The finding in the engine's terms, when it is an exception (and only that) of an engine at
    a special region, its example one scalar op; None for any other finding."""
    kinds = finding.merged.kinds or (finding.kind,)
    if kinds != (Kind.EXCEPTION,) or finding.region in (ORDINARY, "") or finding.check == "second-derivative":
        return None
    try:
        graph = Graph.from_dict(finding.graph)
    except Exception:  # no graph, or one this release cannot read
        return None
    if graph.is_tensor or len(graph.nodes) != 1 or graph.outputs != [graph.n_inputs]:
        return None
    node = graph.nodes[0]
    spec = REGISTRY.get(node.op)
    if spec is None or spec.grads is None or tuple(finding.ops) != (node.op,):
        return None
    values = [float(v) for v in graph.input_values(0)]
    operands = node.operands(list(range(graph.n_inputs)), constant=lambda c: None)
    # each input operand by the op's names for it ("x", "y"; atan2's "y", "x"), a lone one "x"
    lone = sum(ref is not None for ref in operands) == 1
    names = OPERANDS.get(node.op, ("x", "y")) if spec.arity > 1 and not lone else ("x",) * spec.arity
    args = [float(v) for v in node.operands(values)]
    words = [names[j] if ref is not None else wording.short_number(args[j]) for j, ref in enumerate(operands)]
    attrs = {
        k: wording.short_number(v) if isinstance(v, (int, float)) else repr(v) for k, v in node.attr.items()
    }
    spelling = spec.template.format(*words, **attrs)
    at = tuple((names[j], args[j]) for j, ref in enumerate(operands) if ref is not None)
    if not at:
        return None
    try:
        torch = _torch_gives(spec, args, node.attr, finding.check, graph.cotangent)
    except (TypeError, ValueError, IndexError):  # the reference cannot take the example: no words
        return None
    torch = (
        tuple(v for v, ref in zip(torch, operands) if ref is not None)
        if finding.check != "forward"
        else torch
    )
    first = finding.raised.split("/")
    example = next((p.raised.type for p in finding.problems if p.raised is not None), first[0])
    raised = (example, *(t for t in first if t and t != example))
    return RaisedAt(spelling, at, raised, finding.check, torch)


def _torch_gives(
    spec: Any, args: list[float], attrs: dict[str, Any], check: str, cotangent: Any
) -> tuple[float, ...]:
    """The reference's value at `args` (`check` "forward"), or each operand's gradient there: the
    local derivative times the graph's cotangent (1 when it has none)."""
    with np.errstate(all="ignore"):
        values = [np.float64(a) for a in args]
        out = float(spec.numpy(values, attrs))
        if check == "forward":
            return (out,)
        c = float(np.asarray(cotangent[0])) if cotangent else 1.0
        return tuple(c * float(d) for d in spec.grads(values, attrs, np.float64(out)))


def in_engine_terms(finding: Any) -> str | None:
    """The finding's title in the engine's terms (`raised_at`, `wording.raised_at`), or None."""
    at = raised_at(finding)
    return None if at is None else wording.raised_at(at)
