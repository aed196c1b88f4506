"""What every report shows of a campaign's findings: the first screen (what to fix first), and
each finding's details (its problems, replay command and the code that reproduces it).

The first screen is the findings as a triage: one row per finding a user fixes in the engine or
its adapter, bugs first, then graph code, then adapter faults (each with its fix), all after the
findings where torch is off and the engine is right (judged against the exact values: the one
thing a user of torch learns nowhere else); the edge
behaviour as one compact table, one row per op and a column per input region, saying what the
engine did there; conventions as notes; the failing graphs no finding explains as one line. The
console (`gradcheck.cli.console`), report.html and the markdown summary draw this same overview,
each in its own medium, and the details of every finding follow it: `finding_code` (the engine's
own spelling when the adapter has one, torch's otherwise) and `finding_text` (a finding as a
failure message: JUnit's, the console's, a gate's new finding).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.engine_terms import in_engine_terms
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.mistake_match import local_lines
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.regions import (
    KINK,
    NONFINITE,
    OFF_DOMAIN,
    ORDINARY,
    OVERFLOW,
    PLACES,
    POLE,
    REGIONS,
    TIE,
    TINY,
)
from gradcheck.parity.kinds import Kind
from gradcheck.parity.wording import printable

# The tiers that get a row of the table, in its order (torch off first: none unless the exact
# values judge, and none when the engine under test is torch); edge and convention have their own parts.
TABLE_TIERS = (tiers.TORCH_OFF, tiers.BUG, tiers.GRAPH_CODE, tiers.ADAPTER)

# The edge table's columns: an input region and its heading, in the order a reader scans them.
EDGE_REGIONS = {
    NONFINITE: "nan/inf",
    POLE: "pole",
    OVERFLOW: "overflow",
    OFF_DOMAIN: "off domain",
    TINY: "tiny",
    TIE: "tie",
    KINK: "kink",
    ORDINARY: "ordinary",  # at ordinary inputs (a float overflowing inside the engine, say)
}

# What the engine did, in an edge table's cell (a word or two).
_EDGE_WORDS = {
    Kind.WRONG_GRADIENT: "wrong grad",
    Kind.WRONG_SECOND_DERIVATIVE: "wrong 2nd der.",
    Kind.WRONG_VALUE: "wrong value",
    Kind.NONFINITE: "inf/nan",
    Kind.EXCEPTION: "raises",
    Kind.WRONG_TYPE: "not a number",
    Kind.WRONG_SHAPE: "wrong shape",
    Kind.CONVENTION: "convention",
    Kind.STRUCTURAL: "structural",
    Kind.NONDETERMINISTIC: "nondeterministic",
}

# How the overview counts each tier ("1 bug, 2 graph-code findings, 7 edge behaviours").
_TIER_NOUNS = {
    tiers.TORCH_OFF: ("finding where torch is off", "findings where torch is off"),
    tiers.BUG: ("bug", "bugs"),
    tiers.GRAPH_CODE: ("graph-code finding", "graph-code findings"),
    tiers.ADAPTER: ("adapter fault", "adapter faults"),
    tiers.EDGE: ("edge behaviour", "edge behaviours"),
    tiers.CONVENTION: ("convention", "conventions"),
}

EDGE_HEADING = (
    "Edge behaviour (an input inf, nan, subnormal or overflowing, or torch's own answer inf or nan)"
)
NOTES_HEADING = "Conventions (a valid slope at a kink or tie that is not torch's choice)"

# How many of a finding's problems a report lists.
SHOWN_PROBLEMS = 3


@dataclass(frozen=True)
class Row:
    """One finding as a line of the overview: its number in the report (`replay --finding N`),
    its tier, what it is about (`cause`), what happened (`outcome`) and how many graphs show it."""

    number: int
    finding: Finding

    @property
    def tier(self) -> str:
        return self.finding.tier

    @property
    def cause(self) -> str:
        return title_parts(self.finding)[0]

    @property
    def outcome(self) -> str:
        return title_parts(self.finding)[1]

    @property
    def graphs(self) -> int:
        return self.finding.graphs


@dataclass(frozen=True)
class EdgeRow:
    """One op's edge behaviour: what the engine did at each region (`cells`, keyed by region),
    the graphs (edge-value cases included) and the findings' numbers."""

    op: str
    cells: Mapping[str, str]
    graphs: int
    numbers: tuple[int, ...]


@dataclass(frozen=True)
class Overview:
    """The first screen: the table's rows, the edge table, the notes and the unexplained graphs."""

    rows: tuple[Row, ...]
    edges: tuple[EdgeRow, ...]
    notes: tuple[Row, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    unexplained: Mapping[str, Any] | None = None
    # where the failing random graphs fail when every op agrees with torch elsewhere (`only_at`):
    # the places of the findings' regions ("at a pole"); None when some fail at ordinary inputs
    only_at: tuple[str, ...] | None = None

    @property
    def regions(self) -> list[str]:
        """The edge table's columns: the regions some op's edge behaviour is at, in scan order."""
        present = {region for row in self.edges for region in row.cells}
        return [region for region in EDGE_REGIONS if region in present]

    @property
    def fixes(self) -> list[Row]:
        """The adapter's faults, each with its fix (`Finding.fix`)."""
        return [row for row in self.rows if row.finding.fix]

    def tier_counts(self) -> str:
        """ "1 bug, 2 graph-code findings, 7 edge behaviours" ("no findings" when there are none)."""
        parts = []
        for tier in tiers.TIERS:
            n = self.counts.get(tier, 0)
            if n:
                singular, plural = _TIER_NOUNS[tier]
                parts.append(f"{n} {singular if n == 1 else plural}")
        if self.unexplained:
            parts.append(f"{self.unexplained['graphs']} unexplained graph(s)")
        return ", ".join(parts) or "no findings"

    def verdict(self, passed: bool, failed: int, graphs: int) -> str:
        """The verdict in a line, as every report gives it: "FAIL: 81 of 2000 graphs disagree; 1 bug,
        2 graph-code findings, ...". When only findings outside the random graphs fail the run, they
        say what is right first: "FAIL: all 2000 random graphs agree; 9 edge behaviours", and so
        when the graphs that disagree do so only at a special region (`only_at`): "FAIL: every op
        agrees with torch on all 300 graphs but at a pole, where 8 of them fail; 1 bug, ..."."""
        if failed and self.only_at and not passed:
            places = " or ".join(self.only_at)
            return (
                f"FAIL: every op agrees with torch on all {graphs} graphs but {places}, where {failed} of "
                f"them fail; {self.tier_counts()}"
            )
        if failed:
            verdict = "PASS" if passed else "FAIL"
            return f"{verdict}: {failed} of {graphs} graphs disagree; {self.tier_counts()}"
        if not self.counts and not self.unexplained:
            return f"PASS: all {graphs} graphs agree, no findings"
        if passed:
            return f"PASS: all {graphs} graphs agree; {self.tier_counts()}"
        return f"FAIL: all {graphs} random graphs agree; {self.tier_counts()}"

    def unexplained_line(self) -> str:
        """The unexplained graphs in a line ("" when every failing graph has its finding)."""
        if not self.unexplained:
            return ""
        smallest = self.unexplained.get("smallest") or {}
        ops = ", ".join(smallest.get("ops") or ()) or "no ops"
        return (
            f"{self.unexplained['graphs']} failing graph(s) no finding explains; the smallest, "
            f"graph {smallest.get('index', '?')} ({ops}), in full below"
        )

    def notes_line(self) -> str:
        """The conventions in a line: "amax at a tie (29 graphs), clamp at -0.5 (2 graphs)"."""
        return "; ".join(f"{row.cause} ({_graphs(row.graphs)})" for row in self.notes)


def overview(findings: Sequence[Finding], unexplained: Mapping[str, Any] | None = None) -> Overview:
    """The overview of a campaign's findings, numbered as the report numbers them; `unexplained`:
    report.json's entry for the failing graphs no finding explains (graphs, smallest), if any."""
    rows, notes, edges = [], [], []
    for number, f in enumerate(findings):
        row = Row(number, f)
        if f.tier == tiers.EDGE:
            edges.append(row)
        elif f.tier == tiers.CONVENTION:
            notes.append(row)
        else:
            rows.append(row)
    rows.sort(key=lambda r: (tiers.fix_first_rank(r.tier), r.number))
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.tier] = counts.get(f.tier, 0) + 1
    only_at = None if unexplained else only_at_special_regions(findings)
    return Overview(tuple(rows), edge_rows(edges), tuple(notes), counts, unexplained or None, only_at)


def only_at_special_regions(findings: Sequence[Finding]) -> tuple[str, ...] | None:
    """Where the failing random graphs fail, when each fails at a special region (a pole, a kink,
    nan/inf, ...) and no op's finding to fix is at ordinary inputs: the regions' places ("at a
    pole"), in `REGIONS` order; None otherwise, or when no random graph fails."""
    to_fix = (tiers.BUG, tiers.GRAPH_CODE, tiers.ADAPTER)
    ordinary = [f for f in findings if f.region in (ORDINARY, "")]
    if any(f.graph_indices or (f.ops and f.tier in to_fix) for f in ordinary):
        return None
    regions = {f.region for f in findings if f.graph_indices and f.region not in (ORDINARY, "")}
    return tuple(PLACES[r] for r in REGIONS if r in regions and PLACES.get(r)) or None


def edge_rows(rows: Sequence[Row]) -> tuple[EdgeRow, ...]:
    """One row per op (the ops of each finding's minimal graph, joined), most graphs first; a cell
    holds what the engine did at that region, each different outcome once."""
    by_op: dict[str, list[Row]] = {}
    for row in rows:
        by_op.setdefault(" ∘ ".join(row.finding.ops) or "(graph)", []).append(row)
    out = []
    for op, group in by_op.items():
        cells: dict[str, list[str]] = {}
        for row in group:
            region = row.finding.region if row.finding.region in EDGE_REGIONS else ORDINARY
            words = cells.setdefault(region, [])
            for word in edge_outcome(row.finding):
                if word not in words:
                    words.append(word)
        joined = {region: ", ".join(_one_raises(words)) for region, words in cells.items()}
        numbers = tuple(r.number for r in group)
        out.append(EdgeRow(op, joined, sum(r.graphs for r in group), numbers))
    return tuple(sorted(out, key=lambda r: (-r.graphs, r.op)))


def edge_outcome(f: Finding) -> list[str]:
    """What the engine did, in a word or two per kind: "raises ZeroDivisionError", "inf/nan"."""
    kinds = f.merged.kinds or (f.kind,)
    words = []
    for kind in kinds:
        word = _EDGE_WORDS[kind]
        if kind is Kind.EXCEPTION and f.raised:
            word += f" {f.raised}"
        words.append(word)
    return words


def _one_raises(words: list[str]) -> list[str]:
    """A cell's words with every "raises X" in one, first: "raises OverflowError/ZeroDivisionError"."""
    verb = _EDGE_WORDS[Kind.EXCEPTION]
    raised = [w for w in words if w.startswith(verb)]
    if len(raised) < 2:
        return words
    types = sorted({name for w in raised for name in w.removeprefix(verb).strip().split("/") if name})
    return [" ".join([verb, "/".join(types)]).strip(), *(w for w in words if w not in raised)]


def title_parts(f: Finding) -> tuple[str, str]:
    """A title as the table's two columns: what it is about, and what happened
    ("div with a number on the left", "raised ZeroDivisionError"). A graph-code
    finding is about the check that showed it; what happened is its kind (and rate)."""
    title = f.title
    if f.mistake:  # the learner's mistake named: a wrong gradient (`mistake_match`) or a refusal
        return title, "wrong gradient" if f.kind is Kind.WRONG_GRADIENT else f"raised {f.raised}"
    if in_engine_terms(f):  # an exception at a special input, the title its whole cause
        return title, f"raised {f.raised}"
    if f.kind in (Kind.STRUCTURAL, Kind.NONDETERMINISTIC) and not f.ops:
        about = title.removeprefix("graph code — ")
        if f.kind is Kind.NONDETERMINISTIC and " — " in about:
            about, _, outcome = about.rpartition(" — ")
            return about, outcome
        return about, f.kind.value
    about, _, outcome = title.rpartition(" — ")
    if not about:
        return title, f.kind.value
    return about, outcome.removeprefix("engine ")


def _graphs(n: int) -> str:
    return f"{n} graph{'s' if n != 1 else ''}"


# --- each finding's details -----------------------------------------------------------------------------


def finding_code(finding: Finding) -> str:
    """Python that reproduces the finding's minimal graph (a comment saying so for a finding met
    outside any graph, as a unit of settling lost with its worker)."""
    if finding.snippet:
        return finding.snippet
    if not finding.graph:  # a death outside any graph (the structural phase, settling): nothing to run
        return f"# no graph reproduces it: {finding.problems[0] if finding.problems else finding.title}"
    graph = Graph.from_dict(finding.graph)
    return graph_snippet(graph, "torch", second_order=finding.check == "second-derivative")


def finding_text(finding: Finding) -> str:
    """The finding as a failure message: title, what it covers, problems, repro command, code."""
    lines = [f"{finding.title} [{finding.tier}; {finding.kind.value}, {finding.check}]", finding.covers]
    if finding.fix:
        lines.append(f"fix: {finding.fix}")
    lines += [printable(p) for p in finding.problems[:SHOWN_PROBLEMS]]
    lines += local_lines(finding, SHOWN_PROBLEMS)
    if finding.repro:
        lines.append(f"reproduce: {finding.repro}")
    lines += ["", finding_code(finding)]
    return "\n".join(lines)
