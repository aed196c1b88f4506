"""The structural phase run and diagnosed: each check of `gradcheck.campaign.structure` on the
engine's simplest ops, and one finding per cause the failed checks show, kind `structural` (or
`nondeterministic` when only some rebuilds differ), with a plain name and no ops: the graph code
is to blame.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from gradcheck.campaign import tiers
from gradcheck.campaign.explain import every_variant
from gradcheck.campaign.findings import Finding, GraphCode
from gradcheck.campaign.machinery import (
    ACCUMULATION,
    ORDER,
    SEED,
    UNREVERSED,
    UPSTREAM,
    assigning,
    machinery_cases,
    on_every_build,
    unreached,
)
from gradcheck.campaign.structure import (
    BUILD_ORDER,
    EVERY_PATH,
    NO_VISITED,
    OBJECT_CHECKS,
    RECURSION_LIMIT,
    CaseResult,
    StructureReport,
    depth_case,
    object_case,
    paths_case,
    right_alone,
    sharing_case,
    sharing_graphs,
    simplest_ops,
    tree_graph,
)
from gradcheck.campaign.structure_reference import TORCH, Reference
from gradcheck.campaign.structure_repro import with_engine_repro
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.tracing import stage
from gradcheck.graphs.regions import ORDINARY
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What

# --- the phase --------------------------------------------------------------------------------------


def run_structure(
    adapter: EngineAdapter, ops: Sequence[str] | None = None, reference: Reference = TORCH
) -> StructureReport:
    """Every structural check of `adapter` on its simplest ops, and the findings they show, the
    engine's numbers judged by `reference` (torch's answers, or the exact values)."""
    started = time.perf_counter()
    ops = sorted(adapter.ops) if ops is None else ops
    stage("backward() itself")
    machinery = machinery_cases(adapter, ops, reference)
    if any(c.cause == SEED and on_every_build(c) for c in machinery) or unreached(machinery):
        # the root's seed, or an order that runs nodes before their gradient: every other check would fail
        findings = [with_engine_repro(f, adapter) for f in diagnose(machinery)]
        return StructureReport(machinery, findings, time.perf_counter() - started)
    # an op whose backward is wrong under a gradient from above would fail every check built on it
    upstream = {c.graph.nodes[0].op for c in _failed(machinery, UPSTREAM) if c.graph and on_every_build(c)}
    wrong = [
        op
        for op in ("add", "mul")
        if op in ops and (op in upstream or not right_alone(adapter, op, reference=reference))
    ]
    simplest = simplest_ops([op for op in ops if op not in wrong])
    if simplest is None:
        detail = "the engine has neither add nor mul"
        if wrong:
            detail = (
                f"the engine's {' and '.join(wrong)} differ from {reference.alone} alone: "
                "every check would fail"
            )
        case = CaseResult("every structural check", "all", "not applicable", detail=detail)
        cases = [*machinery, case]
        findings = [with_engine_repro(f, adapter) for f in diagnose(_own_failures(cases, adapter))]
        return StructureReport(cases, findings, time.perf_counter() - started)
    base, combine = simplest
    cases = list(machinery)
    for name, graph in sharing_graphs(base, combine).items():
        stage(name)  # each check is progress for a watching supervisor
        if len(graph.outputs) > 1 and "mul" in wrong:
            detail = (
                "the adapter weights two outputs with the engine's mul, "
                f"which differs from {reference.alone} alone"
            )
            cases.append(CaseResult(name, "sharing", "not applicable", detail=detail))
            continue
        cases.append(sharing_case(adapter, name, graph, reference=reference))
    tree = tree_graph(base, combine)
    for name in OBJECT_CHECKS:
        stage(name)
        cases.append(object_case(adapter, name, tree, reference=reference))
    stage("deep chains")
    cases.append(depth_case(adapter, combine))
    stage("a ladder of shared nodes")
    cases.append(paths_case(adapter, combine))
    findings = [with_engine_repro(f, adapter) for f in diagnose(_own_failures(cases, adapter))]
    return StructureReport(cases, findings, time.perf_counter() - started)


def _own_failures(cases: Sequence[CaseResult], adapter: EngineAdapter) -> list[CaseResult]:
    """The cases, less the machinery failures of an op the engine builds from another op that
    fails the same check (a sub built as `x + (-y)`, whose `-y` is a mul that assigns, fails `x - x`
    because of mul): that op's failure is its primitive's (`EngineAdapter.built_from`)."""
    built_from = getattr(adapter, "built_from", None) or {}
    failing: dict[str, set[str]] = {}
    for c in cases:
        if c.cause in (ACCUMULATION, UPSTREAM) and c.status == "failed" and c.graph is not None:
            failing.setdefault(c.cause, set()).add(c.graph.nodes[0].op)
    return [
        c
        for c in cases
        if not (
            c.cause in failing
            and c.status == "failed"
            and c.graph is not None
            and set(built_from.get(c.graph.nodes[0].op, ())) & (failing[c.cause] - {c.graph.nodes[0].op})
        )
    ]


def _failed(cases: Sequence[CaseResult], cause: str) -> list[CaseResult]:
    return [c for c in cases if c.cause == cause and c.status == "failed"]


def _near(ratio: float | None, value: float) -> bool:
    return ratio is not None and abs(ratio - value) < 1e-9


# The checks other than the shared-node ones that are built more than once (a deep chain is built
# once per depth, and the ladder's runs are its depths).
_REBUILT = (SEED, ACCUMULATION, UPSTREAM, "backward-twice", "reset", "interior")


def diagnose(cases: Sequence[CaseResult]) -> list[Finding]:
    """One finding per cause the failed checks show, named plainly (see the module docstring). A
    rebuilt check that fails on some builds only names no mistake of its own: with the shared-node
    checks that do so, it is one finding, of an order that depends on the build."""
    findings: list[Finding] = []
    starved = unreached(cases)
    if starved:  # backward() itself: each op's upstream failure, and the machinery's others, its echoes
        order = _structural_finding(UNREVERSED, starved, cause=ORDER)
        note = "an input's gradient is 0 where torch's is not, though the op alone is right"
        return [replace(order, problems=tuple(replace(p, note=note) for p in order.problems))]
    on_some = [c for c in cases if c.cause in _REBUILT and c.status == "failed" and not on_every_build(c)]
    cases = [c for c in cases if c not in on_some]
    shared, twice = _failed(cases, "sharing"), _failed(cases, "backward-twice")
    paths = _failed(cases, "paths")
    reset, interior = _failed(cases, "reset"), _failed(cases, "interior")
    for case in _failed(cases, SEED):
        findings.append(_structural_finding(_seed_name(case), [case], cause=SEED))
    accumulation = _failed(cases, ACCUMULATION)
    assigns = [c for c in accumulation if assigning(c)]
    if assigns:  # one use overwriting another: what the shared-node and backward-twice checks show
        ops = [c.name.partition(" ")[0] for c in assigns]
        applicable = [c for c in cases if c.cause == ACCUMULATION and c.status != "not applicable"]
        if len(ops) > 1 and len(ops) == len(applicable):
            name = "gradients are assigned, not accumulated (`=` where `+=` belongs)"
        elif len(ops) == 1:
            name = f"{ops[0]}'s backward assigns its gradients (`=` where `+=` belongs)"
        else:
            named = f"{', '.join(ops[:-1])} and {ops[-1]}"
            name = f"the backward of {named} assigns its gradients (`=` where `+=` belongs)"
        findings.append(_structural_finding(name, [*assigns, *shared, *twice], cause=ACCUMULATION))
        shared, twice = [], []
    for case in accumulation:
        if not assigning(case):
            name = f"{case.name}: its gradient is not the sum of the two uses'"
            findings.append(_structural_finding(name, [case], cause=ACCUMULATION))
    findings += [_upstream_finding(case) for case in _failed(cases, UPSTREAM)]
    if any(c.failures < c.runs for c in shared) or on_some:
        varying = [*shared, *on_some]
        runs, fails = sum(c.runs for c in varying), sum(c.failures for c in varying)
        rate = f"fails {fails} of {runs} rebuilds"
        order = _structural_finding(BUILD_ORDER, varying, Kind.NONDETERMINISTIC, rate, cause="sharing")
        findings.append(order)
    elif shared:
        first = shared[0]
        if _near(first.ratio, 0.5) and twice and _near(twice[0].ratio, 0.5):
            name = "gradients are assigned, not accumulated (`=` where `+=` belongs)"
            findings.append(_structural_finding(name, shared + twice))
            twice = []
        elif first.ratio is not None and first.ratio > 1 and paths:  # one slip, both its signs
            echoes = [c for c in twice if c.ratio is not None and c.ratio > 1]
            findings.append(_structural_finding(NO_VISITED, [*shared, *paths, *echoes], cause="sharing"))
            paths, twice = [], [c for c in twice if c not in echoes]
        elif first.ratio is not None and first.ratio > 1:
            twice_word = "twice" if _near(first.ratio, 2) else "more than once"
            findings.append(_structural_finding(f"a shared node's gradient is counted {twice_word}", shared))
        elif first.ratio is not None and first.ratio < 1:
            findings.append(
                _structural_finding("a shared node's gradient is lost (one use overwrites another)", shared)
            )
        else:
            findings.append(_structural_finding("a shared node's gradient differs from torch's", shared))
    if twice and reset:
        name = "zero_grad leaves interior gradients, which the next backward() adds again"
        findings.append(_structural_finding(name, twice + reset, cause="zero-grad"))
    elif twice:
        findings.append(_structural_finding("backward() twice does not accumulate like torch", twice))
    elif reset:
        findings.append(_structural_finding("gradients reset and taken again differ from torch's", reset))
    if interior:
        findings.append(_structural_finding("interior nodes' gradients differ from torch's", interior))
    for case in _failed(cases, "depth"):
        findings.append(_structural_finding(_depth_name(case), [case], depth=case.depth))
    for case in paths:
        findings.append(_structural_finding(EVERY_PATH, [case]))
    return findings


def _seed_name(case: CaseResult) -> str:
    """The seed finding's name, without the numbers of its check (in its problems)."""
    if case.ratio == 0:
        return "backward() never sets the root's gradient to 1: every gradient is 0"
    if case.ratio == 1:
        return "backward() sets every node's gradient to 1, not the root's alone"
    if case.ratio is not None:
        return "backward() seeds the root with another number than 1: every gradient is scaled by it"
    return "backward() does not seed the root's gradient with 1"


def _upstream_finding(case: CaseResult) -> Finding:
    """An op whose backward is right only where the gradient from above is 1: the op's own bug,
    at ordinary inputs (it merges with the op's other wrong numbers there), its culprits every node
    of the op, so that any graph failing only through them is explained by it."""
    assert case.graph is not None
    op = case.graph.nodes[0].op
    one_op = case.graph.to_dict()
    return Finding(
        kind=Kind.WRONG_GRADIENT,
        ops=(op,),
        check="gradient",
        graph=one_op,
        phase="structure",
        region=ORDINARY,
        tier=tiers.BUG,
        problems=(_problem(case),),
        variant=(),
        culprits=(every_variant(op),),
        graph_code=GraphCode(UPSTREAM, (case.name,)),
    )


def _depth_name(case: CaseResult) -> str:
    """The deep-chain finding's name: what failed, without the depth or the engine's numbers (in
    its problems), so that it names one finding whatever depth a run met it at."""
    if case.recursion_limit:
        return RECURSION_LIMIT
    return f"a deep chain raises {case.raised.type}" if case.raised else "a deep chain differs from torch"


def _structural_finding(
    name: str,
    cases: Sequence[CaseResult],
    kind: Kind = Kind.STRUCTURAL,
    rate: str = "",
    cause: str = "",
    depth: int | None = None,
) -> Finding:
    graph = next(c.graph for c in cases if c.graph is not None)
    return Finding(
        kind=kind,
        ops=(),
        check="gradient",
        graph=graph.to_dict(),
        phase="structure",
        where=name,
        graphs=len(cases),
        problems=tuple(_problem(c) for c in cases),
        rate=rate,
        graph_code=GraphCode(cause or cases[0].cause, tuple(c.name for c in cases), depth),
    )


def _problem(case: CaseResult) -> Problem:
    """A failed check as a problem: its name, its evidence and, rebuilt, how often it failed."""
    rate = (case.failures, case.runs) if case.runs > 1 else None
    return Problem(What.STRUCTURAL, case=case.name, note=case.detail, rate=rate, raised=case.raised)
