"""The campaign's edge-value phase: the ops it draws, each at its edge values (`gradcheck.parity.edges`),
reported as findings (phase "edges"), one per root cause (op, input region, check and kind) however
many edge cases and exception types share it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from gradcheck.campaign.findings import Finding, group_findings, raised_type
from gradcheck.campaign.statistics import CampaignResult
from gradcheck.campaign.structure import with_rates
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.regions import region_of
from gradcheck.parity.edges import EdgeProblem, check_edges

# How many of a finding's edge cases its problems list shows.
SHOWN_CASES = 5


def edge_findings(adapter: EngineAdapter, ops: Sequence[str]) -> list[Finding]:
    """The engine at every edge case of `ops`, differences from torch grouped into findings."""
    groups: dict[tuple[str, str, str, str], list[EdgeProblem]] = {}
    for problem in check_edges(adapter, ops):
        key = (problem.op, problem.kind.value, problem.check, region_of(problem.graph))
        groups.setdefault(key, []).append(problem)
    findings = []
    for (op, _, check, region), problems in groups.items():
        first = problems[0]
        raised = sorted({t for t in (raised_type([p.message]) for p in problems) if t})
        findings.append(
            Finding(
                kind=first.kind,
                ops=(op,),
                check=check,
                graph=first.graph.to_dict(),
                phase="edges",
                # no `where`: the cases are in `problems`, and a rule that is wrong at edge values
                # and elsewhere alike is one finding with the random graphs' and isolation's
                region=region,
                graphs=len(problems),
                problems=tuple(f"{p.where}: {p.message}" for p in problems[:SHOWN_CASES]),
                snippet=adapter.snippet(first.graph),  # None: the report shows torch's code
                extra={"raised": raised} if len(raised) > 1 else {},
            )
        )
    return group_findings(findings)


def with_edge_findings(
    result: CampaignResult, adapter: EngineAdapter, ops: Sequence[str], dtype: str = "float64"
) -> CampaignResult:
    """`result` with the edge-value phase's findings joined to its own (merged by signature), each
    re-checked on rebuilds first (one that does not always fail is nondeterministic)."""
    edges = with_rates(edge_findings(adapter, ops), adapter, dtype)
    return dataclasses.replace(result, findings=group_findings([*result.findings, *edges]))
