"""Grouping: the findings of every phase merged into one per root cause (`group_findings`), each
shown by its best example (`example_rank`: the smallest graph, then one without tiny inputs, then
a plainly wrong number at inputs near 1, then the furthest outside its allowance); counts add up,
indices join, and a merged finding keeps what its cases covered beyond its example
(`findings.Merged`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.campaign import tiers
from gradcheck.campaign.findings import CHECKS, PLAINLY_WRONG, Finding, phase_rank
from gradcheck.campaign.mistake_match import readable
from gradcheck.campaign.variants import plainer
from gradcheck.graphs.regions import ORDINARY, POLE, tiny
from gradcheck.parity.kinds import Kind


def raised_types(findings: Iterable[Finding]) -> list[str]:
    """The distinct exception types the findings' cases raised, sorted."""
    return sorted({t for f in findings for t in f.raised.split("/") if t})


def graph_size(graph: Mapping[str, Any]) -> tuple[int, int]:
    """How big a graph JSON is (op nodes, inputs): the smaller one is the better repro."""
    return (len(graph.get("nodes", ())), len(graph.get("inputs", ())))


def group_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Merge findings with the same cause (signature, tier, variant): counts add, indices join, the
    smallest graph is the repro.

    A rule that is wrong at ordinary inputs is wrong at special ones too: a finding at a special
    region other than a pole (a kink, a tie, an overflow point, nan/inf, tiny magnitudes) joins
    the ordinary finding of the same kind, ops, check and variant when there is one (and takes its
    tier; an exception, only when the ordinary one raised its types), so relu's slope of 2 is one
    finding, not one per edge value. A pole keeps its own
    finding (a rule raising at a divisor of 0 is another problem than the same op raising
    everywhere). Likewise an edge-tier finding joins the bug of the same cause and variant
    (maximum's partials (0, 0) at a tie of 1e300s are its bug at a tie of 1.0s). A finding of a
    variant joins the one of a plainer variant (fewer qualifiers, otherwise the same cause): the
    title then names only what the failures need. An op's wrong numbers at ordinary inputs share
    one signature (`Finding.signature`): one finding whose title names each kind it covers.

    Order: bugs first, then the other tiers (`tiers.TIERS`); within a tier most graphs first, then
    by title, so the output does not depend on the order findings arrived in (a pool's order).
    """
    findings = list(findings)
    apart = (tiers.ADAPTER, tiers.TORCH_OFF)  # an adapter's faults, torch's: not the engine's rules
    ordinary = {
        (f.kind, f.ops, f.check, f.variant): f.tier
        for f in findings
        if f.region == ORDINARY and f.tier not in apart
    }
    raised_ordinarily: dict[tuple[Any, ...], set[str]] = {}
    for f in findings:
        if f.region == ORDINARY and f.tier not in apart:
            raised_ordinarily.setdefault((f.kind, f.ops, f.check, f.variant), set()).update(raised_types([f]))
    joined: set[int] = set()  # findings moved to another's region or tier: not the repro when others are
    adjusted = []
    for f in findings:
        key = (f.kind, f.ops, f.check, f.variant)
        joins = ordinary.get(key)
        # an exception joins only one raising the same: log's ValueError below 0 (math's domain,
        # the correct engine's too) is not a 1/log(x) dividing by zero at x = 1
        if f.kind is Kind.EXCEPTION and not set(raised_types([f])) <= raised_ordinarily.get(key, set()):
            joins = None
        if f.region not in (ORDINARY, POLE, "") and joins is not None and f.tier not in apart:
            f = replace(f, region=ORDINARY, tier=joins)
            joined.add(id(f))
        adjusted.append(f)
    # an edge joins a bug of its own kind and check only: nan/inf where torch's answer is inf or
    # nan is edge behaviour beside a wrong gradient of the same op
    bugs = {(*f.own_signature, f.variant) for f in adjusted if f.tier == tiers.BUG}
    groups: dict[tuple[Any, ...], list[Finding]] = {}
    for f in adjusted:
        if f.tier == tiers.EDGE and (*f.own_signature, f.variant) in bugs:  # the bug's rule, at an edge
            f = replace(f, tier=tiers.BUG)
            joined.add(id(f))
        groups.setdefault(f.cause, []).append(f)
    plainest: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # a variant's cause -> the plainest one's
    for cause in groups:
        if cause[0] == tiers.ADAPTER or not cause[-1]:
            continue
        plainer_ones = [c for c in groups if c[:-1] == cause[:-1] and plainer(cause[-1], c[-1])]
        if plainer_ones:
            plainest[cause] = min(plainer_ones, key=lambda c: (len(c[-1]), -sum(f.graphs for f in groups[c])))
    merged = []
    for cause, group in groups.items():
        if plainest.get(cause, cause) != cause:
            continue
        variants = [f for c, g in groups.items() if c != cause and plainest.get(c) == cause for f in g]
        prefer = [f for f in group if id(f) not in joined] or group
        merged.append(_merge([*group, *variants], prefer=prefer))
    found = {op for f in merged if f.tier != tiers.ADAPTER for op in f.ops}
    merged = [
        replace(f, op_has_findings=True) if f.tier == tiers.ADAPTER and set(f.ops) & found else f
        for f in merged
    ]
    return sorted(merged, key=fix_first_order)


def fix_first_order(f: Finding) -> tuple[Any, ...]:
    """Where a finding comes among what to fix first: by tier (`tiers.fix_first_rank`), then a
    number the value class refuses (phase "inspection": `2 - x` raising wherever it is written,
    one case only, since the campaign passes the number as a value afterwards) before the rest,
    then the one covering more graphs (a mistake failing 800 graphs above a 28-graph bug)."""
    return (
        tiers.fix_first_rank(f.tier),
        f.phase != "inspection",
        -f.graphs,
        tiers.tier_rank(f.tier),
        f.title,
        f.phase,
    )


def absorb_folded(
    findings: Sequence[Finding],
    folded: Mapping[int, Sequence[Finding]],
    absorb: Callable[[Finding, Sequence[Finding]], Finding],
) -> list[Finding]:
    """`findings` with each one folded into another gone and each target (its id a key of `folded`)
    replaced by `absorb(target, what was folded into it)`; order kept."""
    gone = {id(f) for group in folded.values() for f in group}
    out = []
    for f in findings:
        if id(f) in gone:
            continue
        group = folded.get(id(f))
        out.append(absorb(f, group) if group else f)
    return out


def merge(group: Sequence[Finding], prefer: Sequence[Finding] = ()) -> Finding:
    """One finding for `group`, as `group_findings` merges the findings of one cause."""
    return _merge(group, prefer)


def _merge(group: Sequence[Finding], prefer: Sequence[Finding] = ()) -> Finding:
    """One finding for `group`; its repro the smallest graph (of `prefer` when given: the findings
    of the variant the merged one is named by), among those the most telling (furthest outside its
    allowance)."""
    best = min(
        prefer or group,
        key=lambda f: (
            *example_rank(f.graph, excess(f), f.kind in PLAINLY_WRONG),
            phase_rank(f.phase),
            f.graph_indices,
        ),
    )
    indices = sorted({i for f in group for i in f.graph_indices})
    cases: dict[str, int] = {}
    for f in group:
        for phase, n in f.cases.items():
            cases[phase] = cases.get(phase, 0) + n
    merged = replace(best.merged, cases=cases) if len(cases) > 1 else best.merged
    raised = raised_types(group)
    if raised and "/".join(raised) != best.raised:  # more types, or the repro's case raised none
        merged = replace(merged, raised=tuple(raised))
    kinds = sorted({f.kind for f in group} | set(best.merged.kinds), key=lambda k: k.value)
    checks = sorted({c for f in group for c in f.merged.checks or (f.check,)}, key=CHECKS.index)
    if len(kinds) > 1:
        merged = replace(merged, kinds=tuple(kinds))
    if len(checks) > 1:
        merged = replace(merged, checks=tuple(checks))
    answers = sorted(
        {a for f in group for a in f.merged.answers or [p.answer_type for p in f.problems]} - {""}
    )
    if len(kinds) > 1 and answers:
        merged = replace(merged, answers=tuple(answers))
    built = sorted({said for f in group for said in f.merged.built_from})
    if built:
        merged = replace(merged, built_from=tuple(built))
    explains = tuple(dict.fromkeys(said for f in group for said in f.merged.explains))
    if explains:
        merged = replace(merged, explains=explains)
    graphs, mistake = sum(f.graphs for f in group), _one_mistake([f for f in group if f.ops == best.ops])
    rules = next((f.mistake_rules for f in group if mistake and f.mistake == mistake), ())
    return replace(
        best, graphs=graphs, graph_indices=tuple(indices), merged=merged, mistake=mistake, mistake_rules=rules
    )


def _one_mistake(group: Sequence[Finding]) -> str | None:
    """The learner's mistake the group's isolation findings all name (`Finding.mistake`): None
    where they name two, or one of its op's wrong gradients at random points that the matcher
    reads names none (a kink case, one point at the kink, and a graph with no partial of its own
    to read, `x * x` or the op beside an input under an upstream gradient, name none and say
    nothing against one). `_merge` asks of the findings of its example's ops only: an op built
    from a primitive and folded into its finding (`2 / x` built as `2 * x ** -1`, failing for
    pow_const's mistake) has a rule, and a name, of its own."""
    names = {f.mistake for f in group if f.mistake}
    unnamed = [
        f
        for f in group
        if f.phase == "isolation"
        and f.kind is Kind.WRONG_GRADIENT
        and not f.where
        and not f.mistake
        and readable(f.graph)
    ]
    return names.pop() if len(names) == 1 and not unnamed else None


def example_rank(graph: Mapping[str, Any], excess: float, plain: bool = True) -> tuple[Any, ...]:
    """How good an example of its finding a failing graph is, the best first: the smallest graph,
    then one whose inputs are not tiny (a wrong rule read at x = 0.7 rather than 3.8e-09, where
    its rounding bound is tiny and its excess huge), then one whose answer is a plainly wrong number
    (`plain`: of an op's wrong numbers, a value 1e-5 off tells more than a complex one), then one
    whose inputs stray fewer decades from 1 (x = 0.7 rather than -8333, where a wrong gradient reads
    4.8e-09 against 2.4e-09), then the furthest outside its allowance."""
    return (graph_size(graph), _has_tiny_inputs(graph), not plain, _decades_from_one(graph), -excess)


def _has_tiny_inputs(graph: Mapping[str, Any]) -> bool:
    for inp in graph.get("inputs", ()):
        try:
            if tiny(inp.get("value")).any():
                return True
        except (TypeError, ValueError):  # a value JSON spells otherwise ("inf")
            continue
    return False


def _decades_from_one(graph: Mapping[str, Any]) -> int:
    """How many whole decades the graph's inputs stray from 1 at most (0 for any in (0.1, 10))."""
    decades = 0
    for inp in graph.get("inputs", ()):
        try:
            v = np.abs(np.asarray(inp.get("value"), dtype=np.float64))
        except (TypeError, ValueError):  # a value JSON spells otherwise ("inf")
            continue
        v = v[np.isfinite(v) & (v > 0)]
        if v.size:
            decades = max(decades, int(np.max(np.abs(np.log10(v)))))
    return decades


def excess(f: Finding) -> float:
    """How far outside its allowance the finding's graph fails (`Finding.excess`; 0 when unknown)."""
    return 0.0 if f.excess is None else f.excess
