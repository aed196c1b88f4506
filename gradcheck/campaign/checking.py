"""The campaign's real backend: graph `index` generated from (seed, index), checked three ways,
and failing graphs shrunk to small ones that still fail."""

from __future__ import annotations

import dataclasses

import numpy as np

from gradcheck.campaign.pool import Backend, Checker, Shrinker
from gradcheck.campaign.records import GraphRecord, record_of
from gradcheck.campaign.settings import Settings, graph_seed
from gradcheck.campaign.validation import campaign_ops, load_adapter
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.parity.compare import check_graph


class GraphChecker:
    """Graph `index` of the campaign: generated from (seed, index), checked three ways."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.adapter = load_adapter(settings.engine)
        self.ops = campaign_ops(settings, self.adapter)

    def graph(self, index: int) -> Graph:
        rng = np.random.default_rng(graph_seed(self.settings.seed, index))
        return random_graph(rng, ops=self.ops, tensor=self.settings.tensor, points=self.settings.points)

    def __call__(self, index: int) -> GraphRecord:
        seed = graph_seed(self.settings.seed, index)
        check = check_graph(self.graph(index), self.adapter, seed=seed, dtype=self.settings.dtype)
        return record_of(index, check)


class FailureShrinker:
    """Shrinks a failing graph (its failing instance) with `gradcheck.graphs.shrink` to one that still fails.

    "Still fails" means: the engine disagrees with torch or the oracle at a checkable point, for
    a reason other than torch and the oracle disagreeing with each other.
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
        problems = self.problems(graph)
        if problems is None:  # the failing instance alone passes: keep it as found
            problems = list(f.problems)
        else:
            graph = shrink_graph(graph, lambda g: self.problems(g) is not None, max_checks=self.max_checks)
            problems = self.problems(graph) or problems
        shrunk = dataclasses.replace(
            f,
            shrunk_graph=graph.to_dict(),
            shrunk_snippet=graph.to_python("minigrad"),
            shrunk_ops=tuple(graph.ops()),
        )
        return dataclasses.replace(record, failure=shrunk, problems=tuple(problems))

    def problems(self, graph: Graph) -> list[str] | None:
        """The engine's problems on `graph` if it fails at a checkable point, else None."""
        try:
            check = check_graph(graph, self.adapter, dtype=self.settings.dtype)
        except Exception:
            return None
        if check.passed or check.points_checked == 0:
            return None
        if all("reference disagreement" in p for p in check.problems):
            return None  # torch and the oracle disagree: the candidate left the checkable domain
        return list(check.problems)


def make_checker(settings: Settings) -> Checker:
    return GraphChecker(settings)


def make_shrinker(settings: Settings) -> Shrinker:
    return FailureShrinker(settings)


def real_backend() -> Backend:
    """The campaign backend of `gradcheck run` and the gate."""
    return Backend(make_checker, make_shrinker)
