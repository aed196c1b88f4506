"""What a campaign records, graph by graph and in all: one graph's outcome (`GraphRecord`, built
from the parity check's `GraphCheck`), the campaign's result (`CampaignResult`), and its per-op
statistics (maxima, decade histograms, quantiles, failures).

An op's figures come from the evidence about that op (`aggregate`): its op-isolation checks, and
the random graphs holding it where no other op has a finding, so that one op's bug fails that
op's row only (a tanh derivative 1e-7 off does not raise the errors of the adds around it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gradcheck.campaign.findings import Finding, failing
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.tiers import NOT_THE_ENGINES
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.regions import ORDINARY
from gradcheck.parity.classify import Difference
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem
from gradcheck.parity.result import GraphCheck

# The four gradient figures every graph check yields, and the forward error; names as GraphCheck's.
GRAD_METRICS = ("max_abs_err_torch", "max_rel_err_torch", "max_abs_err_numeric", "max_rel_err_numeric")
# The largest difference from torch as a multiple of its entry's rounding bound: how far outside
# its allowance a gradient is, however small its magnitude.
BOUND_METRIC = "max_bound_ratio"
METRICS = (*GRAD_METRICS, "max_forward_err", BOUND_METRIC)


@dataclass(frozen=True)
class Failure:
    """What a failing graph looks like, as found and after shrinking, and how it is accounted for:
    by its `finding`, or (None) as one of the unexplained graphs, for the reason `unexplained`
    says ("" while it is still being explained)."""

    problems: tuple[Problem, ...]
    snippet: str  # "" until a report shows it (`failure_snippet`): most failures are explained
    graph: dict[str, Any]
    shrunk_snippet: str | None = None
    shrunk_graph: dict[str, Any] | None = None
    shrunk_ops: tuple[str, ...] | None = None
    corpus_file: str | None = None
    finding: Finding | None = None  # the distinct problem this graph shows (see campaign.findings)
    difference: Difference | None = None  # its kind and check, classified once (shrinker or explainer)
    excess: float | None = None  # how far outside its allowance it fails (GraphCheck.failing_excess)
    alone: tuple[int, ...] = ()  # the positions of its op nodes that fail alone (campaign.explain)
    unexplained: str = ""  # why no finding explains it, when none does
    shrink_checks: int = 0  # the candidate checks its shrinking spent (of the campaign's shrink budget)
    cut_short: bool = False  # its shrinking reached the safety cap in seconds (`Settings.shrink_time_cap`)


@dataclass(frozen=True)
class GraphRecord:
    """One graph's outcome: which ops it used, whether it passed, and its error figures."""

    index: int
    ops: tuple[str, ...]
    passed: bool
    figures: dict[str, float | None]
    problems: tuple[Problem, ...] = ()
    failure: Failure | None = None
    points_checked: int = 1
    points_skipped: int = 0
    points_settled: int = 0  # oracle-only disagreements the precise oracle cleared (false alarms)
    # points beyond torch's rounding but within another evaluation order's of the exact value
    points_any_order: int = 0
    # judged against the exact values, a graph the engine passed where torch is off: torch's
    # problems (`Off.TORCH`) and the graph at that point (JSON), for a torch-off finding
    torch_off: tuple[Problem, ...] = ()
    torch_off_graph: dict[str, Any] | None = None

    @property
    def is_settled(self) -> bool:
        """Failing and given its finding: nothing to shrink or blame (before the failing graphs are
        accounted for, only a graph whose worker died, `campaign.crashes`)."""
        return self.failure is not None and self.failure.finding is not None


def failure_snippet(failure: Failure) -> str:
    """The failing graph as code (minigrad's spelling), written when a report first shows it."""
    return failure.snippet or Graph.from_dict(failure.graph).to_python("minigrad")


def record_of(index: int, check: GraphCheck) -> GraphRecord:
    """A GraphRecord from parity's GraphCheck."""
    checked = check.points_checked > 0
    figures = {m: (float(getattr(check, m)) if checked else None) for m in METRICS}
    failure = None
    if not check.passed and check.failure is not None:
        failure = Failure(
            problems=tuple(check.problems),
            snippet="",
            graph=check.failure.to_dict(),
            excess=check.failing_excess,
        )
    return GraphRecord(
        index=index,
        ops=tuple(sorted(set(check.ops))),
        passed=bool(check.passed),
        figures=figures,
        problems=tuple(check.problems),
        failure=failure,
        points_checked=check.points_checked,
        points_skipped=check.points_skipped,
        points_settled=check.settled_points,
        points_any_order=check.order_settled_points,
        torch_off=tuple(check.torch_off),
        torch_off_graph=None if check.torch_off_instance is None else check.torch_off_instance.to_dict(),
    )


# --- the campaign's result and its per-op statistics ---------------------------------------------

# Quantiles reported per op (robust to one ill-conditioned graph, unlike the maxima).
QUANTILES = {"p50": 0.5, "p99": 0.99}

# Error distributions are histograms over decades: bin k holds errors in [10**(k+LO), 10**(k+LO+1)).
HIST_LO, HIST_HI = -18, 2
HIST_BINS = 1 + (HIST_HI - HIST_LO) + 1  # zeros, the decades, non-finite (the last, index -1)


@dataclass
class OpStats:
    """Per-op aggregate over the evidence about the op: graphs, their largest errors, error
    quantiles, failures; `elsewhere`: graphs that used the op but are another op's evidence."""

    graphs: int = 0
    failures: int = 0
    elsewhere: int = 0
    maxima: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(METRICS))
    histograms: dict[str, list[int]] = field(default_factory=dict)
    failing_graphs: list[int] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=dict)

    def quantile(self, metric: str, q: float) -> float | None:
        """The nearest-rank q-quantile of the graphs' `metric` (nan ranks above every number)."""
        values = sorted(self.values.get(metric, ()), key=lambda v: math.inf if math.isnan(v) else v)
        if not values:
            return None
        return values[max(0, math.ceil(q * len(values)) - 1)]

    def largest(self, metric: str, j: int) -> float | None:
        """The j-th largest of the graphs' `metric` (nan above every number); None if fewer."""
        values = sorted(self.values.get(metric, ()), key=lambda v: math.inf if math.isnan(v) else v)
        return values[-j] if 0 < j <= len(values) else None


@dataclass
class CampaignResult:
    settings: Settings
    records: list[GraphRecord]
    ops: dict[str, OpStats]
    seconds: float
    check_seconds: float
    findings: list[Finding] = field(default_factory=list)
    isolation_seconds: float = 0.0
    grouping_seconds: float = 0.0  # shrinking, blaming, grouping and settling the failures
    structure: Any = None  # the structural phase's StructureReport (None: the phase did not run)
    edges: Any = None  # the edge-value phase's EdgeReport (None: the phase did not run)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase, in the order run
    isolated: list[GraphRecord] = field(default_factory=list)  # the op-isolation pass's one-op graphs
    incomplete: str | None = None  # why the campaign stopped short (its cluster lost), None: it finished

    @property
    def failures(self) -> list[GraphRecord]:
        return [r for r in self.records if not r.passed]

    @property
    def failing_findings(self) -> list[Finding]:
        """The findings that fail the run under its conventions (the others are notes)."""
        return failing(self.findings, self.settings.conventions)

    @property
    def cut_short(self) -> tuple[int, ...]:
        """The failing graphs whose shrinking the safety cap in seconds cut short: what they show
        depends on the machine's speed, not only on the engine (`regression_gate` does not judge it)."""
        return tuple(r.index for r in self.records if r.failure is not None and r.failure.cut_short)

    @property
    def passed(self) -> bool:
        """No failing finding, no failing graph left without one, and every phase run."""
        unexplained = [r for r in self.failures if not r.is_settled]
        return not self.failing_findings and not unexplained and self.incomplete is None


def _bigger(current: float | None, new: float | None) -> float | None:
    """The larger of two figures; nan beats every number (it marks a broken comparison)."""
    if new is None:
        return current
    if current is None or math.isnan(new):
        return new
    if math.isnan(current):
        return current
    return max(current, new)


def histogram_bin(value: float | None) -> int | None:
    """The bin of an error in a decade histogram: 0 holds exact zeros, -1 non-finite errors."""
    if value is None:
        return None
    if not math.isfinite(value):
        return -1
    if value == 0.0:
        return 0
    decade = math.floor(math.log10(value))
    return 1 + min(max(decade, HIST_LO), HIST_HI - 1) - HIST_LO


def faulted_ops(findings: Iterable[Finding]) -> set[str]:
    """The ops that have a finding of their own wherever they are evaluated: a one-op finding at
    ordinary inputs (a wrong rule), not one at a pole, a kink or an edge value, which says nothing
    about a graph that stays away from them; convention notes aside, and where torch is off (the
    engine is right there)."""
    return {
        f.ops[0]
        for f in findings
        if len(f.ops) == 1
        and f.region in (ORDINARY, "")
        and f.kind is not Kind.CONVENTION
        and f.tier not in NOT_THE_ENGINES
    }


def aggregate(
    records: Iterable[GraphRecord],
    findings: Iterable[Finding] = (),
    isolated: Iterable[GraphRecord] = (),
    faulted: Iterable[str] = (),
) -> dict[str, OpStats]:
    """Per-op figures over the evidence about each op, in index order, ops sorted by name:
    independent of job split.

    A random graph is evidence about op X when no other op in it has a finding of its own
    (`faulted_ops`) and, if it failed, the finding that covers it has X among its ops (a failing
    graph no finding covers counts for all its ops). Its figures join X's unless its finding sits
    at a special region (a pole, an edge value): such a failure counts, but its numbers say
    nothing about X's accuracy. The op-isolation pass's one-op graphs (`isolated`) are evidence
    about their op. `faulted`: more ops to treat as having a finding of their own (the gate's: those
    its baseline accepted one for, so that a fixed bug leaves the other ops' evidence as it was).
    """
    findings = list(findings)
    faulted = faulted_ops(findings) | set(faulted)
    covering = {i: f for f in findings for i in f.graph_indices}
    stats: dict[str, OpStats] = {}
    for record in sorted(records, key=lambda r: r.index):
        finding = None if record.passed else covering.get(record.index)
        for op in record.ops:
            s = stats.setdefault(op, OpStats())
            others_faulted = any(other in faulted for other in record.ops if other != op)
            if others_faulted or (finding is not None and op not in finding.ops):
                s.elsewhere += 1
                continue
            s.graphs += 1
            if not record.passed:
                s.failures += 1
                s.failing_graphs.append(record.index)
            if finding is None or finding.region in (ORDINARY, ""):
                _add_figures(s, record)
    for record in isolated:
        for op in record.ops:
            s = stats.setdefault(op, OpStats())
            s.graphs += 1
            _add_figures(s, record)
    return {op: stats[op] for op in sorted(stats)}


def _add_figures(s: OpStats, record: GraphRecord) -> None:
    for metric in METRICS:
        value = record.figures.get(metric)
        s.maxima[metric] = _bigger(s.maxima[metric], value)
        b = histogram_bin(value)
        if b is not None:
            s.histograms.setdefault(metric, [0] * HIST_BINS)[b] += 1
            s.values.setdefault(metric, []).append(value)
