"""The campaign's edge-value phase: the ops it draws, each at its edge values (`gradcheck.parity.edge_check`),
reported as findings (phase "edges"), one per root cause (op, input region, check, kind and tier)
however many edge cases and exception types share it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcheck.campaign.findings import Finding, Merged, raised_type
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.tiers import tier_of
from gradcheck.campaign.variants import variant_of
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.regions import region_of
from gradcheck.parity.edge_check import EdgeProblem, check_edges

# How many of a finding's edge cases its problems list shows.
SHOWN_CASES = 5


@dataclass
class EdgeReport:
    """The phase's outcome: every edge case that differs from torch, the findings they make, how
    many findings the campaign gained by them (`new_findings`) and the time it took."""

    problems: list[EdgeProblem]
    findings: list[Finding]
    new_findings: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """One line: "edge-value phase: 2 new finding(s) over the ops' edge values; 0.8 s"."""
        return (
            f"edge-value phase: {self.new_findings} new finding(s) over the ops' edge values; "
            f"{self.seconds:.1f} s"
        )


def edge_findings(adapter: EngineAdapter, ops: Sequence[str]) -> list[Finding]:
    """The engine at every edge case of `ops`, differences from torch grouped into findings."""
    return findings_of(check_edges(adapter, ops), adapter)


def findings_of(problems: Sequence[EdgeProblem], adapter: EngineAdapter) -> list[Finding]:
    """Edge cases that differ from torch, grouped into findings (one per op, kind, check, region)."""
    groups: dict[tuple[Any, ...], list[EdgeProblem]] = {}
    for problem in problems:
        region = region_of(problem.graph)
        # one rule at one region can be an edge at some cases and a bug at others: `x ** 0` at
        # 0.0 (torch 1, gradient 0) is a bug, `x ** -1` at 0.0 (torch inf) an edge
        tier = tier_of(problem.kind, [problem.problem], problem.graph.to_dict(), region, problem.check)
        key = (problem.op, problem.kind.value, problem.check, region, tier, variant_of(problem.graph))
        groups.setdefault(key, []).append(problem)
    findings = []
    for (op, _, check, region, tier, _), problems in groups.items():
        first = problems[0]
        raised = sorted({t for t in (raised_type([p.problem]) for p in problems) if t})
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
                problems=tuple(replace(p.problem, case=p.where) for p in problems[:SHOWN_CASES]),
                snippet=adapter.snippet(first.graph),  # None: the report shows torch's code
                merged=Merged(raised=tuple(raised)) if len(raised) > 1 else Merged(),
                tier=tier,
            )
        )
    return group_findings(findings)
