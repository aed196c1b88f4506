"""The op-isolation pass: each op the campaign draws, checked alone before any random graph.

A bug in one op then has a one-op finding of its own, named directly, and every random graph
that fails for the same reason joins it. Per op: a few one-op graphs at random points (one per
attribute choice drawn) and each registry kink case (checked against torch's convention there,
without central differences, which are meaningless exactly at a kink). The one-op graphs at
random points are also the first evidence about each op's figures (`statistics.aggregate`).
"""

from __future__ import annotations

import numpy as np

from gradcheck.campaign.blame import finding_of_check
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.records import GraphRecord, record_of
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.validation import campaign_ops, campaign_variants, load_adapter
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.regions import ORDINARY
from gradcheck.graphs.surface import graph_allowed
from gradcheck.parity.compare import kink_graphs
from gradcheck.parity.result import GraphCheck
from gradcheck.parity.trust import checked_graph

# One-op graphs per op and input points per graph: attributes vary between graphs, points within.
GRAPHS_PER_OP = 4
POINTS = 8
_ONE_OP = Sizes(inputs=(1, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)


def isolation_findings(settings: Settings, adapter: EngineAdapter | None = None) -> list[Finding]:
    """Every finding of the pass, ungrouped (one per failing one-op graph or kink case)."""
    return isolate(settings, adapter)[0]


def isolate(
    settings: Settings, adapter: EngineAdapter | None = None
) -> tuple[list[Finding], list[GraphRecord]]:
    """The pass's findings (ungrouped) and the records of its one-op graphs at random points
    (indexed from -1 down: they are no random graph of the campaign), but for those failing at a
    special region, and none in a float32 campaign (the pass checks in float64)."""
    adapter = adapter or load_adapter(settings.engine)
    ops = campaign_ops(settings, adapter)
    variants = campaign_variants(settings, adapter)
    found: list[Finding] = []
    records: list[GraphRecord] = []
    for op in ops:
        for k in range(GRAPHS_PER_OP):
            rng = np.random.default_rng([settings.seed, 0x150, ops.index(op), k])
            graph = random_graph(
                rng, ops=[op], tensor=settings.tensor, points=POINTS, sizes=_ONE_OP, variants=variants
            )
            if not graph.nodes:
                continue
            before = len(found)
            check = _check(graph, adapter, seed=k, where="", found=found)
            # a failure at a pole or an edge says nothing about the op's accuracy (as in aggregate);
            # and the pass checks in float64: no evidence about an op computed in float32
            evidence = settings.dtype == "float64" and all(f.region in (ORDINARY, "") for f in found[before:])
            if check is not None and evidence:
                records.append(record_of(-1 - len(records), check))
    for graph in kink_graphs(ops):
        if (graph.is_tensor and not settings.tensor) or not graph_allowed(graph, variants):
            continue
        where = "at " + ", ".join(_short(inp.value) for inp in graph.inputs)
        _check(graph, adapter, seed=0, where=where, found=found, numeric=False, second_order=False)
    return found, records


def _check(
    graph: Graph, adapter: EngineAdapter, seed: int, where: str, found: list[Finding], **options: bool
) -> GraphCheck | None:
    """The one-op graph's check (None when the engine cannot take the graph at all: no finding);
    a failure's finding is added to `found`."""
    try:
        check = checked_graph(graph, adapter, seed=seed, **options)
    except Exception:  # the one-op graph is outside what the engine can take: not a finding
        return None
    if not check.passed and check.failure is not None:
        found.append(finding_of_check(check, adapter, phase="isolation", where=where))
    return check


def _short(value: object) -> str:
    """A kink case's argument for a finding's place: -0.0 and 0.0 are both "0" (one finding)."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    number = float(value)  # type: ignore[arg-type]
    return f"{abs(number) if number == 0 else number:g}"
