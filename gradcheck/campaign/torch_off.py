"""Findings where torch is off and the engine is not (`--reference exact`): tier `torch-off`.

Judged against the exact values, a graph the engine passes can still show torch off its allowance
(`GraphCheck.torch_off`): torch's atan2 gradient is 0 once x * x + y * y overflows where an engine
that scales first is right. That is no bug of the engine's: such a finding never fails its
campaign, and a report leads with it. Each is made where the check met it: a one-op graph of the
op-isolation pass as it is, a random graph blamed on the op node where torch is off alone (its
one-op graph at the arguments the node saw is the minimal repro), or, when no node is off alone,
the graph at its point. Only torch and the exact reference run here (torch judged as the engine
under test), never the engine: this runs in the process that writes the reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.campaign.blame import node_values, one_op_graph
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.records import GraphRecord
from gradcheck.engines.snippets import ALLOWED, EXACT, torch_repro
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.regions import region_of
from gradcheck.parity.against_exact import exact_repro
from gradcheck.parity.compare import check_graph
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import FORWARD, SECOND, Off, Problem

_KINDS = {FORWARD: Kind.WRONG_VALUE, SECOND: Kind.WRONG_SECOND_DERIVATIVE}


def torch_off_finding(
    graph: Graph,
    problems: Sequence[Problem],
    phase: str = "random",
    where: str = "",
    indices: Sequence[int] = (),
) -> Finding:
    """The finding that torch is off on `graph` (one point), as `problems` (`Off.TORCH`) say: its
    kind from what is off (nan or inf where the exact value is a number, or the reverse, or a wrong
    number), its repro torch's code judged against the exact values."""
    check = problems[0].check
    second = check == SECOND
    nonfinite = any(_pattern_differs(p.reference, p.exact) for p in problems)
    kind = Kind.NONFINITE if nonfinite else _KINDS.get(check, Kind.WRONG_GRADIENT)
    judged = exact_repro(graph, second)
    meta = {} if judged is None else {ALLOWED: judged["allowed"], EXACT: judged["exact"]}
    shown = replace(graph, meta={**graph.meta, **meta})
    return Finding(
        kind=kind,
        ops=tuple(graph.ops()),
        check=check,
        graph=graph.to_dict(),
        phase=phase,
        where=where,
        region=region_of(graph),
        graph_indices=tuple(indices),
        problems=tuple(problems),
        snippet=torch_repro(shown, second) if judged is not None else None,
    )


def torch_off_findings(records: Sequence[GraphRecord]) -> list[Finding]:
    """One finding per random graph the engine passed where torch is off, blamed on the op node
    where torch is off alone when there is one, grouped by cause (`group_findings`)."""
    locator = _TorchOffLocator()
    found = [
        locator.finding(Graph.from_dict(r.torch_off_graph), r.torch_off, r.index)
        for r in records
        if r.torch_off and r.torch_off_graph is not None
    ]
    return group_findings(found) if found else []


class _TorchOffLocator:
    """Finds the op node of a graph where torch is off alone, at the arguments the node saw:
    nodes whose op an earlier finding blamed first, each one-op graph judged once."""

    def __init__(self) -> None:
        from gradcheck.engines.torch_engine import TorchAdapter  # torch as the engine under test

        self.torch = TorchAdapter()
        self.torch.reference = "exact"
        self.blamed: list[str] = []  # the ops blamed so far, tried first
        self.seen: dict[tuple[str, bool], tuple[Graph, list[Problem]] | None] = {}

    def finding(self, graph: Graph, problems: Sequence[Problem], index: int) -> Finding:
        second = any(p.check == SECOND for p in problems)
        try:
            values = node_values(graph)
        except Exception:  # torch cannot compute the nodes: the graph is its own repro
            return torch_off_finding(graph, problems, indices=(index,))
        order = sorted(range(len(graph.nodes)), key=lambda i: graph.nodes[i].op not in self.blamed)
        for i in order:
            single = one_op_graph(graph, i, values)
            alone = self._off_alone(single, second)
            if alone is not None:
                self.blamed.append(graph.nodes[i].op)
                return torch_off_finding(alone[0], alone[1], indices=(index,))
        return torch_off_finding(graph, problems, indices=(index,))

    def _off_alone(self, single: Graph, second: bool) -> tuple[Graph, list[Problem]] | None:
        """The one-op graph where torch is off (at its point, with its cotangent) and its problems
        as torch's (the engine's number unknown there: it is not run); None where torch is not."""
        key = (single.to_json(indent=None), second)
        if key not in self.seen:
            self.seen[key] = self._judged(single, second)
        return self.seen[key]

    def _judged(self, single: Graph, second: bool) -> tuple[Graph, list[Problem]] | None:
        try:
            with np.errstate(all="ignore"):
                check = check_graph(single, self.torch, numeric=False, second_order=second, seed=0)
        except Exception:
            return None
        if check.passed or check.failure is None:
            return None
        wanted = [
            replace(p, off=Off.TORCH, engine=None) for p in check.problems if (p.check == SECOND) == second
        ]
        return (check.failure, wanted) if wanted else None


def _pattern_differs(a: Any, b: Any) -> bool:
    """Whether two numbers differ in being finite (or in which infinity, or nan)."""
    if a is None or b is None:
        return False
    x, y = float(a), float(b)
    if np.isfinite(x) and np.isfinite(y):
        return False
    return not (x == y or (np.isnan(x) and np.isnan(y)))
