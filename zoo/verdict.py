"""A campaign's report.json against an engine's expectations: what was found, missed, unexpected."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from zoo.expectations import CHECKED_TIERS, Engine, Expected

TIERS = ("bug", "graph-code", "edge", "convention", "adapter")


@dataclass(frozen=True)
class Verdict:
    """One engine's campaign judged: findings per tier, the expected findings made and missed,
    and what nothing expected (a finding's title, or the unexplained graphs, or why there is no
    report at all)."""

    tiers: dict[str, int]
    found: tuple[Expected, ...]
    missed: tuple[Expected, ...]
    unexpected: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.missed and not self.unexpected


def judge(engine: Engine, report: dict) -> Verdict:
    """`report` (a report.json) judged against `engine`'s expectations."""
    findings = report.get("findings", [])
    tiers = Counter(f.get("tier") for f in findings)
    unexpected = [
        _described(f)
        for f in findings
        if f.get("tier") in CHECKED_TIERS and not any(e.matches(f) for e in engine.expected)
    ]
    unexplained = report.get("unexplained") or {}
    if unexplained.get("count"):
        unexpected.append(f"{unexplained['count']} failing graph(s) no finding explains")
    found = tuple(e for e in engine.expected if any(e.matches(f) for f in findings))
    missed = tuple(e for e in engine.expected if e not in found)
    return Verdict({t: tiers.get(t, 0) for t in TIERS}, found, missed, tuple(unexpected))


def no_report(engine: Engine, why: str) -> Verdict:
    """The verdict of a campaign that wrote no report (it could not start, or it crashed)."""
    return Verdict(dict.fromkeys(TIERS, 0), (), engine.expected, (why,))


def _described(finding: dict) -> str:
    tier, title, kind = finding.get("tier"), finding.get("title"), finding.get("kind")
    return f"{tier}: {title} [{kind}, {finding.get('graphs')} graphs]"
