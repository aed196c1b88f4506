"""Blame through the engine's own graph: a failure shared by the ops an engine builds from one of
its primitives is that primitive's finding.

A tutorial engine builds `-x` as `x * -1`, `x - y` as `x + (-y)` and `x / y` as `x * y ** -1`
(`EngineAdapter.built_from`, learned from the nodes its values keep), so a mul whose backward
forgets the upstream gradient fails neg, sub and div as well. The primitive's finding (a bug of
one op at ordinary inputs: the isolation pass's) then
- explains a failing graph that passes with the nodes of the primitive and of every op built from
  it frozen (`covered_ops`, used by `campaign.explain`), where checking a node alone cannot show
  the bug (mul's lost upstream gradient shows only under an upstream gradient other than 1);
- absorbs the findings of the same rule (kind, check and region, a special region other than a
  pole counting as ordinary inputs) that fail only through the
  primitive and the ops built from it (every op, or every culprit of a shrunk finding:
  `fold_into_primitives`): neg's own wrong gradient, a shrunk "mul ∘ neg", an "exp ∘ sub" that
  passes with its sub frozen. Its count is theirs too, and it says which ops are built from it
  (`Merged.built_from`, in words: "div, neg and sub are built from mul in this engine").
Engines whose values expose no graph have an empty `built_from`: nothing here changes their blame.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from gradcheck.campaign import tiers
from gradcheck.campaign.findings import Finding, Merged
from gradcheck.campaign.grouping import absorb_folded, merge
from gradcheck.engines.built_from import built_from_text
from gradcheck.graphs.regions import ORDINARY, POLE

BuiltFrom = Mapping[str, frozenset[str]]


def built_on(primitive: str, built_from: BuiltFrom) -> frozenset[str]:
    """The ops the engine builds from `primitive` (`built_from`: op -> its primitives)."""
    return frozenset(op for op, parts in built_from.items() if primitive in parts)


def primitive_of(finding: Finding, built_from: BuiltFrom) -> str | None:
    """The primitive a finding is about, when it is a bug of one op at ordinary inputs and the
    engine builds other ops from that op (None otherwise)."""
    if finding.tier != tiers.BUG or finding.region != ORDINARY or len(finding.ops) != 1:
        return None
    (op,) = finding.ops
    return op if built_on(op, built_from) else None


def covered_ops(finding: Finding, built_from: BuiltFrom) -> frozenset[str]:
    """The ops whose nodes a primitive's finding stands for in a failing graph: the primitive and
    every op built from it (empty for any other finding)."""
    op = primitive_of(finding, built_from)
    return frozenset() if op is None else built_on(op, built_from) | {op}


def _plainer_or_bigger(finding: Finding, than: Finding) -> bool:
    """Whether `finding` names its primitive better than `than`: fewer qualifiers, then more graphs."""
    return (len(finding.variant or ()), -finding.graphs) < (len(than.variant or ()), -than.graphs)


def _through(finding: Finding) -> set[str]:
    """The ops a finding fails through: its culprits' ops when it has culprits (a shrunk
    `exp ∘ sub` that passes with its sub frozen fails through sub), else all its ops."""
    if finding.culprits:
        return {re.split(r"[(\[]", v, maxsplit=1)[0] for v in finding.culprits}  # 'sub(c, x)': sub
    return set(finding.ops)


def _rule(finding: Finding) -> tuple[object, ...]:
    """A finding's signature without its ops: the same rule, whichever ops met it."""
    signature = tuple(finding.signature)
    return (signature[0], *signature[2:])


def _ordinary_rule(finding: Finding) -> tuple[object, ...]:
    """The rule a finding is of, a special region other than a pole taken as ordinary inputs (as
    `grouping.group_findings` joins them: a rule wrong at ordinary inputs is wrong there too)."""
    if finding.region in (ORDINARY, POLE, ""):
        return _rule(finding)
    return _rule(replace(finding, region=ORDINARY))


def fold_into_primitives(findings: Sequence[Finding], built_from: BuiltFrom) -> list[Finding]:
    """`findings` with each bug whose every op (every culprit's, for a shrunk one) is a primitive or
    built from it folded into that primitive's plainest finding of the same rule (see the module
    docstring), which says which ops are built from it. Order kept, the folded ones gone."""
    if not built_from:
        return list(findings)
    targets: dict[tuple[object, ...], Finding] = {}
    for f in findings:
        op = primitive_of(f, built_from)
        key = (op, _rule(f))
        if op is not None and (key not in targets or _plainer_or_bigger(f, targets[key])):
            targets[key] = f
    folded: dict[int, list[Finding]] = {}  # id of a target -> the findings folded into it
    for f in findings:
        if f.tier != tiers.BUG or any(f is t for t in targets.values()):
            continue
        through = _through(f)
        for primitive in sorted({p for op in through for p in built_from.get(op) or {op}}):
            target = targets.get((primitive, _ordinary_rule(f)))
            if target is not None and through <= built_on(primitive, built_from) | {primitive}:
                folded.setdefault(id(target), []).append(f)
                break
    return absorb_folded(
        findings, folded, lambda target, group: _absorbing(target, group, built_on(target.ops[0], built_from))
    )


def _absorbing(primitive: Finding, group: Sequence[Finding], built: frozenset[str]) -> Finding:
    """The primitive's finding with `group` folded in, saying which ops are built from it
    (`built`), and named by only the qualifiers every form of it that failed shares: none when an
    op built from it failed too (its nodes take the primitive in forms of their own)."""
    whole = merge([primitive, *group], prefer=[primitive])
    variant: tuple[str, ...] | None = primitive.variant
    if any(g.ops != primitive.ops for g in group):
        variant = ()
    elif variant:
        shared = set(variant).intersection(*(g.variant or () for g in group))
        variant = tuple(v for v in variant if v in shared)
    merged: Merged = replace(whole.merged, built_from=(counted_here(primitive.ops[0], built),))
    return replace(whole, variant=variant, merged=merged)


def counted_here(primitive: str, built: frozenset[str]) -> str:
    """What a primitive's finding says of the ops built from it (`built`) whose failures it counts:
    "div, neg and sub are built from mul in this engine: their failures are counted here"."""
    return f"{built_from_text(primitive, sorted(built))}: their failures are counted here"


def counting_built(finding: Finding, graph_ops: set[str], built_from: BuiltFrom) -> Finding:
    """A primitive's finding counted for a graph of `graph_ops`, saying which ops are built from it
    where the graph holds one of them (its nodes failed for the primitive's mistake)."""
    built = built_on(finding.ops[0], built_from)
    if not built & graph_ops:
        return finding
    return replace(finding, merged=replace(finding.merged, built_from=(counted_here(finding.ops[0], built),)))
