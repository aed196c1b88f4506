"""One graph's outcome in a campaign (GraphRecord), built from the parity check's GraphCheck."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gradcheck.campaign.findings import Finding
from gradcheck.graphs.ir import Graph
from gradcheck.parity.classify import Difference
from gradcheck.parity.problem import Problem
from gradcheck.parity.result import GraphCheck

# The four gradient figures every graph check yields, and the forward error; names as GraphCheck's.
GRAD_METRICS = ("max_abs_err_torch", "max_rel_err_torch", "max_abs_err_numeric", "max_rel_err_numeric")
# The largest difference from torch as a multiple of its entry's rounding bound: how far outside
# its allowance a gradient is, however small its magnitude.
BOUND_METRIC = "max_bound_ratio"
METRICS = (*GRAD_METRICS, "max_forward_err", BOUND_METRIC)


@dataclass(frozen=True)
class Failure:
    """What a failing graph looks like, as found and after shrinking, and how it is accounted for:
    by its `finding`, or (None) as one of the unexplained graphs, for the reason `unexplained`
    says ("" while it is still being explained)."""

    problems: tuple[Problem, ...]
    snippet: str  # "" until a report shows it (`failure_snippet`): most failures are explained
    graph: dict[str, Any]
    shrunk_snippet: str | None = None
    shrunk_graph: dict[str, Any] | None = None
    shrunk_ops: tuple[str, ...] | None = None
    corpus_file: str | None = None
    finding: Finding | None = None  # the distinct problem this graph shows (see campaign.findings)
    difference: Difference | None = None  # its kind and check, classified once (shrinker or explainer)
    excess: float | None = None  # how far outside its allowance it fails (GraphCheck.failing_excess)
    alone: tuple[int, ...] = ()  # the positions of its op nodes that fail alone (campaign.explain)
    unexplained: str = ""  # why no finding explains it, when none does


@dataclass(frozen=True)
class GraphRecord:
    """One graph's outcome: which ops it used, whether it passed, and its error figures."""

    index: int
    ops: tuple[str, ...]
    passed: bool
    figures: dict[str, float | None]
    problems: tuple[Problem, ...] = ()
    failure: Failure | None = None
    points_checked: int = 1
    points_skipped: int = 0
    points_settled: int = 0  # oracle-only disagreements the precise oracle cleared (false alarms)
    # points beyond torch's rounding but within another evaluation order's of the exact value
    points_any_order: int = 0
    # judged against the exact values, a graph the engine passed where torch is off: torch's
    # problems (`Off.TORCH`) and the graph at that point (JSON), for a torch-off finding
    torch_off: tuple[Problem, ...] = ()
    torch_off_graph: dict[str, Any] | None = None

    @property
    def is_settled(self) -> bool:
        """Failing and already given its finding (its worker died, `campaign.crashes`): nothing to
        shrink or blame."""
        return self.failure is not None and self.failure.finding is not None


def failure_snippet(failure: Failure) -> str:
    """The failing graph as code (minigrad's spelling), written when a report first shows it."""
    return failure.snippet or Graph.from_dict(failure.graph).to_python("minigrad")


def record_of(index: int, check: GraphCheck) -> GraphRecord:
    """A GraphRecord from parity's GraphCheck."""
    checked = check.points_checked > 0
    figures = {m: (float(getattr(check, m)) if checked else None) for m in METRICS}
    failure = None
    if not check.passed and check.failure is not None:
        failure = Failure(
            problems=tuple(check.problems),
            snippet="",
            graph=check.failure.to_dict(),
            excess=check.failing_excess,
        )
    return GraphRecord(
        index=index,
        ops=tuple(sorted(set(check.ops))),
        passed=bool(check.passed),
        figures=figures,
        problems=tuple(check.problems),
        failure=failure,
        points_checked=check.points_checked,
        points_skipped=check.points_skipped,
        points_settled=check.settled_points,
        points_any_order=check.order_settled_points,
        torch_off=tuple(check.torch_off),
        torch_off_graph=None if check.torch_off_instance is None else check.torch_off_instance.to_dict(),
    )
