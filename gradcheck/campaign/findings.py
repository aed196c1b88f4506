"""Findings: the distinct problems a campaign found, each with its kind, its minimal graph and its graphs.

Any phase of a campaign contributes findings (the op-isolation pass, the random graphs, an
edge-value table): one `Finding` per failing check, then `group_findings` merges those with the
same `signature` (its root cause: the ops of the minimal graph, the input region, which check
failed, the kind) into one finding that covers them all, so one bug reads as one line however
many graphs, edge values or exception types showed it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.variants import phrase, plainer, variant_of
from gradcheck.engines.origin import FrameKind
from gradcheck.graphs.regions import KINK, ORDINARY, PLACES, POLE, tiny
from gradcheck.launcher import command_line
from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED, Kind
from gradcheck.parity.problem import Off, Problem, adapter_fault
from gradcheck.parity.problem import raised_type as _raised_type
from gradcheck.parity.wording import frame

# Which part of a check failed (a finding's `check`).
CHECKS = ("forward", "gradient", "second-derivative")
# The phases that contribute findings (a finding's `phase`); later phases may add their own name.
PHASES = ("inspection", "structure", "isolation", "random", "edges", "corpus")
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
    Kind.STRUCTURAL: "structural",
    Kind.NONDETERMINISTIC: "nondeterministic",
    Kind.CRASH: "ended the engine's process",
    Kind.TIMEOUT: "timeout",
}
# The kinds of a rule breaking down (raising, nan/inf where torch has a number, or an answer that
# is not a real number): at a special region they are one problem whichever check met them and
# however the rule broke at each point (micrograd's power of a negative number is complex for
# exponent 0.5 and raises OverflowError for -0.5).
_BREAKDOWN_KINDS = frozenset({Kind.EXCEPTION, Kind.NONFINITE, Kind.WRONG_TYPE})
# The kinds whose plain name (`where`) is their whole signature: the structural phase's findings.
_NAMED_KINDS = frozenset({Kind.STRUCTURAL, Kind.NONDETERMINISTIC})
# How a merged title says each check.
_CHECK_WORDS = {"forward": "value", "gradient": "gradient", "second-derivative": "second derivatives"}
_SPELL_OR_LEAVE = "spell it in `apply` or leave it out of `ops`"


@dataclass(frozen=True)
class Finding:
    """One distinct problem: what went wrong (`kind`, `check`), on which ops, shown by which graph.

    ops: the sorted op names of the minimal graph `graph` (the graph JSON a replay re-runs).
    where: a short place beyond the ops, e.g. "at 0" for a kink or edge value ("" for anywhere).
    region: the input region of the minimal graph (`gradcheck.graphs.regions`: pole, kink, tie,
        overflow point, tiny, ordinary...; "" when unknown).
    graphs / graph_indices: how many graphs of the phase this finding covers, and their indices
    (indices of random graphs; an isolation or edge finding covers its own cases).
    problems: the checks' records on the minimal graph (`gradcheck.parity.problem`). repro: the
        command that replays it.
    snippet: code that shows the bug in the engine's own terms (or None).
    tier: how much it matters (`gradcheck.campaign.tiers`: bug, graph-code, adapter, edge,
        convention), decided when the finding is made ("" to decide it from the rest).
    variant: the forms of the op the minimal graph's node takes (`gradcheck.campaign.variants`:
        "over a tuple of dims", "with a number on the left"); None to read them off `graph`.
    """

    kind: Kind
    ops: tuple[str, ...]
    check: str
    graph: Mapping[str, Any]
    phase: str = "random"
    where: str = ""
    graphs: int = 1
    graph_indices: tuple[int, ...] = ()
    problems: tuple[Problem, ...] = ()
    repro: str = ""
    snippet: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    region: str = ""
    tier: str = ""
    variant: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))
        object.__setattr__(self, "ops", tuple(sorted(set(self.ops))))
        object.__setattr__(self, "graph_indices", tuple(self.graph_indices))
        object.__setattr__(self, "problems", tuple(self.problems))
        if self.check not in CHECKS:
            raise ValueError(f"Finding: check must be one of {CHECKS}, got {self.check!r}")
        if self.graphs < 1:
            raise ValueError(f"Finding: graphs must be at least 1, got {self.graphs}")
        if self.variant is None:
            object.__setattr__(self, "variant", variant_of(self.graph) if self.ops else ())
        object.__setattr__(self, "variant", tuple(self.variant or ()))
        # the kind and the problems decide graph-code, convention and adapter at once; edge or bug
        # needs the numbers at the failing point, read once and kept through `replace`
        tier = tiers.tier_by_kind(self.kind, self.problems)
        if tier is None:
            known = self.tier in (tiers.BUG, tiers.EDGE)
            tier = (
                self.tier
                if known
                else tiers.tier_of(self.kind, self.problems, self.graph, self.region, self.check)
            )
        object.__setattr__(self, "tier", tier)

    @property
    def cause(self) -> tuple[Any, ...]:
        """What `group_findings` merges by: the signature, the tier and the variant; an adapter's
        faults are one finding per op, whatever each raised and wherever, and edge behaviour one
        per op and region, whatever form of the op met it."""
        if self.tier == tiers.ADAPTER:
            return (tiers.ADAPTER, self.ops)
        if self.tier == tiers.EDGE:  # edge behaviour is told per op and region: forms do not split it
            return (*self.signature, self.tier, ())
        return (*self.signature, self.tier, self.variant)

    @property
    def fix(self) -> str:
        """For an adapter's fault, what to change in the adapter ("" for any other finding)."""
        if self.tier != tiers.ADAPTER:
            return ""
        fault = adapter_fault(self.problems)
        op = "/".join(self.ops) or "this op"
        if fault is None or fault.raised is None or fault.raised.frame is None:
            return f"the adapter's spelling of {op} fails: {_SPELL_OR_LEAVE}"
        raised = fault.raised
        exception, message, where = raised.type, raised.message, raised.frame
        if where.kind is FrameKind.DEFAULT_SPELLING:
            if exception == "AttributeError" and raised.attribute:
                what = f"no `.{raised.attribute}`"
            else:
                what = f"no spelling gradcheck's default takes ({exception}: {message})"
            return f"the adapter lists {op} but the engine has {what}: {_SPELL_OR_LEAVE}"
        if where.kind is FrameKind.DEFAULT_METHOD:
            method = where.name.rpartition(".")[2]
            return (
                f"gradcheck's default `{method}` does not fit this engine ({exception}: {message}): "
                f"override `{method}` in the adapter (docs/adapters.md)"
            )
        return f"{frame(where)} raised {exception} for {op}: fix it there or leave {op} out of `ops`"

    @property
    def signature(self) -> Signature:
        """The root cause that makes two failures the same problem: kind, minimal ops, check and
        input region. Not the exception type: one rule at a pole raising ZeroDivisionError at 0 and
        OverflowError at 5e-324 is one problem, whichever phase met it; the same op overflowing
        at 1e300 is another (another region). At a special region a rule that raises at some points
        and gives nan/inf at others, in its value or its gradient, is one breakdown: micrograd's
        `a * b**-1` raises OverflowError at (1e300, 1e-300) and gives a nan gradient at (inf, 1e300)."""
        if self.kind in _BREAKDOWN_KINDS and self.region not in (ORDINARY, ""):
            return ("breakdown", self.ops, "", self.region)
        if not self.ops and self.kind in _NAMED_KINDS:  # the structural phase's: `where` is the name
            return (self.kind.value, self.ops, self.check, self.where)
        return (self.kind.value, self.ops, self.check, self.region)

    @property
    def raised(self) -> str:
        """The exception type(s) the engine raised, as the problems name them ("" if none does);
        a merged finding names each type its cases raised ("ZeroDivisionError/OverflowError")."""
        return "/".join(self.extra.get("raised") or ()) or raised_type(self.problems)

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
        """A one-line name: "relu — wrong gradient", "relu at 0 — convention at a kink", "pow_const at a
        pole — engine raised ZeroDivisionError"."""
        ops = " ∘ ".join(self.ops) if self.ops else "(no op)"
        if self.tier == tiers.ADAPTER:  # one finding per op, whatever forms of it met the fault
            return f"{ops} — adapter fault ({self.raised or 'raised'})"
        if self.variant and self.tier != tiers.EDGE:
            ops += f" {phrase(self.variant)}"
        # a kink's own place ("at 0") says more than the region; the kind says "kink"
        where = (
            self.where if self.where and self.region in (KINK, "") else PLACES.get(self.region) or self.where
        )
        place = f" {where}" if where else ""
        if not self.ops and self.kind in _NAMED_KINDS:  # the structural phase's: `where` is the name
            return f"graph code — {self.where}" + (
                "" if self.kind is Kind.STRUCTURAL else f" — {self._kind_phrase(self.kind, self.check)}"
            )
        kinds = [Kind(k) for k in self.extra.get("merged_kinds") or (self.kind.value,)]
        checks = self.extra.get("merged_checks") or (self.check,)
        if len(kinds) > 1 or len(checks) > 1:  # a breakdown merged across kinds or checks
            kind = "; ".join(self._kind_phrase(k, "gradient") for k in kinds)
            kind += f" ({' and '.join(_CHECK_WORDS[c] for c in checks)})"
        else:
            kind = self._kind_phrase(self.kind, self.check)
        if self.tier == tiers.TORCH_OFF:  # the engine is right: the title names whose answer is off
            return f"{ops}{place} — torch is off: {kind}"
        if self.off is Off.BOTH:
            kind += ", torch too"
        return f"{ops}{place} — {kind}"

    def _kind_phrase(self, kind: Kind, check: str) -> str:
        """How the title says one kind met in one check: "engine raised OverflowError",
        "nan/inf unlike torch (value)", "wrong gradient", "nondeterministic (fails 3 of 8 rebuilds)"."""
        phrase = _KIND_WORDS[kind]
        if kind is Kind.NONDETERMINISTIC and self.extra.get("rate"):
            phrase += f" ({self.extra['rate']})"
        if kind is Kind.EXCEPTION and self.raised:
            phrase += f" {self.raised}"
        if kind in (Kind.CRASH, Kind.TIMEOUT) and self.extra.get("death"):
            phrase += f": {self.extra['death']}"  # how: "called sys.exit(0)", "gave no answer within 60 s"
        if check == "second-derivative" and kind is not Kind.WRONG_SECOND_DERIVATIVE:
            phrase += " (second derivatives)"
        elif check == "forward" and kind is Kind.NONFINITE:
            phrase += " (value)"
        return phrase

    def is_failure(self, conventions: str = "torch") -> bool:
        """Whether this finding fails the run: under `subgradient` conventions a convention is only a
        note, and where torch alone is off (`tiers.TORCH_OFF`) the engine is right: never."""
        if conventions not in CONVENTIONS:
            raise ValueError(f"conventions must be one of {CONVENTIONS}, got {conventions!r}")
        if self.tier in tiers.NOT_THE_ENGINES:
            return False
        return not (conventions == "subgradient" and self.kind in SUBGRADIENT_TOLERATED)

    @property
    def off(self) -> Off | None:
        """Who is off the exact value, when the exact values judged (`Off`): torch alone (every
        problem torch's), both (some problem off for the engine and torch alike), or the engine
        alone; None when no problem was judged against them with torch beside it."""
        offs = {p.off for p in self.problems if p.off is not None}
        if not offs:
            return None
        if offs == {Off.TORCH}:
            return Off.TORCH
        return Off.BOTH if Off.BOTH in offs else Off.ENGINE

    def to_dict(self) -> dict[str, Any]:
        """The finding as report.json writes it (graph JSON included)."""
        return {
            "kind": self.kind.value,
            "ops": list(self.ops),
            "check": self.check,
            "phase": self.phase,
            "where": self.where,
            "region": self.region,
            "tier": self.tier,
            "variant": list(self.variant or ()),
            "title": self.title,
            "graphs": self.graphs,
            "graph_indices": list(self.graph_indices),
            "problems": [str(p) for p in self.problems],
            "records": [p.to_dict() for p in self.problems],
            "repro": self.repro,
            "snippet": self.snippet,
            "graph": dict(self.graph),
            **({"fix": self.fix} if self.fix else {}),
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
            region=d.get("region", ""),
            graphs=int(d.get("graphs", 1)),
            graph_indices=tuple(d.get("graph_indices", ())),
            problems=problems_of(d),
            repro=d.get("repro", ""),
            snippet=d.get("snippet"),
            extra=d.get("extra", {}),
            tier=d.get("tier", ""),
            variant=tuple(d["variant"]) if "variant" in d else None,
        )


def raised_type(problems: Iterable[Problem]) -> str:
    """The exception type the first problem recording an exception names ("" if none does)."""
    return _raised_type(problems)


def problems_of(d: Mapping[str, Any]) -> tuple[Problem, ...]:
    """The problem records of a finding or a failure read from report.json: its `records`, or,
    in a report of an earlier schema (sentences only), the records read from its sentences."""
    if "records" in d:
        return tuple(Problem.from_dict(r) for r in d["records"])
    from gradcheck.campaign.earlier_schema import problems_from_sentences

    return problems_from_sentences(d.get("problems", ()))


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
    tier), so relu's slope of 2 is one finding, not one per edge value. A pole keeps its own
    finding (a rule raising at a divisor of 0 is another problem than the same op raising
    everywhere). Likewise an edge-tier finding joins the bug of the same cause and variant
    (maximum's partials (0, 0) at a tie of 1e300s are its bug at a tie of 1.0s). A finding of a
    variant joins the one of a plainer variant (fewer qualifiers, otherwise the same cause): the
    title then names only what the failures need.

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
    joined: set[int] = set()  # findings moved to another's region or tier: not the repro when others are
    adjusted = []
    for f in findings:
        joins = ordinary.get((f.kind, f.ops, f.check, f.variant))
        if f.region not in (ORDINARY, POLE, "") and joins is not None and f.tier not in apart:
            f = replace(f, region=ORDINARY, tier=joins)
            joined.add(id(f))
        adjusted.append(f)
    bugs = {(*f.signature, f.variant) for f in adjusted if f.tier == tiers.BUG}
    groups: dict[tuple[Any, ...], list[Finding]] = {}
    for f in adjusted:
        if f.tier == tiers.EDGE and (*f.signature, f.variant) in bugs:  # the bug's rule, at an edge
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
    return sorted(merged, key=lambda f: (tiers.tier_rank(f.tier), -f.graphs, f.title, f.phase))


def _merge(group: Sequence[Finding], prefer: Sequence[Finding] = ()) -> Finding:
    """One finding for `group`; its repro the smallest graph (of `prefer` when given: the findings
    of the variant the merged one is named by), among those the most telling (furthest outside its
    allowance)."""
    best = min(
        prefer or group,
        key=lambda f: (*example_rank(f.graph, excess(f)), _phase_rank(f.phase), f.graph_indices),
    )
    indices = sorted({i for f in group for i in f.graph_indices})
    cases: dict[str, int] = {}
    for f in group:
        for phase, n in f.cases.items():
            cases[phase] = cases.get(phase, 0) + n
    extra = {**best.extra, "cases": cases} if len(cases) > 1 else dict(best.extra)
    raised = raised_types(group)
    if raised and "/".join(raised) != best.raised:  # more types, or the repro's case raised none
        extra["raised"] = raised
    kinds = sorted({f.kind.value for f in group} | set(best.extra.get("merged_kinds", ())))
    checks = sorted({c for f in group for c in f.extra.get("merged_checks") or (f.check,)}, key=CHECKS.index)
    if len(kinds) > 1:
        extra["merged_kinds"] = kinds
    if len(checks) > 1:
        extra["merged_checks"] = checks
    return replace(best, graphs=sum(f.graphs for f in group), graph_indices=tuple(indices), extra=extra)


def example_rank(graph: Mapping[str, Any], excess: float) -> tuple[Any, ...]:
    """How good an example of its finding a failing graph is, the best first: the smallest graph,
    then one whose inputs are not tiny (a wrong rule read at x = 0.7 rather than 3.8e-09, where
    its rounding bound is tiny and its excess huge), then the furthest outside its allowance."""
    return (graph_size(graph), _has_tiny_inputs(graph), -excess)


def _has_tiny_inputs(graph: Mapping[str, Any]) -> bool:
    for inp in graph.get("inputs", ()):
        try:
            if tiny(inp.get("value")).any():
                return True
        except (TypeError, ValueError):  # a value JSON spells otherwise ("inf")
            continue
    return False


def excess(f: Finding) -> float:
    """How far outside its allowance the finding's graph fails (`extra["excess"]`; 0 when unknown)."""
    value = f.extra.get("excess")
    return 0.0 if value is None else float(value)  # report.json writes inf as "inf"


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
_CASE_WORDS = {
    "inspection": "inspection(s) of the value class",
    "edges": "edge-value case(s)",
    "isolation": "case(s) of the op-isolation pass",
    "structure": "structural check(s)",
}
_CASE_UNITS = {
    "inspection": "class inspection",
    "random": "graph",
    "edges": "edge-value case",
    "isolation": "op-isolation case",
    "structure": "structural check",
}


def _in_phase_order(cases: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(cases.items(), key=lambda item: _phase_rank(item[0]))


def replay_command(path: str, engine: str, index: int | None = None, pythonpath: str | None = None) -> str:
    """The command that re-runs a saved graph (a corpus file, or finding `index` of a report.json),
    started as this gradcheck was (`gradcheck.launcher`); `pythonpath`: the folder the engine's
    module imports from, when a fresh process needs it."""
    args = ["replay", path, "--engine", engine]
    if index is not None:
        args += ["--finding", str(index)]
    return command_line(*args, pythonpath=pythonpath)
