"""The result of a parity check: `GraphCheck`, the verdict and figures of one graph checked at
its points, and how a failing point is recorded into it (the graph at that point, with its words)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.parity.problem import Problem
from gradcheck.parity.wording import number


@dataclass
class GraphCheck:
    """The verdict and figures of one graph checked at one or more input points.

    Errors are the largest over all checked points. Absolute errors are |engine - reference|;
    relative ones divide by max(1, the point's gradient scale (largest |reference| entry)), the
    same scale the tolerance's atol uses, so neither a near-zero entry nor a point whose
    gradients are all tiny inflates them. `failure` is the graph at the first failing point, with
    its cotangent, ready for `to_json()` and `to_python()`.
    """

    engine: str
    ops: tuple[str, ...]
    n_nodes: int
    depth: int
    passed: bool = True
    problems: list[Problem] = field(default_factory=list)
    points_checked: int = 0
    points_skipped: int = 0
    max_forward_err: float = 0.0
    max_abs_err_torch: float = 0.0
    max_rel_err_torch: float = 0.0
    # the largest difference from torch (forward values, gradients, Hessian-vector products) as a
    # multiple of its entry's rounding bound (`parity.errors.outside`); against the bound of any
    # evaluation order for an entry judged against the exact value (`parity.any_order`). Where
    # the bound's cheap lower part alone cleared an entry by more than 1 times it, the full bound
    # is computed for this figure: it is never a multiple of a lower bound above 1
    max_bound_ratio: float = 0.0
    max_abs_err_numeric: float = 0.0
    max_rel_err_numeric: float = 0.0
    max_rel_err_torch_numeric: float = 0.0
    max_rel_err_hvp: float | None = None
    failing_point: int | None = None
    failure: Graph | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # points where a disagreement was cleared: one only with central differences (by a precise
    # oracle, `trust`), or gradient or Hessian-vector product entries that differ from torch's by
    # their rounding (`rounding`)
    settled_points: int = 0
    # points where an entry differed from torch beyond torch's rounding, but stayed within the
    # rounding of another evaluation order of the exact value (`parity.any_order`): not a failure
    order_settled_points: int = 0
    # how far the failing point is outside its allowance: the largest ratio of an error to the
    # error allowed (inf where the engine raised or gave no number; None while the check passes)
    failing_excess: float | None = None
    # judged against the exact values (`parity.against_exact`), where the engine passes: torch's
    # entries outside the same allowance at its worst point (`Off.TORCH`: torch is off, the engine
    # right), and the graph at that point with its cotangent; empty and None where torch is within
    torch_off: list[Problem] = field(default_factory=list)
    torch_off_instance: Graph | None = None

    @property
    def checked(self) -> int:
        """How many graph instances (structure x point) were checked."""
        return self.points_checked

    @property
    def oracle_only(self) -> bool:
        """Failing, and every problem a disagreement with central differences alone (`parity.trust`
        asks a precise oracle before it is reported)."""
        if self.passed or not self.problems:
            return False
        return all(p.oracle_only for p in self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "ops": list(self.ops),
            "n_nodes": self.n_nodes,
            "depth": self.depth,
            "passed": self.passed,
            "problems": [str(p) for p in self.problems],
            "records": [p.to_dict() for p in self.problems],
            "points_checked": self.points_checked,
            "points_skipped": self.points_skipped,
            "max_forward_err": self.max_forward_err,
            "max_abs_err_torch": self.max_abs_err_torch,
            "max_rel_err_torch": self.max_rel_err_torch,
            "max_bound_ratio": self.max_bound_ratio,
            "max_abs_err_numeric": self.max_abs_err_numeric,
            "max_rel_err_numeric": self.max_rel_err_numeric,
            "max_rel_err_torch_numeric": self.max_rel_err_torch_numeric,
            "max_rel_err_hvp": self.max_rel_err_hvp,
            "failing_point": self.failing_point,
            "failing_excess": self.failing_excess,
            "failure": None if self.failure is None else self.failure.to_dict(),
            **(
                {
                    "torch_off": [p.to_dict() for p in self.torch_off],
                    "torch_off_instance": self.torch_off_instance.to_dict(),
                }
                if self.torch_off_instance is not None
                else {}
            ),
        }

    def report(self) -> str:
        """Everything a bug report needs: problems, figures, the failing graph as minigrad and torch code."""
        lines = [f"engine {self.engine}: {'PASSED' if self.passed else 'FAILED'} ({', '.join(self.ops)})"]
        lines += [f"  - {p}" for p in self.problems]
        figures = {name: getattr(self, name) for name in FIGURE_NAMES}
        lines.append("  figures: " + ", ".join(f"{k}={_fmt(v)}" for k, v in figures.items()))
        if self.failure is not None:
            lines += [
                "",
                "# minigrad",
                self.failure.to_python("minigrad"),
                "# torch",
                self.failure.to_python("torch"),
            ]
            lines += ["# graph JSON", self.failure.to_json(indent=None)]
        return "\n".join(lines)


# The figures `report` prints, in report.json's order.
FIGURE_NAMES = (
    "points_checked",
    "points_skipped",
    "max_forward_err",
    "max_abs_err_torch",
    "max_rel_err_torch",
    "max_bound_ratio",
    "max_abs_err_numeric",
    "max_rel_err_numeric",
    "max_rel_err_torch_numeric",
    "max_rel_err_hvp",
)


def _fmt(v: Any) -> str:
    return number(v) if isinstance(v, float) else str(v)


def record_failure(result: GraphCheck, graph: Graph, p: int, cot: list[Any], *problems: Problem) -> None:
    """Mark `result` failed at point `p`: the graph at that point with cotangent `cot` becomes its
    `failure`, and each problem is recorded at that point, with its input values."""
    result.passed = False
    result.failing_point = p
    result.failure, values = _instance(graph, p, cot)
    result.problems.extend(problem.at(p, values) for problem in problems)


def record_torch_off(result: GraphCheck, graph: Graph, p: int, cot: list[Any], *problems: Problem) -> None:
    """Keep torch's entries that are off the exact value at point `p` (the engine passed there):
    the graph at that point with cotangent `cot` and each problem recorded at it."""
    result.torch_off_instance, values = _instance(graph, p, cot)
    result.torch_off = [problem.at(p, values) for problem in problems]


def _instance(graph: Graph, p: int, cot: list[Any]) -> tuple[Graph, tuple[tuple[str, Any], ...]]:
    """`graph` at point `p` with cotangent `cot`, and its input values by name."""
    cotangent = [c if isinstance(c, np.ndarray) and c.ndim else float(c) for c in cot]
    instance = graph.instance(p, cotangent=cotangent)
    return instance, tuple((inp.name, _plain(inp.value)) for inp in instance.inputs)


def _plain(v: Any) -> Any:
    return v.tolist() if isinstance(v, np.ndarray) else v
