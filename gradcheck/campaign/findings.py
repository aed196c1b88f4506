"""Findings: the distinct problems a campaign found, each with its kind, its minimal graph and its graphs.

Any phase of a campaign contributes findings (the op-isolation pass, the random graphs, an
edge-value table): one `Finding` per failing check, then `group_findings` merges those with the
same `signature` (its root cause: the ops of the minimal graph, the input region, which check
failed, the kind) into one finding that covers them all, so one bug reads as one line however
many graphs, edge values or exception types showed it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.engine_terms import in_engine_terms
from gradcheck.campaign.variants import phrase, spelling_qualifiers, variant_of
from gradcheck.choices import CONVENTIONS
from gradcheck.graphs.regions import KINK, ORDINARY, PLACES
from gradcheck.parity import wording
from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED, Kind
from gradcheck.parity.problem import Off, Problem, adapter_fault
from gradcheck.parity.problem import raised_type as _raised_type

# Which part of a check failed (a finding's `check`).
CHECKS = ("forward", "gradient", "second-derivative", "forward-mode", "transform")
# The phases that contribute findings (a finding's `phase`); later phases may add their own name.
PHASES = ("inspection", "structure", "isolation", "random", "edges", "corpus")

Signature = tuple[str, tuple[str, ...], str, str]

# How a title says each kind.
_KIND_WORDS = {
    Kind.WRONG_GRADIENT: "wrong gradient",
    Kind.WRONG_SECOND_DERIVATIVE: "wrong second derivative",
    Kind.WRONG_FORWARD_MODE: "wrong forward-mode derivative",
    Kind.WRONG_TRANSFORM: "wrong derivative under a transform",
    Kind.WRONG_VALUE: "wrong value",
    Kind.NONFINITE: "nan/inf unlike torch",
    Kind.EXCEPTION: "engine raised",
    Kind.WRONG_TYPE: "not a number",
    Kind.WRONG_SHAPE: "wrong shape",
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
_BREAKDOWN_KINDS = frozenset({Kind.EXCEPTION, Kind.NONFINITE, Kind.WRONG_TYPE, Kind.WRONG_SHAPE})
# The kinds of an op answering with wrong numbers: at ordinary inputs they are one problem of the op
# and variant whichever check met them (a `2.0 / x` computed as `2.0 * x ** -1.0001` is off in its
# value, off in its gradient, and complex for x < 0). An exception, a wrong shape, a convention stay
# apart: a missing or broken code path, an interface, a choice at a kink are other fixes.
WRONG_NUMBER_KINDS = frozenset(
    {Kind.WRONG_VALUE, Kind.WRONG_GRADIENT, Kind.WRONG_SECOND_DERIVATIVE, Kind.NONFINITE, Kind.WRONG_TYPE}
)
# The first element of a merged wrong-numbers signature (`Finding.signature`).
WRONG_NUMBERS = "wrong-numbers"
# The kinds whose numbers are plainly wrong (a finite number where torch's differs), by the check
# that meets them: the most telling example of a wrong-numbers finding.
_WRONG_NUMBER_VALUES = frozenset(k.value for k in WRONG_NUMBER_KINDS)
PLAINLY_WRONG = {
    Kind.WRONG_VALUE: "forward",
    Kind.WRONG_GRADIENT: "gradient",
    Kind.WRONG_SECOND_DERIVATIVE: "second-derivative",
}
# The kinds whose plain name (`where`) is their whole signature: the structural phase's findings.
_NAMED_KINDS = frozenset({Kind.STRUCTURAL, Kind.NONDETERMINISTIC})
# How a merged title says each check.
_CHECK_WORDS = {
    "forward": "value",
    "gradient": "gradient",
    "second-derivative": "second derivatives",
    "forward-mode": "forward mode",
}


@dataclass(frozen=True)
class Merged:
    """What a finding covers beyond its example's own case: set where findings are merged
    (`group_findings`, `settling`'s folding) or one is made of many cases (an edge finding); a
    finding of one case has none of it, and one counted again for a single graph drops it.

    cases: how many cases of each phase it covers (None: its `graphs`, all of its own phase).
    raised: every exception type its cases raised, when more than its example's own.
    kinds, checks: the kinds and checks of a breakdown or of an op's wrong numbers merged across
        them, when more than one.
    answers: the types of the answers that were not numbers ("complex"), in a merge of wrong numbers.
    folded: the titles of the findings folded into it (a graph-code finding that explains them).
    """

    cases: Mapping[str, int] | None = None
    raised: tuple[str, ...] = ()
    kinds: tuple[Kind, ...] = ()
    checks: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    built_from: tuple[str, ...] = ()  # in words, the ops built from its op it counts (`campaign.primitives`)
    # in words, the breakdowns its named mistake causes (`campaign.mistake_breakdowns`)
    explains: tuple[str, ...] = ()


@dataclass(frozen=True)
class GraphCode:
    """A structural finding's checks (`campaign.structure`): what they exercise (`cause`:
    "sharing", "backward-twice", "zero-grad", "reset", "interior", "depth", "paths", ...), the
    names of those that failed, and the depth a deep chain failed at (None: not a deep chain's)."""

    cause: str
    checks: tuple[str, ...] = ()
    depth: int | None = None


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
    excess: how far outside its allowance the example's failing point is (`GraphCheck.
        failing_excess`; None when unknown): the strongest example of a group is shown.
    culprits: the variants its shrunk graph fails because of (`campaign.explain.culprits`): other
        graphs with nodes of them are tried against it.
    rate: how often its graph failed when rebuilt ("fails 3 of 8 rebuilds"; "" when it always
        did): a nondeterministic finding's, and `was`, its kind before the rebuilds.
    death: how the unit that met it died or hung ("called sys.exit(0)"; None: it did not), and
        `skipped`, whether that unit was not run at all (its op ended a worker before).
    graph_code: a structural finding's checks (None for the other phases' findings).
    merged: what it covers beyond its example's case (`Merged`); mistake: the learner's mistake its
        wrong gradient matches, its title (None: none), and `mistake_rules` the table entries it
        says (`graphs.mistakes.entry_key`). report.json's `extra` holds the last ten.
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
    region: str = ""
    tier: str = ""
    variant: tuple[str, ...] | None = None
    # an adapter's fault whose op has findings of its own (the engine's): its fix never says to
    # leave the op out, which would hide them (set by `group_findings`)
    op_has_findings: bool = False
    excess: float | None = None
    culprits: tuple[str, ...] = ()
    rate: str = ""
    was: Kind | None = None
    death: str | None = None
    skipped: bool = False
    graph_code: GraphCode | None = None
    merged: Merged = field(default_factory=Merged)
    mistake: str | None = None
    mistake_rules: tuple[str, ...] = ()

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
        return wording.adapter_fix(self.ops, adapter_fault(self.problems), self.op_has_findings)

    @property
    def structural_cause(self) -> str:
        """What a structural finding's checks exercise (`GraphCode.cause`; "" for any other)."""
        return self.graph_code.cause if self.graph_code is not None else ""

    @property
    def signature(self) -> Signature:
        """The root cause that makes two failures the same problem: kind, minimal ops, check and
        input region. Not the exception type: one rule at a pole raising ZeroDivisionError at 0 and
        OverflowError at 5e-324 is one problem, whichever phase met it; the same op overflowing
        at 1e300 is another (another region). At a special region a rule that raises at some points
        and gives nan/inf at others, in its value or its gradient, is one breakdown: micrograd's
        `a * b**-1` raises OverflowError at (1e300, 1e-300) and gives a nan gradient at (inf, 1e300).
        At ordinary inputs an op's wrong numbers (`WRONG_NUMBER_KINDS`) are one problem, whichever
        check met them: a wrong value, a wrong gradient and a complex answer of one rule."""
        return merged_signature(self.own_signature)

    @property
    def own_signature(self) -> Signature:
        """The signature of this finding's own kind and check, before an op's wrong numbers at
        ordinary inputs merge (`signature`): what a node failing alone is matched by, and what
        gate baselines written before that merge recorded."""
        if self.kind in _BREAKDOWN_KINDS and self.region not in (ORDINARY, ""):
            return ("breakdown", self.ops, "", self.region)
        if not self.ops and self.kind in _NAMED_KINDS:  # the structural phase's: `where` is the name
            return (self.kind.value, self.ops, self.check, self.where)
        return (self.kind.value, self.ops, self.check, self.region)

    @property
    def raised(self) -> str:
        """The exception type(s) the engine raised, as the problems name them ("" if none does);
        a merged finding names each type its cases raised ("ZeroDivisionError/OverflowError")."""
        return "/".join(self.merged.raised) or raised_type(self.problems)

    @property
    def cases(self) -> dict[str, int]:
        """How many cases of each phase this finding covers (a random graph is one case); a finding
        merged from several phases (`group_findings`) keeps each phase's count apart."""
        return dict(self.merged.cases or {self.phase: self.graphs})

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
        return "; ".join([*parts, *self.merged.built_from, *self.merged.explains])

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
        """A one-line name: "relu — wrong gradient", "relu at 0 — convention at a kink"."""
        ops = " ∘ ".join(self.ops) if self.ops else "(no op)"
        if self.tier == tiers.ADAPTER:  # one finding per op, whatever forms of it met the fault
            return f"{ops} — adapter fault ({self.raised or 'raised'})"
        shown = self.variant if self.tier != tiers.EDGE else spelling_qualifiers(self.variant)
        if shown:
            ops += f" {phrase(shown)}"
        # a kink's own place ("at 0") says more than the region; the kind says "kink"
        where = (
            self.where if self.where and self.region in (KINK, "") else PLACES.get(self.region) or self.where
        )
        place = f" {where}" if where else ""
        # a named mistake says it all in the engine's terms, as an exception at a special input does
        if (said := self.mistake if self.tier != tiers.EDGE else None) or (said := in_engine_terms(self)):
            return said
        if not self.ops and self.kind in _NAMED_KINDS:  # the structural phase's: `where` is the name
            name = self.where or "a graph of no op node (its outputs are its inputs)"
            return f"graph code — {name}" + (
                "" if self.kind is Kind.STRUCTURAL else f" — {self._kind_phrase(self.kind, self.check)}"
            )
        kinds = self.merged.kinds or (self.kind,)
        checks = self.merged.checks or (self.check,)
        if len(kinds) > 1 and self.signature[0] == WRONG_NUMBERS:
            kind = self._wrong_numbers_phrase(kinds)
        elif len(kinds) > 1 or len(checks) > 1:  # a breakdown merged across kinds or checks
            kind = "; ".join(self._kind_phrase(k, "gradient") for k in kinds)
            kind += f" ({' and '.join(_CHECK_WORDS[c] for c in checks)})"
        else:
            kind = self._kind_phrase(self.kind, self.check)
        if self.tier == tiers.TORCH_OFF:  # the engine is right: the title names whose answer is off
            return f"{ops}{place} — torch is off: {kind}"
        if self.off is Off.BOTH:
            kind += ", torch too"
        return f"{ops}{place} — {kind}"

    def _wrong_numbers_phrase(self, kinds: Sequence[Kind]) -> str:
        """How the title says an op's wrong numbers merged across kinds: what was plainly wrong,
        then what was not a number: "wrong value and gradient; not a number (complex)"."""
        wrong = [_CHECK_WORDS[check] for kind, check in PLAINLY_WRONG.items() if kind in kinds]
        parts = []
        if wrong:
            parts.append(
                "wrong " + " and ".join([", ".join(wrong[:-1]), wrong[-1]] if len(wrong) > 1 else wrong)
            )
        if Kind.NONFINITE in kinds:
            parts.append(_KIND_WORDS[Kind.NONFINITE])
        if Kind.WRONG_TYPE in kinds:
            answers = f" ({'/'.join(self.merged.answers)})" if self.merged.answers else ""
            parts.append(_KIND_WORDS[Kind.WRONG_TYPE] + answers)
        return "; ".join(parts)

    def _kind_phrase(self, kind: Kind, check: str) -> str:
        """How the title says one kind met in one check: "engine raised OverflowError",
        "nan/inf unlike torch (value)", "wrong gradient", "nondeterministic (fails 3 of 8 rebuilds)"."""
        phrase = _KIND_WORDS[kind]
        if kind is Kind.NONDETERMINISTIC and self.rate:
            phrase += f" ({self.rate})"
        if kind is Kind.EXCEPTION and self.raised:
            phrase += f" {self.raised}"
        if kind in (Kind.CRASH, Kind.TIMEOUT) and self.death:
            phrase += f": {self.death}"  # how: "called sys.exit(0)", "gave no answer within 60 s"
        unpassed = next((p.unpassed for p in self.problems if p.unpassed), "")
        if kind is Kind.WRONG_SHAPE and unpassed:
            phrase += f" (the adapter may not pass {unpassed} on)"
        if check == "second-derivative" and kind is not Kind.WRONG_SECOND_DERIVATIVE:
            phrase += " (second derivatives)"
        elif check == "forward-mode" and kind is not Kind.WRONG_FORWARD_MODE:
            phrase += " (forward mode)"
        elif check == "transform":
            names = sorted({p.case for p in self.problems if p.check == "transform" and p.case})
            phrase += f" ({', '.join(names)})" if names else ""
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
            **({"extra": extra} if (extra := extra_of(self)) else {}),
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
            tier=d.get("tier", ""),
            variant=tuple(d["variant"]) if "variant" in d else None,
            **fields_of_extra(d.get("extra") or {}),
        )


# The Merged fields of words, in the order and under the keys report.json's `extra` has them.
_MERGED_KEYS = {
    "raised": "raised",
    "checks": "merged_checks",
    "folded": "folded",
    "answers": "answers",
    "built_from": "built_from",
    "explains": "explains",
}


def extra_of(f: Finding) -> dict[str, Any]:
    """A finding's typed facts beyond its kind, ops and graph as report.json writes them (its
    `extra`): each in the key and the JSON form reports have always had, only those it has."""
    extra: dict[str, Any] = {}
    if f.excess is not None:
        extra["excess"] = f.excess
    if f.culprits:
        extra["culprits"] = list(f.culprits)
    if f.graph_code is not None:
        extra["cause"] = f.graph_code.cause
        if f.graph_code.checks:
            extra["checks"] = list(f.graph_code.checks)
    if f.rate:
        extra["rate"] = f.rate
    if f.graph_code is not None and f.graph_code.depth is not None:
        extra["depth"] = f.graph_code.depth
    if f.was is not None:
        extra["was"] = f.was.value
    for key, value in (("death", f.death), ("skipped", f.skipped or None), ("mistake", f.mistake)):
        if value is not None:
            extra[key] = value
    if f.mistake_rules:
        extra["mistake_rules"] = list(f.mistake_rules)
    merged = f.merged
    if merged.cases is not None:
        extra["cases"] = dict(merged.cases)
    for field_name, key in _MERGED_KEYS.items():
        if values := getattr(merged, field_name):
            extra[key] = list(values)
    if merged.kinds:
        extra["merged_kinds"] = [k.value for k in merged.kinds]
    return extra


def fields_of_extra(extra: Mapping[str, Any]) -> dict[str, Any]:
    """`extra_of`'s inverse: the Finding fields a report's `extra` holds (keys it does not know
    are left out)."""
    fields: dict[str, Any] = {}
    if extra.get("excess") is not None:
        fields["excess"] = float(extra["excess"])  # report.json writes inf as "inf"
    if "cause" in extra:
        depth = extra.get("depth")
        checks = tuple(extra.get("checks") or ())
        fields["graph_code"] = GraphCode(extra["cause"], checks, None if depth is None else int(depth))
    if "was" in extra:
        fields["was"] = Kind(extra["was"])
    for key in ("culprits", "rate", "skipped", "death", "mistake", "mistake_rules"):
        if key in extra:
            fields[key] = tuple(extra[key]) if key in ("culprits", "mistake_rules") else extra[key]
    fields["merged"] = Merged(
        cases=dict(extra["cases"]) if "cases" in extra else None,
        kinds=tuple(Kind(k) for k in extra.get("merged_kinds") or ()),
        **{field_name: tuple(extra.get(key) or ()) for field_name, key in _MERGED_KEYS.items()},
    )
    return fields


def merged_signature(signature: Sequence[Any]) -> Signature:
    """A signature (kind, ops, check, region) as findings are grouped today: an op's wrong numbers
    at ordinary inputs, of any of `WRONG_NUMBER_KINDS` and any check, are one (`WRONG_NUMBERS`, ops,
    "", ordinary); any other stays as it is. A gate baseline's entries written before that merge
    read the same way (`campaign.verdict.finding_identity`)."""
    kind, ops, check, region = signature
    if region == ORDINARY and ops and kind in _WRONG_NUMBER_VALUES:
        return (WRONG_NUMBERS, tuple(ops), "", ORDINARY)
    return (kind, tuple(ops), check, region)


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


def phase_rank(phase: str) -> int:
    return PHASES.index(phase) if phase in PHASES else len(PHASES)


def failing(findings: Iterable[Finding], conventions: str = "torch") -> list[Finding]:
    """The findings that fail a run under `conventions`."""
    return [f for f in findings if f.is_failure(conventions)]


# How a phase's cases are named: in a finding's detail (`covers`) and its count (`count_text`).
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
    return sorted(cases.items(), key=lambda item: phase_rank(item[0]))
