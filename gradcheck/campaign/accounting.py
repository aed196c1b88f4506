"""Every failing graph accounted for once: explained by a finding, shrunk into one, or counted
among the unexplained graphs (phase 4 of a campaign).

First every failing graph is explained, where it can be, by the findings the earlier phases made
(`campaign.explain`: a node failing alone, nodes whose freezing makes it pass, the graph code).
The graphs nothing explains are shrunk, smallest first, while the shrink budget lasts
(`Settings.shrink_budget`, seconds): each shrunk graph is a finding, and the graphs still
waiting are tried against its culprits before the next is shrunk, so an engine whose `abs`
corrupts its input costs one shrink, not one per graph. A graph that shrinking cannot stand for
(it does not fail its way again), or that is still waiting when the budget is spent, is one of
the unexplained graphs: one entry of the report (how many, the smallest in full), never a
finding of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcheck.campaign.explain import Explaining
from gradcheck.campaign.findings import Finding, graph_size
from gradcheck.campaign.pool import Backend, Run, blame_batch, blame_batches, shrink_batch
from gradcheck.campaign.records import GraphRecord
from gradcheck.campaign.settings import Settings, default_shrink_budget

# (phase, done, total), as `phases.Progress`.
Progress = Callable[[str, int, int], None]
BUDGET_SPENT = "the shrink budget was spent before its turn"


def shrink_budget(settings: Settings) -> float:
    """The seconds a campaign may spend shrinking: its setting, or the default for its size."""
    if settings.shrink_budget is not None:
        return settings.shrink_budget
    return default_shrink_budget(settings.graphs)


def account_for_failures(
    settings: Settings,
    backend: Backend,
    run: Run,
    records: dict[int, GraphRecord],
    known: Sequence[Finding],
    start: Callable[[str], None],
    progress: Progress,
) -> None:
    """Each failing record of `records` with the finding that explains it, or left unexplained
    with the reason (see the module docstring); `records` updated in place. `start(phase)` starts
    timing "explain" and then "shrink"; `progress` reports each."""
    failing = sorted(i for i, r in records.items() if not r.passed and r.failure is not None)
    start("explain")
    if backend.make_blamer is not None:
        explain_all(settings, run, failing, records, Explaining(tuple(known)), "explain", progress)
    start("shrink")
    deadline = time.monotonic() + shrink_budget(settings)
    pending = [i for i in failing if waiting(records[i])]
    total = len(pending)
    progress("shrink", 0, total)
    while pending and time.monotonic() < deadline:
        pending.sort(key=lambda i: (graph_size(_graph(records[i])), i))
        turn, pending = pending[: settings.jobs], pending[settings.jobs :]
        seconds = deadline - time.monotonic()
        new = []
        for batch in run(shrink_batch, [(seconds, [records[i]]) for i in turn]):
            for record in batch:
                records[record.index] = _accounted(record)
                if record.failure is not None and record.failure.finding is not None:
                    new.append(record.failure.finding)
        new = [f for f in new if f.extra.get("culprits")]
        if new and pending and backend.make_blamer is not None:
            explain_all(
                settings, run, pending, records, Explaining(tuple(new), culprits_only=True), "", progress
            )
            pending = [i for i in pending if waiting(records[i])]
        progress("shrink", total - len(pending), total)
    for i in pending:
        records[i] = _left(records[i], BUDGET_SPENT)
    progress("shrink", total, total)


def explain_all(
    settings: Settings,
    run: Run,
    indices: Sequence[int],
    records: dict[int, GraphRecord],
    known: Explaining,
    phase: str,
    progress: Progress,
) -> None:
    """Records `indices` explained against `known` wherever `run` runs work, in batches; `phase`
    names their progress ("" for none)."""
    batches = [(known, [records[i] for i in part]) for part in blame_batches(indices, settings.jobs)]
    if phase:
        progress(phase, 0, len(indices))
    done = 0
    for batch in run(blame_batch, batches):
        for record in batch:
            records[record.index] = record
        done += len(batch)
        if phase:
            progress(phase, done, len(indices))


def waiting(record: GraphRecord) -> bool:
    """Whether a failing record is neither explained nor left unexplained yet."""
    f = record.failure
    return f is not None and f.finding is None and not f.unexplained


def _accounted(record: GraphRecord) -> GraphRecord:
    """A record back from shrinking: with its finding, or unexplained with a reason."""
    if waiting(record):  # a shrinker that neither made a finding nor said why
        return _left(record, "shrinking gave no finding")
    return record


def _left(record: GraphRecord, why: str) -> GraphRecord:
    assert record.failure is not None
    return replace(record, failure=replace(record.failure, unexplained=why))


def _graph(record: GraphRecord) -> dict[str, Any]:
    return record.failure.graph if record.failure is not None else {}


@dataclass(frozen=True)
class Unexplained:
    """The failing graphs no finding explains: their indices, how many for each reason, and the
    smallest of them (its record: problems, failing instance, snippet)."""

    indices: tuple[int, ...]
    reasons: dict[str, int]
    smallest: GraphRecord

    @property
    def graphs(self) -> int:
        return len(self.indices)

    def to_dict(self) -> dict[str, Any]:
        """As report.json writes it (`unexplained`)."""
        f = self.smallest.failure
        return {
            "graphs": self.graphs,
            "graph_indices": list(self.indices),
            "reasons": dict(self.reasons),
            "smallest": {
                "index": self.smallest.index,
                "ops": list(self.smallest.ops),
                "problems": list(self.smallest.problems),
                "graph": f.graph if f is not None else None,
                "snippet": f.snippet if f is not None else None,
            },
        }


def unexplained(records: Sequence[GraphRecord]) -> Unexplained | None:
    """The unexplained graphs among `records` (None when every failing graph has its finding)."""
    left = [r for r in records if not r.passed and (r.failure is None or r.failure.finding is None)]
    if not left:
        return None
    reasons: dict[str, int] = {}
    for r in left:
        why = (r.failure.unexplained if r.failure is not None else "") or "not explained"
        reasons[why] = reasons.get(why, 0) + 1
    with_graph = [r for r in left if r.failure is not None] or left
    smallest = min(with_graph, key=lambda r: (graph_size(_graph(r)), r.index))
    return Unexplained(tuple(sorted(r.index for r in left)), reasons, smallest)
