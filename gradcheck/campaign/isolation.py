"""The op-isolation pass: each op the campaign draws, checked alone before any random graph.

A bug in one op then has a one-op finding of its own, named directly, and every random graph
that fails for the same reason joins it. Per op: a few one-op graphs at random points (one per
attribute choice drawn) and each registry kink case (checked against torch's convention there,
without central differences, which are meaningless exactly at a kink).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradcheck.campaign.blame import finding_of_check
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.validation import campaign_ops, load_adapter
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.compare import kink_graphs
from gradcheck.parity.trust import checked_graph

# One-op graphs per op and input points per graph: attributes vary between graphs, points within.
GRAPHS_PER_OP = 4
POINTS = 8
REDRAWS = 8  # further draws of a one-op graph when a draw holds no node
_ONE_OP = Sizes(inputs=(1, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)


@dataclass(frozen=True)
class IsolationCase:
    """One case of the pass: one-op graph `number` of `op` at random points, or its kink case
    `number` (`kink`), checked against torch's convention there."""

    op: str
    number: int
    kink: bool = False


def isolation_cases(ops: Sequence[str]) -> list[IsolationCase]:
    """Every case of the pass for `ops`, in the order the pass checks them."""
    cases = [IsolationCase(op, k) for op in ops for k in range(GRAPHS_PER_OP)]
    return cases + [IsolationCase(op, k, True) for op in ops for k in range(len(REGISTRY[op].kink_cases))]


def case_graph(case: IsolationCase, settings: Settings, ops: Sequence[str]) -> Graph | None:
    """The case's graph (None: it has none here, as a tensor kink case in a scalar campaign)."""
    if case.kink:
        graph = kink_graphs([case.op])[case.number]
        return None if graph.is_tensor and not settings.tensor else graph
    graph = _one_op_graph(settings, list(ops).index(case.op), case.op, case.number)
    return graph if graph.nodes else None


def check_case(
    case: IsolationCase, settings: Settings, ops: Sequence[str], adapter: EngineAdapter
) -> list[Finding]:
    """The findings of one case (none when it passes)."""
    graph = case_graph(case, settings, ops)
    if graph is None:
        return []
    if not case.kink:
        return _check(graph, adapter, seed=case.number, where="")
    # a scalar kink names its place ("relu at 0"); a tensor's values name no cause (its region
    # does: "amax at a tie")
    tensor = any(isinstance(inp.value, np.ndarray) for inp in graph.inputs)
    where = "" if tensor else "at " + ", ".join(_short(inp.value) for inp in graph.inputs)
    return _check(graph, adapter, seed=0, where=where, numeric=False, second_order=False)


def isolation_findings(settings: Settings, adapter: EngineAdapter | None = None) -> list[Finding]:
    """Every finding of the pass, ungrouped (one per failing one-op graph or kink case)."""
    adapter = adapter or load_adapter(settings.engine)
    ops = campaign_ops(settings, adapter)
    return [f for case in isolation_cases(ops) for f in check_case(case, settings, ops, adapter)]


def _one_op_graph(settings: Settings, index: int, op: str, k: int) -> Graph:
    """One-op graph `k` of `op`, drawn again (up to REDRAWS times) when the draw found no operands
    the op takes (mse_loss needs two of one shape): an op whose adapter spelling fails must meet
    it here, before the random graphs, to be left out of them."""
    graph = Graph([], [], [0])
    for attempt in range(REDRAWS + 1):
        seed = [settings.seed, 0x150, index, k] + ([attempt] if attempt else [])
        rng = np.random.default_rng(seed)
        graph = random_graph(rng, ops=[op], tensor=settings.tensor, points=POINTS, sizes=_ONE_OP)
        if graph.nodes:
            break
    return graph


def _check(graph: Graph, adapter: EngineAdapter, seed: int, where: str, **options: bool) -> list[Finding]:
    try:
        check = checked_graph(graph, adapter, seed=seed, **options)
    except Exception:  # the one-op graph is outside what the engine can take: not a finding
        return []
    if check.passed or check.failure is None:
        return []
    return [finding_of_check(check, adapter, phase="isolation", where=where)]


def _short(value: object) -> str:
    """A kink case's argument for a finding's place: -0.0 and 0.0 are both "0" (one finding)."""
    number = float(value)  # type: ignore[arg-type]
    return f"{abs(number) if number == 0 else number:g}"
