"""The campaign's real backend: graph `index` generated from (seed, index), checked three ways;
failing graphs explained by the findings already made, or shrunk to small ones that still fail."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

from gradcheck.campaign.alike import DID_NOT_FAIL_AGAIN, Likeness, first_alike
from gradcheck.campaign.blame import Diagnosed, blame_nodes, finding_of
from gradcheck.campaign.explain import Explaining, culprits, explain
from gradcheck.campaign.findings import Finding, GraphCode, Merged
from gradcheck.campaign.pool import (
    SHRINK_TIME_CAP_REACHED,
    Backend,
    Checker,
    Explainer,
    ShrinkBudget,
    Shrinker,
)
from gradcheck.campaign.records import METRICS, Failure, GraphRecord, record_of
from gradcheck.campaign.settings import Settings, graph_seed
from gradcheck.campaign.structure import EVERY_PATH
from gradcheck.campaign.validation import campaign_adapter, campaign_forms, campaign_ops, campaign_variants
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.shrink import Shrunk, shrink
from gradcheck.graphs.spellings import Forms
from gradcheck.parity.classify import Difference, cause_of
from gradcheck.parity.compare import check_graph, failing_check
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What
from gradcheck.parity.result import GraphCheck


class GraphChecker:
    """Graph `index` of the campaign: generated from (seed, index), checked three ways."""

    def __init__(self, settings: Settings, adapter: EngineAdapter) -> None:
        self.settings, self.adapter = settings, adapter
        self.ops = campaign_ops(settings, self.adapter)
        self.variants = campaign_variants(settings, self.adapter)
        self.forms = campaign_forms(settings, self.adapter)

    def graph(self, index: int) -> Graph:
        return campaign_graph(
            self.settings, self.ops, self.adapter.max_depth, index, self.variants, self.forms
        )

    def __call__(self, index: int) -> GraphRecord:
        seed = graph_seed(self.settings.seed, index)
        graph = self.graph(index)
        limit = self.settings.max_paths
        if limit is not None and graph.path_count() > limit:
            return too_many_paths(index, graph, limit)
        check = check_graph(graph, self.adapter, seed=seed, dtype=self.settings.dtype)
        return record_of(index, check)


def too_many_paths(index: int, graph: Graph, limit: int) -> GraphRecord:
    """Random graph `index`, not run: more paths than the budget of an engine whose backward
    follows every path (`Settings.max_paths`); counted in that structural finding."""
    problem = Problem(
        What.STRUCTURAL,
        case=f"graph {index}",
        note=(
            f"not run: {graph.path_count()} paths from the outputs to the inputs, more than the {limit} "
            f"a backward that follows every path is given"
        ),
    )
    finding = Finding(
        kind=Kind.STRUCTURAL,
        ops=(),
        check="gradient",
        graph=graph.to_dict(),
        phase="structure",
        where=EVERY_PATH,
        graph_indices=(index,),
        problems=(problem,),
        graph_code=GraphCode("paths"),
        merged=Merged(cases={"random": 1}),
    )
    failure = Failure(problems=(problem,), snippet="", graph=graph.to_dict(), finding=finding)
    return GraphRecord(
        index, tuple(sorted(set(graph.ops()))), False, dict.fromkeys(METRICS), (problem,), failure, 0
    )


def campaign_graph(
    settings: Settings,
    ops: Sequence[str],
    max_depth: int | None,
    index: int,
    variants: frozenset[str] | None = None,
    forms: Forms | None = None,
) -> Graph:
    """Graph `index` of a campaign drawing `ops` in their `variants` (`validation.campaign_variants`)
    and the adapter's spellings `forms` (`validation.campaign_forms`) for an engine taking graphs
    `max_depth` deep."""
    rng = np.random.default_rng(graph_seed(settings.seed, index))
    sizes = graph_sizes(max_depth)
    s = settings
    return random_graph(
        rng, ops=ops, tensor=s.tensor, points=s.points, sizes=sizes, variants=variants, forms=forms
    )


def graph_sizes(max_depth: int | None) -> Sizes:
    """The campaign's graph sizes, with no more op nodes than an engine's `max_depth` (a graph is
    never deeper than its op count); the default sizes when the engine has no limit or a higher one."""
    sizes = Sizes()
    if max_depth is None or max_depth >= max(sizes.nodes[1], sizes.deep_nodes[1]):
        return sizes
    cap = max(1, max_depth)
    return dataclasses.replace(
        sizes,
        nodes=(min(sizes.nodes[0], cap), min(sizes.nodes[1], cap)),
        deep_nodes=(min(sizes.deep_nodes[0], cap), min(sizes.deep_nodes[1], cap)),
    )


# Why a failing graph is unexplained when the shrink budget was spent before any candidate was tried.
BUDGET_SPENT_FIRST = "the shrink budget was spent before it could be shrunk"


class FailureShrinker:
    """Shrinks a failing graph (its failing instance) to one that still fails the same way, and
    about as strongly (`campaign.alike`): to the first op node that fails alone with the same kind
    and check (`campaign.blame`), else with `gradcheck.graphs.shrink`, within a budget of
    candidate checks (`pool.ShrinkBudget`).

    The result is the record with its finding, and, unless one node fails alone, the variants its
    shrunk graph fails because of (`Finding.culprits`, `campaign.explain.culprits`); or, when
    shrinking cannot stand for the graph, the record left unexplained with the reason: the graph
    does not fail its way again, or the budget was spent before any candidate was tried. Either
    way the record says how many checks it spent (`Failure.shrink_checks`): each op node checked
    alone and the graph checked again (one each), then every candidate judged.
    """

    def __init__(self, settings: Settings, adapter: EngineAdapter, max_checks: int = 400) -> None:
        self.settings, self.adapter = settings, adapter
        self.max_checks = max_checks

    def __call__(self, record: GraphRecord, budget: ShrinkBudget | None = None) -> GraphRecord:
        """`record` shrunk within `budget` (None: only `max_checks` candidates)."""
        f = record.failure
        if f is None:
            return record
        budget = budget or ShrinkBudget()
        deadline = None if budget.seconds is None else time.monotonic() + max(0.0, budget.seconds)
        graph = Graph.from_dict(f.graph)
        spent = 1 + len(graph.nodes)  # blaming (each op node alone) and the graph checked again
        cap = self.max_checks if budget.checks is None else min(self.max_checks, budget.checks - spent)
        cause = f.difference or cause_of(f.problems, graph, self.adapter)  # classified once, here
        seed = graph_seed(self.settings.seed, record.index)
        found = blame_nodes(graph, self.adapter, seed=seed, cause=cause)
        alone = found is not None
        timed_out = False
        if alone:  # one op fails alone: that is minimal (and explains other graphs as it is)
            small, complete = found.failure, True
        else:
            again = first_alike([graph], Likeness(cause), self.adapter, self.settings.dtype)
            if again is None:
                return _left_unexplained(record, cause, DID_NOT_FAIL_AGAIN, spent)
            found = again[1]
            result, found = self.shrunk(graph, again[1], Likeness(cause, f.excess), cap, deadline)
            small, complete, timed_out = result.graph, result.complete, result.timed_out
            spent += result.checks
        if small is graph and not complete:
            why = SHRINK_TIME_CAP_REACHED if timed_out else BUDGET_SPENT_FIRST
            return _left_unexplained(record, cause, why, spent, timed_out)
        finding = finding_of(found, self.adapter, indices=(record.index,))
        named = () if alone else culprits(small, self.adapter, self.settings.dtype)
        if named:
            finding = dataclasses.replace(finding, culprits=tuple(named))
        shrunk = dataclasses.replace(
            f,
            shrunk_graph=small.to_dict(),
            shrunk_snippet=finding.snippet or small.to_python("torch"),
            shrunk_ops=tuple(small.ops()),
            finding=finding,
            difference=cause,
            shrink_checks=spent,
            cut_short=timed_out,
        )
        return dataclasses.replace(record, failure=shrunk, problems=found.problems)

    def failing_check(self, graph: Graph) -> GraphCheck | None:
        """The check of `graph` if the engine fails it at a checkable point, else None."""
        return failing_check(graph, self.adapter, dtype=self.settings.dtype)

    def shrunk(
        self, graph: Graph, found: Diagnosed, like: Likeness, max_checks: int, deadline: float | None
    ) -> tuple[Shrunk, Diagnosed]:
        """`graph` shrunk while it fails like `like`, judging at most `max_checks` candidates
        (`Shrunk`: whether the passes ran to the end, the checks spent), and the failure of the
        graph it shrank to (the last candidate that failed alike: no check of it again, no
        classification again)."""
        last = [found]

        def first_failing(candidates: Sequence[Graph]) -> int | None:
            hit = first_alike(candidates, like, self.adapter, self.settings.dtype)
            if hit is None:
                return None
            last.append(hit[1])
            return hit[0]

        if len(graph.nodes) <= 1:
            return Shrunk(graph, True), found
        if max_checks <= 0:  # the budget is spent
            return Shrunk(graph, False), found
        result = shrink(graph, first_failing, deadline=deadline, max_checks=max_checks)
        return result, last[-1] if result.graph is not graph else found


def _left_unexplained(
    record: GraphRecord, cause: Difference | None, why: str, spent: int = 0, cut_short: bool = False
) -> GraphRecord:
    assert record.failure is not None
    failure = dataclasses.replace(
        record.failure, difference=cause, unexplained=why, shrink_checks=spent, cut_short=cut_short
    )
    return dataclasses.replace(record, failure=failure)


class FailureExplainer:
    """Accounts a failing graph to the finding that explains it (`campaign.explain`), cheaply:
    one-op checks of its nodes, the graph with some nodes frozen, rebuilds."""

    def __init__(self, settings: Settings, adapter: EngineAdapter) -> None:
        self.settings, self.adapter = settings, adapter

    def __call__(self, record: GraphRecord, known: Explaining) -> GraphRecord:
        """`record` with the finding that explains it, if one does (else as it was, classified)."""
        f = record.failure
        if f is None or f.finding is not None:
            return record
        graph = Graph.from_dict(f.graph)
        try:
            seed = graph_seed(self.settings.seed, record.index)
            cause = f.difference or cause_of(f.problems, graph, self.adapter)  # classified once, here
            found = explain(
                graph,
                cause,
                known,
                self.adapter,
                index=record.index,
                seed=seed,
                alone=f.alone,
                dtype=self.settings.dtype,
            )
        except Exception:  # explaining itself failed: the graph stays to be shrunk
            return record
        failure = dataclasses.replace(f, finding=found.finding, difference=cause, alone=found.alone)
        return dataclasses.replace(record, failure=failure)


def campaign_checker(settings: Settings) -> GraphChecker:
    """The checker of `settings`' campaign, its adapter loaded here: how a script outside a
    campaign regenerates or checks graph `index` (`campaign_checker(settings).graph(index)`)."""
    return GraphChecker(settings, campaign_adapter(settings))


def make_checker(settings: Settings, adapter: EngineAdapter) -> Checker:
    return GraphChecker(settings, adapter)


def make_shrinker(settings: Settings, adapter: EngineAdapter) -> Shrinker:
    return FailureShrinker(settings, adapter)


def make_explainer(settings: Settings, adapter: EngineAdapter) -> Explainer:
    return FailureExplainer(settings, adapter)


def real_backend() -> Backend:
    """The campaign backend of `gradcheck run` and the gate."""
    return Backend(make_checker, make_shrinker, make_explainer=make_explainer)
