"""A unit of work whose worker died, hung or let an exception through, as the campaign reports it:
a finding of kind `crash`, `timeout` or `exception` naming the op the engine was applying (or the
graph's ops when it was elsewhere, as in backward), with the unit's graph as its repro.

Units skipped because their op ended a worker before (`Death.skipped`) join the same finding: an
engine whose relu calls `os._exit` has one finding, "relu — ended the engine's process", covering
every graph with a relu.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gradcheck.campaign.findings import Finding
from gradcheck.campaign.records import METRICS, Failure, GraphRecord
from gradcheck.campaign.structure import CaseResult, StructureReport
from gradcheck.campaign.supervisor import Death
from gradcheck.engines.origin import Raised
from gradcheck.graphs.ir import Graph
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What

_KINDS = {"crash": Kind.CRASH, "timeout": Kind.TIMEOUT, "raised": Kind.EXCEPTION}
_CHECKS = {"backward": "gradient", "second derivatives": "second-derivative"}


def death_finding(
    death: Death, graph: Graph | None, phase: str, where: str = "", indices: Sequence[int] = ()
) -> Finding:
    """The finding of one unit's death: the op the engine was applying, else the graph's ops."""
    if death.op and death.stage == "forward":
        ops: tuple[str, ...] = (death.op,)
    else:
        ops = tuple(graph.ops()) if graph is not None else ()
    if death.kind == "raised":
        problem = Problem(What.DIED, note=death.reason, raised=Raised(death.exception, death.reason))
    else:
        problem = Problem(What.DIED, note=death.describe, skipped=death.skipped)
    return Finding(
        kind=_KINDS[death.kind],
        ops=ops,
        check=_CHECKS.get(death.stage, "forward"),
        graph=graph.to_dict() if graph is not None else {},
        phase=phase,
        where=where,
        graph_indices=tuple(indices),
        problems=(problem,),
        death=death.reason,
        skipped=death.skipped,
    )


def death_record(index: int, graph: Graph, death: Death) -> GraphRecord:
    """Random graph `index` (`graph`) lost with its worker: failing, no figures, its finding made."""
    finding = death_finding(death, graph, "random", indices=(index,))
    failure = Failure(
        problems=finding.problems, snippet=graph.to_python("torch"), graph=graph.to_dict(), finding=finding
    )
    return GraphRecord(
        index=index,
        ops=tuple(sorted(set(graph.ops()))),
        passed=False,
        figures=dict.fromkeys(METRICS),
        problems=finding.problems,
        failure=failure,
        points_checked=0,
    )


def with_death(record: GraphRecord, death: Death) -> GraphRecord:
    """A failing record whose shrinking or blaming died: its finding is the death."""
    assert record.failure is not None
    graph = Graph.from_dict(record.failure.graph)
    finding = death_finding(death, graph, "random", indices=(record.index,))
    return replace(record, failure=replace(record.failure, finding=finding))


def dead_structure(death: Death) -> StructureReport:
    """The structural phase, lost with its worker: one failed case and the death's finding."""
    case = CaseResult("every structural check", "all", "failed", 1, 1, death.describe)
    return StructureReport([case], [death_finding(death, None, "structure", where=death.stage)])
