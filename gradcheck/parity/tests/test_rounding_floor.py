"""An absolute floor from the graph's rounding: an output or gradient that cancels exactly is zero
only up to the size of the terms that cancelled, and an engine is judged against that, no closer."""

import numpy as np
import pytest

from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.compare import check_graph
from gradcheck.parity.rounding import EPS, forward_rounding
from gradcheck.testing.field_engines import DivisionOffByAPart, ReciprocalDivision

X = -0.7202254583150607  # where x * x ** -1 is 1 - 1.1e-16: the false alarm


ONE_INPUT = (Input("x1", X),)


def log_of_ratio(*extra: OpNode, inputs: tuple[Input, ...] = ONE_INPUT) -> Graph:
    """log(x1 / x1), then the `extra` nodes; the last node is the output."""
    nodes = [OpNode("div", (0, 0)), OpNode("log", (len(inputs),)), *extra]
    return Graph(list(inputs), nodes, [len(inputs) + len(nodes) - 1], cotangent=[1.0])


def test_an_exact_cancellation_within_rounding_is_no_finding():
    graph = log_of_ratio()
    forward, _ = ReciprocalDivision().run(graph, [X], [1.0])
    assert forward[0] == pytest.approx(-1.1e-16, rel=0.01), "the engine is 1 ulp off where torch gives 0"
    check = check_graph(graph, ReciprocalDivision())
    assert check.passed, check.report()
    assert check.settled_points == 1, "the floor was what cleared it"


def test_a_wrong_value_at_an_exact_cancellation_still_fails():
    check = check_graph(log_of_ratio(), DivisionOffByAPart())
    assert not check.passed
    (problem,) = check.problems
    assert "forward: output 0 is 1.0000" in problem and "e-12 but torch gives 0.0" in problem


def test_the_forward_floor_is_the_rounding_of_the_terms_that_cancel():
    # log(x / x): the quotient 1 may be rounded by EPS, and log'(1) = 1
    assert forward_rounding(log_of_ratio(), [X]).tolist() == [EPS]
    # the same cancellation times 1000: the floor scales with it
    scaled = log_of_ratio(OpNode("mul", (2,), consts=(Constant(1, 1000.0),)))
    assert forward_rounding(scaled, [X])[0] == pytest.approx(1000 * EPS)


def test_a_gradient_proportional_to_a_cancelled_value_is_judged_by_its_rounding():
    # log(x1 / x1) / x2 ** 3: its gradient in x2 is -3 log(x1 / x1) / x2 ** 4, rounding amplified
    inputs = (Input("x1", X), Input("x2", 0.02))
    extra = (OpNode("pow_const", (1,), (("exponent", 3.0),)), OpNode("div", (3, 4)))
    graph = log_of_ratio(*extra, inputs=inputs)
    _, grads = ReciprocalDivision().run(graph, [X, 0.02], [1.0])
    assert abs(grads[1]) > 1e-10, "beyond the torch tolerance's absolute part"
    check = check_graph(graph, ReciprocalDivision())
    assert check.passed, check.report()
    wrong = check_graph(graph, DivisionOffByAPart())
    assert not wrong.passed


def test_the_floor_does_not_clear_a_nonfinite_difference():
    graph = Graph([Input("x0", 0.5)], [OpNode("log", (0,))], [1])

    class NanLog(ReciprocalDivision):
        def apply(self, op, args, attrs):
            out = super().apply(op, args, attrs)
            return out * float("nan") if op == "log" else out

    check = check_graph(graph, NanLog())
    assert not check.passed and check.max_forward_err == np.inf
