"""First derivatives: an entry that is rounding on both sides is no failure, a wrong one still is."""

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity import errors
from gradcheck.parity.compare import check_graph
from gradcheck.parity.rounding import gradient_spread
from gradcheck.testing import kind_engines

# log_softmax(1e6 * x0 + x1): the shift by 1e6 * x0 cancels exactly, so d/dx0 is 0, but every
# float64 evaluation leaves ~1e-10 of rounding of terms ~1e6 there, and engine and torch differ
# by more than the fixed tolerance at some cotangents while both are right to rounding.
CANCELLING = Graph(
    [Input("x0", 0.37), Input("x1", np.array([0.5, -1.25, 2.0]), (3,))],
    [
        OpNode("mul", (0,), consts=(Constant(1, 1e6),)),
        OpNode("add", (2, 1)),
        OpNode("log_softmax", (3,), attrs=(("dim", -1),)),
    ],
    [4],
    meta={"kind": "tensor"},
)
SEEDS = range(8)  # each draws its own cotangent


def test_a_cancelling_gradient_entry_fails_a_fixed_tolerance(monkeypatch):
    monkeypatch.setattr(errors, "rounding_only", lambda e, t, spread: np.zeros(e.shape, dtype=bool))
    failing = [c for c in (check_graph(CANCELLING, "minigrad-tensor", seed=s) for s in SEEDS) if not c.passed]
    assert failing
    for check in failing:
        assert all("gradient of x0: engine" in p and "torch" in p for p in check.problems)


def test_a_cancelling_gradient_entry_within_its_rounding_spread_passes():
    checks = [check_graph(CANCELLING, "minigrad-tensor", seed=s) for s in SEEDS]
    assert all(c.passed for c in checks), [c.problems for c in checks if not c.passed]
    assert sum(c.settled_points for c in checks) >= 1, "the rounding step was what cleared them"


def test_the_gradient_spread_is_large_where_terms_cancel_and_tiny_elsewhere():
    spread = gradient_spread(CANCELLING, CANCELLING.input_values(0), [np.array([1.0, -0.5, 0.25])])
    assert spread.shape == (4,)
    assert spread[0] > 1e-12  # d/dx0: rounding of terms ~1e6
    assert spread[1:].max() < 1e-14  # d/dx1, entries of size ~1: rounding of themselves


@pytest.mark.parametrize("seed", SEEDS)
def test_a_wrong_gradient_on_the_cancelling_graph_still_fails(seed):
    # An engine off by 1e-6 in the entries of size ~1: rounding there is ~1e-16, so it fails.
    class OffByAMillionth(type(load_engine("minigrad-tensor"))):
        name = "grad-off"

        def run(self, graph, values, cotangent):
            forward, grads = super().run(graph, values, cotangent)
            return forward, [grads[0], np.asarray(grads[1]) * (1.0 + 1e-6)]

    check = check_graph(CANCELLING, OffByAMillionth(), seed=seed, second_order=False)
    assert not check.passed
    assert any("gradient of x1" in p for p in check.problems)


def test_a_convention_at_a_kink_is_not_taken_for_rounding():
    # relu(x0 - 0.5) at x0 = 0.5, an engine with relu'(0) = 1/2 where torch takes 0: an input
    # moved by an ulp would cross the kink and spread torch's own gradient over 0..1, excusing it
    graph = Graph(
        [Input("x0", 0.5)], [OpNode("sub", (0,), consts=(Constant(1, 0.5),)), OpNode("relu", (1,))], [2]
    )
    for seed in SEEDS:
        check = check_graph(graph, kind_engines.ReluHalfAtZero(), seed=seed, numeric=False)
        assert not check.passed and check.settled_points == 0
        assert any("gradient of x0: engine" in p and "torch 0.0" in p for p in check.problems)
