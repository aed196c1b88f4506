"""Findings: the distinct problems a campaign found, each with its kind, its minimal graph and its graphs.

Any phase of a campaign contributes findings (the op-isolation pass, the random graphs, an
edge-value table): one `Finding` per failing check, then `group_findings` merges those with the
same `signature` (kind, the ops of the minimal graph, which check failed, where) into one
finding that covers them all, so one bug reads as one line however many graphs it broke.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED, Kind

# Which part of a check failed (a finding's `check`).
CHECKS = ("forward", "gradient", "second-derivative")
# The phases that contribute findings (a finding's `phase`); later phases may add their own name.
PHASES = ("isolation", "random", "edges", "corpus")
CONVENTIONS = ("torch", "subgradient")

Signature = tuple[str, tuple[str, ...], str, str]

# How a title says each kind.
_KIND_WORDS = {
    Kind.WRONG_GRADIENT: "wrong gradient",
    Kind.WRONG_SECOND_DERIVATIVE: "wrong second derivative",
    Kind.WRONG_VALUE: "wrong value",
    Kind.NONFINITE: "nan/inf unlike torch",
    Kind.EXCEPTION: "engine raised",
    Kind.WRONG_TYPE: "not a number",
    Kind.CONVENTION: "convention at a kink",
}
# The kinds whose place (`where`) is part of their signature: slopes.
_PLACED_KINDS = frozenset({Kind.CONVENTION, Kind.WRONG_GRADIENT, Kind.WRONG_SECOND_DERIVATIVE})
# How the checker words an exception of the engine ("engine raised ZeroDivisionError: ...").
_RAISED = re.compile(r"engine raised ([A-Za-z_][\w.]*)")


@dataclass(frozen=True)
class Finding:
    """One distinct problem: what went wrong (`kind`, `check`), on which ops, shown by which graph.

    ops: the sorted op names of the minimal graph `graph` (the graph JSON a replay re-runs).
    where: a short place beyond the ops, e.g. "at 0" for a kink or edge value ("" for anywhere).
    graphs / graph_indices: how many graphs of the phase this finding covers, and their indices
    (indices of random graphs; an isolation or edge finding covers its own cases).
    problems: the checker's messages on the minimal graph. repro: the command that replays it.
    snippet: code that shows the bug in the engine's own terms (or None).
    """

    kind: Kind
    ops: tuple[str, ...]
    check: str
    graph: Mapping[str, Any]
    phase: str = "random"
    where: str = ""
    graphs: int = 1
    graph_indices: tuple[int, ...] = ()
    problems: tuple[str, ...] = ()
    repro: str = ""
    snippet: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))
        object.__setattr__(self, "ops", tuple(sorted(set(self.ops))))
        object.__setattr__(self, "graph_indices", tuple(self.graph_indices))
        object.__setattr__(self, "problems", tuple(self.problems))
        if self.check not in CHECKS:
            raise ValueError(f"Finding: check must be one of {CHECKS}, got {self.check!r}")
        if self.graphs < 1:
            raise ValueError(f"Finding: graphs must be at least 1, got {self.graphs}")

    @property
    def signature(self) -> Signature:
        """What makes two failing graphs the same problem: kind, minimal ops, check, and where for
        a slope (a kink's slope is judged apart from the rule elsewhere), or which exception the
        engine raised (ZeroDivisionError at 0 is one problem whether the edge table, the isolation
        pass or a random graph met it; an OverflowError of the same op is another)."""
        if self.kind in _PLACED_KINDS:
            detail = self.where
        else:
            detail = self.raised if self.kind is Kind.EXCEPTION else ""
        return (self.kind.value, self.ops, self.check, detail)

    @property
    def raised(self) -> str:
        """The type of exception the engine raised, as the problems name it ("" if none does)."""
        return raised_type(self.problems)

    @property
    def cases(self) -> dict[str, int]:
        """How many cases of each phase this finding covers (a random graph is one case); a finding
        merged from several phases (`group_findings`) keeps each phase's count apart."""
        return dict(self.extra.get("cases") or {self.phase: self.graphs})

    @property
    def covers(self) -> str:
        """What the finding's count counts: "3 graph(s): graphs 7, 76, ..." and/or the other
        phases' cases ("5 edge-value case(s)")."""
        parts = []
        for phase, n in _in_phase_order(self.cases):
            if phase == "random" and self.graph_indices:
                shown = ", ".join(map(str, self.graph_indices[:20])) + (
                    " ..." if len(self.graph_indices) > 20 else ""
                )
                parts.append(f"{n} graph(s): graphs {shown}")
            else:
                parts.append(f"{n} {_CASE_WORDS.get(phase, phase + ' case(s)')}")
        return "; ".join(parts)

    @property
    def count_text(self) -> str:
        """The count for a one-line summary: "93 graphs", "24 edge-value cases", or both."""
        parts = []
        for phase, n in _in_phase_order(self.cases):
            unit = _CASE_UNITS.get(phase, f"{phase} case")
            parts.append(f"{n} {unit}{'s' if n != 1 else ''}")
        return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)

    @property
    def title(self) -> str:
        """A one-line name: "relu — wrong gradient", "pow_const at 0 — engine raised"."""
        ops = " ∘ ".join(self.ops) if self.ops else "(no op)"
        place = f" {self.where}" if self.where else ""
        kind = _KIND_WORDS[self.kind]
        if self.kind is Kind.EXCEPTION and self.raised:
            kind += f" {self.raised}"
        if self.check == "second-derivative" and self.kind is not Kind.WRONG_SECOND_DERIVATIVE:
            kind += " (second derivatives)"
        elif self.check == "forward" and self.kind is Kind.NONFINITE:
            kind += " (value)"
        return f"{ops}{place} — {kind}"

    def is_failure(self, conventions: str = "torch") -> bool:
        """Whether this finding fails the run: under `subgradient` conventions only a note."""
        if conventions not in CONVENTIONS:
            raise ValueError(f"conventions must be one of {CONVENTIONS}, got {conventions!r}")
        return not (conventions == "subgradient" and self.kind in SUBGRADIENT_TOLERATED)

    def to_dict(self) -> dict[str, Any]:
        """The finding as report.json writes it (graph JSON included)."""
        return {
            "kind": self.kind.value,
            "ops": list(self.ops),
            "check": self.check,
            "phase": self.phase,
            "where": self.where,
            "title": self.title,
            "graphs": self.graphs,
            "graph_indices": list(self.graph_indices),
            "problems": list(self.problems),
            "repro": self.repro,
            "snippet": self.snippet,
            "graph": dict(self.graph),
            **({"extra": dict(self.extra)} if self.extra else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        """A finding read back from report.json (`to_dict`'s inverse)."""
        missing = [k for k in ("kind", "ops", "check", "graph") if k not in d]
        if missing:
            raise ValueError(f"finding: missing field(s) {missing}")
        return cls(
            kind=Kind(d["kind"]),
            ops=tuple(d["ops"]),
            check=d["check"],
            graph=d["graph"],
            phase=d.get("phase", "random"),
            where=d.get("where", ""),
            graphs=int(d.get("graphs", 1)),
            graph_indices=tuple(d.get("graph_indices", ())),
            problems=tuple(d.get("problems", ())),
            repro=d.get("repro", ""),
            snippet=d.get("snippet"),
            extra=d.get("extra", {}),
        )


def raised_type(problems: Iterable[str]) -> str:
    """The exception type the first "engine raised X: ..." among checker messages names ("" if none)."""
    for problem in problems:
        match = _RAISED.search(problem)
        if match:
            return match.group(1)
    return ""


def graph_size(graph: Mapping[str, Any]) -> tuple[int, int]:
    """How big a graph JSON is (op nodes, inputs): the smaller one is the better repro."""
    return (len(graph.get("nodes", ())), len(graph.get("inputs", ())))


def group_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Merge findings with the same signature: counts add, indices join, the smallest graph is the repro.

    Order: failures before notes are the caller's business; here, most graphs first, then by
    title, so the output does not depend on the order findings arrived in (a pool's order).
    """
    groups: dict[Signature, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.signature, []).append(f)
    merged = [_merge(group) for group in groups.values()]
    return sorted(merged, key=lambda f: (-f.graphs, f.title, f.phase))


def _merge(group: Sequence[Finding]) -> Finding:
    best = min(group, key=lambda f: (graph_size(f.graph), _phase_rank(f.phase), f.graph_indices))
    indices = sorted({i for f in group for i in f.graph_indices})
    cases: dict[str, int] = {}
    for f in group:
        for phase, n in f.cases.items():
            cases[phase] = cases.get(phase, 0) + n
    extra = {**best.extra, "cases": cases} if len(cases) > 1 else best.extra
    return replace(best, graphs=sum(f.graphs for f in group), graph_indices=tuple(indices), extra=extra)


def _phase_rank(phase: str) -> int:
    return PHASES.index(phase) if phase in PHASES else len(PHASES)


def failing(findings: Iterable[Finding], conventions: str = "torch") -> list[Finding]:
    """The findings that fail a run under `conventions`."""
    return [f for f in findings if f.is_failure(conventions)]


def summary(findings: Sequence[Finding], conventions: str = "torch") -> str:
    """One line: "2 distinct problems: relu — wrong gradient, 93 graphs; ..." (notes counted apart)."""
    fails = failing(findings, conventions)
    notes = [f for f in findings if not f.is_failure(conventions)]
    if not findings:
        return "no distinct problems"
    parts = []
    if fails:
        word = "problem" if len(fails) == 1 else "problems"
        parts.append(f"{len(fails)} distinct {word}: " + "; ".join(_line(f) for f in fails))
    if notes:
        word = "note" if len(notes) == 1 else "notes"
        parts.append(f"{len(notes)} convention {word}: " + "; ".join(_line(f) for f in notes))
    return " | ".join(parts)


def _line(f: Finding) -> str:
    return f"{f.title}, {f.count_text}"


# How a phase's cases are named: in a finding's detail (`covers`) and in a one-line summary.
_CASE_WORDS = {"edges": "edge-value case(s)", "isolation": "case(s) of the op-isolation pass"}
_CASE_UNITS = {"random": "graph", "edges": "edge-value case", "isolation": "op-isolation case"}


def _in_phase_order(cases: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(cases.items(), key=lambda item: _phase_rank(item[0]))


def replay_command(path: str, engine: str, index: int | None = None) -> str:
    """The command that re-runs a saved graph (a corpus file, or finding `index` of a report.json)."""
    cmd = ["python", "-m", "gradcheck", "replay", path, "--engine", engine]
    if index is not None:
        cmd += ["--finding", str(index)]
    return shlex.join(cmd)
