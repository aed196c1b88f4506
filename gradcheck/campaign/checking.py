"""The campaign's real backend: graph `index` generated from (seed, index), checked three ways,
and failing graphs shrunk to small ones that still fail."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from gradcheck.campaign.blame import Diagnosed, blame_nodes, finding_of
from gradcheck.campaign.pool import Backend, Blamer, Checker, Shrinker
from gradcheck.campaign.records import GraphRecord, record_of
from gradcheck.campaign.settings import Settings, graph_seed
from gradcheck.campaign.validation import campaign_ops, load_adapter
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.parity.classify import Difference, classify
from gradcheck.parity.result import GraphCheck
from gradcheck.parity.trust import checked_graph, failing_check


class GraphChecker:
    """Graph `index` of the campaign: generated from (seed, index), checked three ways."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.adapter = load_adapter(settings.engine)
        self.ops = campaign_ops(settings, self.adapter)

    def graph(self, index: int) -> Graph:
        return campaign_graph(self.settings, self.ops, self.adapter.max_depth, index)

    def __call__(self, index: int) -> GraphRecord:
        seed = graph_seed(self.settings.seed, index)
        check = checked_graph(self.graph(index), self.adapter, seed=seed, dtype=self.settings.dtype)
        return record_of(index, check)


def campaign_graph(settings: Settings, ops: Sequence[str], max_depth: int | None, index: int) -> Graph:
    """Graph `index` of a campaign drawing `ops` for an engine taking graphs `max_depth` deep."""
    rng = np.random.default_rng(graph_seed(settings.seed, index))
    sizes = graph_sizes(max_depth)
    return random_graph(rng, ops=ops, tensor=settings.tensor, points=settings.points, sizes=sizes)


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


class FailureShrinker:
    """Shrinks a failing graph (its failing instance) to one that still fails the same way: to the
    first op node that fails alone with the same kind and check (`campaign.blame`), else with
    `gradcheck.graphs.shrink`.

    "Still fails" means: the engine disagrees with torch or the oracle at a checkable point, for
    a reason other than torch and the oracle disagreeing with each other, and the difference is
    of the same kind in the same check as the original graph's (no drift to another bug).
    """

    def __init__(self, settings: Settings, max_checks: int = 400) -> None:
        self.settings = settings
        self.adapter = load_adapter(settings.engine)
        self.max_checks = max_checks

    def __call__(self, record: GraphRecord) -> GraphRecord:
        f = record.failure
        if f is None:
            return record
        graph = Graph.from_dict(f.graph)
        cause = f.difference or cause_of(f.problems, graph, self.adapter)  # classified once, here
        seed = graph_seed(self.settings.seed, record.index)
        found = blame_nodes(graph, self.adapter, seed=seed, cause=cause)
        if found is not None:  # one op fails alone: that is minimal
            graph = found.failure
        else:
            check = self.failing_check(graph)
            found = Diagnosed.of(check, cause) if check is not None else None
            if found is not None and len(graph.nodes) > 1:
                graph, found = self.shrunk(graph, found, cause)
        found = found or Diagnosed(f.problems, graph, cause)
        finding = finding_of(found, self.adapter, indices=(record.index,))
        shrunk = dataclasses.replace(
            f,
            shrunk_graph=graph.to_dict(),
            shrunk_snippet=finding.snippet or graph.to_python("torch"),
            shrunk_ops=tuple(graph.ops()),
            finding=finding,
            difference=cause,
        )
        return dataclasses.replace(record, failure=shrunk, problems=found.problems)

    def failing_check(self, graph: Graph) -> GraphCheck | None:
        """The check of `graph` if the engine fails it at a checkable point, else None."""
        return failing_check(graph, self.adapter, dtype=self.settings.dtype)

    def shrunk(self, graph: Graph, found: Diagnosed, cause: Difference | None) -> tuple[Graph, Diagnosed]:
        """`graph` shrunk while it fails alike, with the failure of the graph it shrank to (the
        last candidate that failed alike: no check of it again, no classification again)."""
        last = [found]

        def still_fails(candidate: Graph) -> bool:
            alike = self.failing_alike(candidate, cause)
            if alike is not None:
                last.append(alike)
            return alike is not None

        smaller = shrink_graph(graph, still_fails, max_checks=self.max_checks)
        return smaller, last[-1] if smaller is not graph else found

    def failing_alike(self, graph: Graph, cause: Difference | None) -> Diagnosed | None:
        """`graph`'s failure if it fails with the difference `cause` (any failure when it is
        unknown: then it is left unclassified), else None."""
        check = self.failing_check(graph)
        if check is None or check.failure is None:
            return None
        alike = None if cause is None else cause_of(check.problems, check.failure, self.adapter)
        return Diagnosed.of(check, alike) if cause is None or alike == cause else None


class FailureBlamer:
    """Assigns a failing graph past the shrink budget to a finding cheaply (see `campaign.blame`)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.adapter = load_adapter(settings.engine)

    def __call__(self, record: GraphRecord, prefer: Sequence[str] = ()) -> GraphRecord:
        """`record` with its finding; nodes with an op in `prefer` are tried first."""
        f = record.failure
        if f is None:
            return record
        graph = Graph.from_dict(f.graph)
        try:
            seed = graph_seed(self.settings.seed, record.index)
            cause = f.difference or cause_of(f.problems, graph, self.adapter)  # classified once, here
            found = blame_nodes(graph, self.adapter, seed=seed, prefer=prefer, cause=cause)
            if found is not None:
                finding = finding_of(found, self.adapter, indices=(record.index,))
            else:
                unshrunk = Diagnosed(f.problems, graph, cause)
                finding = finding_of(unshrunk, self.adapter, indices=(record.index,), shrunk=False)
        except Exception:  # classification itself failed: keep the graph as its own finding
            return record
        failure = dataclasses.replace(f, finding=finding, difference=cause)
        return dataclasses.replace(record, failure=failure)


def cause_of(problems: Sequence[str], graph: Graph, adapter: EngineAdapter) -> Difference | None:
    """The kind and check of a failure on one-point `graph` (None if classifying it fails)."""
    try:
        return classify(problems, graph, adapter)
    except Exception:
        return None


def make_checker(settings: Settings) -> Checker:
    return GraphChecker(settings)


def make_shrinker(settings: Settings) -> Shrinker:
    return FailureShrinker(settings)


def make_blamer(settings: Settings) -> Blamer:
    return FailureBlamer(settings)


def real_backend() -> Backend:
    """The campaign backend of `gradcheck run` and the gate."""
    return Backend(make_checker, make_shrinker, make_blamer=make_blamer)
