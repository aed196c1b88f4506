"""Where a named mistake breaks down: an exception, or a nan/inf, that the learner's wrong rule
causes is the mistake's, not a problem of its own.

log's backward written `1/log(x)` (the table's entry in `gradcheck.graphs.mistakes`) divides by
zero at x = 1, where log(x) is 0: the engine raises ZeroDivisionError there, though the derivative
1/x is 1. That failure is the named mistake's: fixing the rule fixes it. `fold_into_mistakes`
folds such a finding into the finding that names the mistake (`Finding.mistake_rules`), which
counts its graphs and cases and says where ("at x = 1 log's backward raises ZeroDivisionError:
1/log(x) is infinite there; counted here"). A failure is the mistake's only when it is of the
mistake's op alone (its example one node of that op), a breakdown (an exception or nan/inf) in
the gradient, at points where the op's value and every right derivative are finite and a named
rule is not: anything else stays apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from gradcheck.campaign import tiers
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import absorb_folded, merge
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.mistakes import OPERANDS, Mistake, entry_of
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.kinds import Kind
from gradcheck.parity.wording import short_number

# The kinds a wrong rule's division by zero or log of a negative shows as: Python floats raise,
# numpy's give inf or nan.
_BREAKDOWNS = frozenset({Kind.EXCEPTION, Kind.NONFINITE})
# The tiers whose findings are the engine's rules (not an adapter's fault, torch's, or the graph code).
_RULE_TIERS = frozenset({tiers.BUG, tiers.EDGE})


def fold_into_mistakes(findings: Sequence[Finding]) -> list[Finding]:
    """`findings` with each breakdown that a named mistake causes folded into that mistake's
    finding (see the module docstring). Order kept, the folded ones gone."""
    targets = {f.ops: f for f in findings if f.tier == tiers.BUG and f.mistake_rules and len(f.ops) == 1}
    folded: dict[int, list[Finding]] = {}  # id of a mistake's finding -> the breakdowns it causes
    said: dict[int, str] = {}  # id of a breakdown -> where the rule breaks down, in words
    for f in findings:
        target = targets.get(f.ops)
        if target is None or f is target:
            continue
        words = caused_by(target, f)
        if words is not None:
            folded.setdefault(id(target), []).append(f)
            said[id(f)] = words

    def absorb(mistake: Finding, group: Sequence[Finding]) -> Finding:
        whole = merge([mistake, *group], prefer=[mistake])
        explains = tuple(dict.fromkeys([*mistake.merged.explains, *(said[id(g)] for g in group)]))
        return replace(whole, merged=replace(whole.merged, explains=explains))

    return absorb_folded(findings, folded, absorb)


def caused_by(mistake: Finding, finding: Finding) -> str | None:
    """Where `finding` is a breakdown that `mistake`'s named rule causes, the words saying so
    ("at x = 1 log's backward raises ZeroDivisionError: 1/log(x) is infinite there; counted here");
    None otherwise."""
    if finding.kind not in _BREAKDOWNS or finding.check != "gradient" or finding.tier not in _RULE_TIERS:
        return None
    entries = [e for e in map(entry_of, mistake.mistake_rules) if e is not None and e[0] == mistake.ops[0]]
    try:
        graph = Graph.from_dict(finding.graph)
    except Exception:  # an earlier report's graph this release cannot read: nothing to fold
        return None
    if not entries or graph.is_tensor or len(graph.nodes) != 1 or graph.nodes[0].op != mistake.ops[0]:
        return None
    points = sorted({p.point for p in finding.problems if p.point is not None}) or list(range(graph.n_points))
    broken = _where_broken(graph, [m for _, m in entries], points)
    if broken is None:
        return None
    place, wrote, value = broken
    raised = finding.kind is Kind.EXCEPTION and finding.raised
    what = f"raises {finding.raised}" if raised else "gives nan/inf"
    return f"at {place} {mistake.ops[0]}'s backward {what}: {wrote} is {value} there; counted here"


def _where_broken(
    graph: Graph, entries: Sequence[Mistake], points: Sequence[int]
) -> tuple[str, str, str] | None:
    """At every one of `points` the op's value and every right derivative are finite and some
    entry's rule is not: the first point's place ("x = 1"), that entry's words and "infinite" or
    "not a number"; else None."""
    node = graph.nodes[0]
    spec = REGISTRY[node.op]
    columns = [np.array([float(graph.input_values(k)[i]) for k in points]) for i in range(graph.n_inputs)]
    args = [np.full(len(points), v) if isinstance(v, float) else v for v in node.operands(columns)]
    with np.errstate(all="ignore"):
        out = np.asarray(spec.numpy(args, node.attr), dtype=np.float64)
        right = [np.asarray(g, dtype=np.float64) for g in spec.grads(args, node.attr, out)]
        rules = [
            np.broadcast_to(np.asarray(m.rule(args, node.attr, out), dtype=np.float64), out.shape)
            for m in entries
        ]
    right_ones = [out, *(np.broadcast_to(g, out.shape) for g in right)]
    if not all(np.all(np.isfinite(r)) for r in right_ones):
        return None
    broken = [~np.isfinite(r) for r in rules]
    if not np.all(np.logical_or.reduce(broken)):
        return None
    first = next(j for j, b in enumerate(broken) if b[0])
    names = OPERANDS.get(node.op, ("x", "y")) if spec.arity > 1 else ("x",)
    place = ", ".join(f"{names[j]} = {short_number(float(a[0]))}" for j, a in enumerate(args))
    value = "infinite" if np.isinf(rules[first][0]) else "not a number"
    wrote = entries[first].wrote.partition(" · out.grad")[0]
    return place, wrote, value
