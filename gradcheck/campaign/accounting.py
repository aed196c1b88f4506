"""Every failing graph accounted for once: explained by a finding, shrunk into one, or counted
among the unexplained graphs (phase 4 of a campaign).

First every failing graph is explained, where it can be, by the findings the earlier phases made
(`campaign.explain`: a node failing alone, nodes whose freezing makes it pass, the graph code).
The graphs nothing explains are shrunk, smallest first, while the shrink budget lasts
(`Settings.shrink_budget`: candidate checks of the engine, counted work, so that what a campaign
finds does not depend on how busy the machine is): each shrunk graph is a finding, and the graphs still
waiting are tried against its culprits before the next is shrunk, so an engine whose `abs`
corrupts its input costs one shrink, not one per graph. A graph that shrinking cannot stand for
(it does not fail its way again), or that is still waiting when the budget is spent, is one of
the unexplained graphs: one entry of the report (how many, the smallest in full), never a
finding of its own. Shrinking also stops at a safety cap in seconds (`Settings.shrink_time_cap`,
`settings.SHRINK_TIME_CAP`), not a budget: the graphs it cut short are marked (`Failure.cut_short`)
and the report names them.

Explaining and shrinking run engine code, so they go out as tasks (`pool.explain_batch`,
`pool.shrink_batch`) to wherever the campaign runs it (`pool.Runner`: watched workers at any
--jobs); a graph whose worker dies there is accounted for by its death's finding
(`crashes.with_death`), and a graph whose checking died already has that finding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcheck.campaign.alike import DID_NOT_FAIL_AGAIN
from gradcheck.campaign.crashes import with_death
from gradcheck.campaign.explain import Explaining, build_order, counted
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import example_rank, excess, graph_size
from gradcheck.campaign.pool import (
    SHRINK_TIME_CAP_REACHED,
    Campaign,
    Runner,
    ShrinkBudget,
    explain_batch,
    explain_batches,
    shrink_batch,
)
from gradcheck.campaign.records import GraphRecord, failure_snippet
from gradcheck.campaign.settings import SHRINK_TIME_CAP, Settings, default_shrink_budget
from gradcheck.campaign.supervisor import Work

# (phase, done, total), as `phases.Progress`.
Progress = Callable[[str, int, int], None]
BUDGET_SPENT = "the shrink budget was spent before its turn"
FIRST_WAVE = 20  # failing graphs explained before the others, whose findings' ops those try first


def shrink_budget(settings: Settings) -> int:
    """The candidate checks a campaign may spend shrinking: its setting, or the default for its size."""
    if settings.shrink_budget is not None:
        return settings.shrink_budget
    return default_shrink_budget(settings.graphs)


def shrink_time_cap(settings: Settings) -> float:
    """The seconds shrinking may take at most (a safety cap): its setting, or `SHRINK_TIME_CAP`."""
    return settings.shrink_time_cap if settings.shrink_time_cap is not None else SHRINK_TIME_CAP


def account_for_failures(
    runner: Runner,
    engine: Campaign,
    records: dict[int, GraphRecord],
    known: Sequence[Finding],
    start: Callable[[str], None],
    progress: Progress,
) -> None:
    """Each failing record of `records` with the finding that explains it, or left unexplained
    with the reason (see the module docstring), the engine code run by `runner` for `engine`;
    `records` updated in place. `start(phase)` starts
    timing "explain" or "shrink"; `progress` reports each.

    The failing graphs come in two waves: the first `FIRST_WAVE` are explained, and those nothing
    explains shrunk, before the others, which then try the ops and culprits of the findings the
    first wave made before anything else (most graphs fail for a reason a few graphs show)."""
    settings, backend = engine.settings, engine.backend
    assert backend is not None
    failing = sorted(i for i, r in records.items() if not r.passed and not r.is_settled)
    budget = [shrink_budget(settings)]  # candidate checks of shrinking left (explaining is not counted)
    deadline = time.monotonic() + shrink_time_cap(settings)  # the safety cap, not the budget
    found, pending, waited = list(known), [], 0
    for explained, wave in ((0, failing[:FIRST_WAVE]), (FIRST_WAVE, failing[FIRST_WAVE:])):
        if not wave:
            continue
        start("explain")
        if backend.make_explainer is not None:
            against = Explaining(distinct(found))
            explain_all(runner, engine, wave, records, against, progress, explained, len(failing))
            found += [f for i in wave if (f := _finding_of_record(records[i])) is not None]
        new = [i for i in wave if waiting(records[i])]
        pending, waited = pending + new, waited + len(new)
        start("shrink")
        pending = _shrink(runner, engine, records, pending, found, budget, deadline, waited, progress)
    for i in pending:
        if budget[0] > 0:  # the time cap stopped shrinking, not the budget
            f = records[i].failure
            assert f is not None
            capped = replace(f, unexplained=SHRINK_TIME_CAP_REACHED, cut_short=True)
            records[i] = replace(records[i], failure=capped)
        else:
            records[i] = _left(records[i], BUDGET_SPENT)
    progress("shrink", waited, waited)


def _shrink(
    runner: Runner,
    engine: Campaign,
    records: dict[int, GraphRecord],
    pending: list[int],
    found: list[Finding],
    budget: list[int],
    deadline: float,
    waited: int,
    progress: Progress,
) -> list[int]:
    """The `pending` graphs shrunk smallest first while `budget[0]` candidate checks last (it is
    spent in place) and the safety cap's `deadline` has not passed, each new finding with
    culprits tried on those still pending; the graphs still pending (`found` gets the findings;
    `waited`: how many graphs have waited for shrinking, the progress's total).

    The smallest `jobs` graphs are shrunk at once, but taken in turn as if shrunk one at a time: a
    graph that an earlier one's culprits explain is that finding's, its own shrink discarded, and
    each spends from what the ones before it left. A graph given more than that which spent all
    it would have had is shrunk again, in the next turn, with what it would have had. So the
    findings are the same for any --jobs, and at any load (short of the cap)."""
    settings = engine.settings
    if pending:
        progress("shrink", waited - len(pending), waited)
    while pending and budget[0] > 0 and time.monotonic() < deadline:
        pending.sort(key=lambda i: (graph_size(_graph_of_record(records[i])), i))
        turn, pending = pending[: settings.jobs], pending[settings.jobs :]
        given = ShrinkBudget(budget[0], deadline - time.monotonic())
        works = [Work((records[i],), given, k) for k, i in enumerate(turn)]
        shrunk = {
            r.index: r for _, batch in runner.map(shrink_batch, engine, works, with_death) for r in batch
        }
        for k, i in enumerate(turn):
            if not waiting(records[i]):  # explained by the culprits of one shrunk before it
                continue
            spent = _spent(shrunk[i])
            if budget[0] <= 0 or (budget[0] < given.checks and spent >= budget[0]):
                pending = [j for j in turn[k:] if waiting(records[j])] + pending  # again, with less
                break
            budget[0] -= spent
            records[i] = _accounted(shrunk[i], found)
            f, failure = _finding_of_record(records[i]), shrunk[i].failure
            if f is None or failure is None or not failure.shrunk_graph:
                continue
            found.append(f)
            later = [j for j in turn[k + 1 :] if waiting(records[j])] + pending
            pending = _explained_by_new_culprits(runner, engine, records, f, later, pending, budget)
        progress("shrink", waited - len(pending), waited)
    return pending


def _spent(record: GraphRecord) -> int:
    """The candidate checks a record's shrinking spent."""
    return record.failure.shrink_checks if record.failure is not None else 0


def _explained_by_new_culprits(
    runner: Runner,
    engine: Campaign,
    records: dict[int, GraphRecord],
    finding: Finding,
    later: list[int],
    pending: list[int],
    budget: list[int],
) -> list[int]:
    """The graphs of `later` (those of this turn still to take, then `pending`) tried against a new
    finding's culprits, one check of the shrink budget each (`budget[0]`, spent in place: the time
    it took counted against the seconds shrinking had before); `pending` without the graphs they
    explain."""
    backend = engine.backend
    if not finding.culprits or not later or backend is None or backend.make_explainer is None:
        return pending
    budget[0] -= len(later)
    explain_all(runner, engine, later, records, Explaining((finding,), culprits_only=True))
    return [i for i in pending if waiting(records[i])]


def distinct(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """`findings` without repeats: one per own signature (its kind and check, before wrong numbers
    merge), variant and culprits, in the order first met, each the best example of its kind (the
    smallest graph, then the furthest outside its allowance, as `grouping.group_findings` picks
    it): a graph explained by it is counted there, and makes a finding of its own only when it
    would be a better example (`explain`)."""
    seen: dict[tuple[Any, ...], Finding] = {}
    for f in findings:
        key = (f.own_signature, f.variant, f.culprits)
        if key not in seen or _rank(f) < _rank(seen[key]):
            seen[key] = f
    return tuple(seen.values())


def _rank(f: Finding) -> tuple[Any, ...]:
    return example_rank(f.graph, excess(f))


def _finding_of_record(record: GraphRecord) -> Finding | None:
    return record.failure.finding if record.failure is not None else None


def explain_all(
    runner: Runner,
    engine: Campaign,
    indices: Sequence[int],
    records: dict[int, GraphRecord],
    known: Explaining,
    progress: Progress | None = None,
    done: int = 0,
    total: int = 0,
) -> None:
    """Records `indices` explained against `known` where `runner` runs engine code, in batches
    (a record whose worker died: with its death's finding); their progress reported as the
    "explain" phase's (`done` of `total` before these), when given."""
    works = [
        Work(tuple(records[i] for i in part), known)
        for part in explain_batches(indices, engine.settings.jobs)
    ]
    if progress is not None:
        progress("explain", done, total)
    for _, batch in runner.map(explain_batch, engine, works, with_death):
        for record in batch:
            records[record.index] = record
        done += len(batch)
        if progress is not None:
            progress("explain", done, total)


def waiting(record: GraphRecord) -> bool:
    """Whether a failing record is neither explained nor left unexplained yet."""
    f = record.failure
    return f is not None and f.finding is None and not f.unexplained


def _accounted(record: GraphRecord, known: Sequence[Finding]) -> GraphRecord:
    """A record back from shrinking: with its finding, or unexplained with a reason. A graph that
    did not fail again belongs to the structural finding that gradients depend on the build,
    when there is one: it failed on one build and passed on another. So does a graph shrunk to
    no op node at all (its outputs are its inputs): no op's rule is left to be wrong, only the
    engine's code that sums the outputs and runs the backward pass."""
    f = record.failure
    order = build_order(known)
    no_op = f is not None and f.finding is not None and not f.finding.ops and f.finding.phase == "random"
    if f is not None and (f.unexplained == DID_NOT_FAIL_AGAIN or no_op) and order is not None:
        return replace(record, failure=replace(f, finding=counted(order, record.index), unexplained=""))
    if waiting(record):  # a shrinker that neither made a finding nor said why
        return _left(record, "shrinking gave no finding")
    return record


def _left(record: GraphRecord, why: str) -> GraphRecord:
    assert record.failure is not None
    return replace(record, failure=replace(record.failure, unexplained=why))


def _graph_of_record(record: GraphRecord) -> dict[str, Any]:
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
                "problems": [str(p) for p in self.smallest.problems],
                "records": [p.to_dict() for p in self.smallest.problems],
                "graph": f.graph if f is not None else None,
                "snippet": failure_snippet(f) if f is not None else None,
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
    smallest = min(with_graph, key=lambda r: (graph_size(_graph_of_record(r)), r.index))
    return Unexplained(tuple(sorted(r.index for r in left)), reasons, smallest)
