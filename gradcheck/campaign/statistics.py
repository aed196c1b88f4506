"""Per-op statistics over a campaign's graphs: maxima, decade histograms, quantiles, failures."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gradcheck.campaign.findings import Finding, failing
from gradcheck.campaign.records import METRICS, GraphRecord
from gradcheck.campaign.settings import Settings

# Quantiles reported per op (robust to one ill-conditioned graph, unlike the maxima).
QUANTILES = {"p50": 0.5, "p99": 0.99}

# Error distributions are histograms over decades: bin k holds errors in [10**(k+LO), 10**(k+LO+1)).
HIST_LO, HIST_HI = -18, 2
HIST_BINS = 1 + (HIST_HI - HIST_LO) + 1  # zeros, the decades, non-finite (the last, index -1)


@dataclass
class OpStats:
    """Per-op aggregate: graphs that used the op, their largest errors, error quantiles, failures."""

    graphs: int = 0
    failures: int = 0
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

    @property
    def failures(self) -> list[GraphRecord]:
        return [r for r in self.records if not r.passed]

    @property
    def failing_findings(self) -> list[Finding]:
        """The findings that fail the run under its conventions (the others are notes)."""
        return failing(self.findings, self.settings.conventions)

    @property
    def passed(self) -> bool:
        """No failing finding, and no failing graph left without one."""
        unexplained = [r for r in self.failures if r.failure is None or r.failure.finding is None]
        return not self.failing_findings and not unexplained


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


def blamed_ops(findings: Iterable[Finding]) -> dict[int, tuple[str, ...]]:
    """Graph index -> the ops its failure counts against: those of the minimal graph of the
    finding that covers it (a failing graph no finding covers counts against all its ops)."""
    return {i: f.ops for f in findings for i in f.graph_indices}


def aggregate(records: Iterable[GraphRecord], findings: Iterable[Finding] = ()) -> dict[str, OpStats]:
    """Per-op figures over graphs, in index order, ops sorted by name: independent of job split.

    A failing graph counts as a failure of an op only when the op is in the minimal graph of the
    finding that covers it (`blamed_ops`): a relu bug does not mark the adds around it red.
    """
    stats: dict[str, OpStats] = {}
    blame = blamed_ops(findings)
    for record in sorted(records, key=lambda r: r.index):
        blamed = blame.get(record.index, record.ops) if not record.passed else ()
        for op in record.ops:
            s = stats.setdefault(op, OpStats())
            s.graphs += 1
            if op in blamed:
                s.failures += 1
                s.failing_graphs.append(record.index)
            for metric in METRICS:
                value = record.figures.get(metric)
                s.maxima[metric] = _bigger(s.maxima[metric], value)
                b = histogram_bin(value)
                if b is not None:
                    s.histograms.setdefault(metric, [0] * HIST_BINS)[b] += 1
                    s.values.setdefault(metric, []).append(value)
    return {op: stats[op] for op in sorted(stats)}
