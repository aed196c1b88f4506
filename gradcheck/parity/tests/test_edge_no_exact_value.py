"""Torch's own faults are never the engine's bug, and nothing is torch's fault where there is no real
derivative to judge it by (issue 47): an edge case is judged by the exact value only where the
exact evaluator decides a real one. Not off the domain (a negative base's rate along its exponent
is log of a negative number), not at a pole, not where the function is undefined (atan2 at the
origin), not on the sign of an infinite slope; a finite value that only overflows float64 counts."""

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.ir import Graph
from gradcheck.parity.answers import one_point
from gradcheck.parity.edge_check import NO_EXACT_VALUE, EdgeProblem, check_edge, edge_graph
from gradcheck.parity.exact import run_exact
from gradcheck.parity.problem import Off

REFERENCES = ["torch", "exact"]


class ExactAnswers(MinigradValue):
    """An engine answering with the exact evaluator's own float64 numbers: where those are no real
    derivative, agreeing with them must not make torch off."""

    name = "exact-answers"

    def run(self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], program: Any = None) -> Any:
        with np.errstate(all="ignore"):
            exact = run_exact(graph, *one_point(graph, list(values), list(cotangent)))
        return [float(v) for v in exact.forward[:, 0]], [float(g) for g in exact.grads[:, 0]]


def claims(op: str, args: tuple[float, ...], reference: str) -> list[tuple[str, Off | None, float | None]]:
    """Every exact value or fault claimed at one edge case, by minigrad or by `ExactAnswers`."""
    found = []
    for engine in (load_engine("minigrad"), ExactAnswers()):
        for p in check_edge(engine, edge_graph(op, args, {}, reference)):
            if p.problem.off is not None or p.problem.exact is not None:
                found.append((engine.name, p.problem.off, p.problem.exact))
    return found


def judged_against_torch(op: str, args: tuple[float, ...], reference: str) -> list[EdgeProblem]:
    """`ExactAnswers`' differences from torch at one edge case, each asserted to be its own."""
    problems = check_edge(ExactAnswers(), edge_graph(op, args, {}, reference))
    for p in problems:
        assert p.problem.off is None and p.problem.exact is None, p.message
        assert p.problem.note == (NO_EXACT_VALUE if reference == "exact" else ""), p.message
    return problems


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("exponent", [0.5, 1e300, -1e300, 0.0])
def test_no_exact_value_is_claimed_for_pows_exponent_slope_at_a_negative_base(exponent, reference):
    assert claims("pow", (-1.0, exponent), reference) == []


@pytest.mark.parametrize("reference", REFERENCES)
def test_no_exact_value_is_claimed_at_pows_pole(reference):
    assert claims("pow", (0.0, -1.0), reference) == []
    assert judged_against_torch("pow", (0.0, -1.0), reference), "the engine's 0 differs from torch's -inf"


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("origin", [(0.0, 0.0), (-0.0, 0.0)])
def test_no_exact_value_is_claimed_at_atan2s_origin_where_torchs_zero_is_its_convention(origin, reference):
    assert claims("atan2", origin, reference) == []
    assert judged_against_torch("atan2", origin, reference), "the engine's nan differs from torch's 0"


@pytest.mark.parametrize("reference", REFERENCES)
def test_the_sign_of_sqrts_infinite_slope_at_minus_zero_is_no_fault_of_torchs(reference):
    assert claims("sqrt", (-0.0,), reference) == []
    assert judged_against_torch("sqrt", (-0.0,), reference), "the engine's +inf differs from torch's -inf"


@pytest.mark.parametrize("reference", REFERENCES)
def test_atan2s_finite_slope_that_only_overflows_float64_stays_torchs_fault(reference):
    # d/dy atan2(y, x) at (0, 5e-324) is 1 / x = 2e323: a real number, inf in float64; torch's is 0
    (problem,) = check_edge(load_engine("minigrad"), edge_graph("atan2", (0.0, 5e-324), {}, reference))
    assert problem.problem.off is Off.TORCH, problem.message
    assert (problem.problem.engine, problem.problem.reference, problem.problem.exact) == (
        math.inf,
        0.0,
        math.inf,
    )
