"""Second derivatives: an entry that is rounding on both sides is no failure, a wrong one still is."""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity import compare
from gradcheck.parity.compare import check_graph
from gradcheck.parity.rounding import rounding_spread
from gradcheck.testing import kind_engines

DATA = Path(__file__).with_name("data")
# log_softmax(1e4 * x0 + x1): the shift by 1e4 * x0 cancels exactly, so d²/dx0² is 0, but every
# float64 evaluation leaves ~1e-9 of rounding of terms ~1e8 there. The shape of the tensor
# campaign's one second-derivative false alarm (entries ~1e-9, engine and torch apart by percents).
CANCELLING = Graph.from_json((DATA / "hvp_cancellation_log_softmax_shift.json").read_text())
SEEDS = range(8)  # each draws its own cotangent and Hessian direction


def plain_hvp_check(graph: Graph, engine, seed: int, monkeypatch: pytest.MonkeyPatch):
    """The check with the rounding step switched off (every entry outside the tolerance fails)."""
    with monkeypatch.context() as patch:
        patch.setattr(compare, "rounding_only", lambda e, t, spread: np.zeros(e.shape, dtype=bool))
        return check_graph(graph, engine, seed=seed)


def test_a_cancelling_hessian_entry_fails_a_fixed_tolerance(monkeypatch):
    failing = [plain_hvp_check(CANCELLING, "minigrad-tensor", s, monkeypatch) for s in SEEDS]
    assert sum(not c.passed for c in failing) >= 4
    for check in failing:
        assert all("second derivatives: Hessian-vector product entry 0" in p for p in check.problems)


def test_a_cancelling_hessian_entry_within_its_rounding_spread_passes():
    checks = [check_graph(CANCELLING, "minigrad-tensor", seed=s) for s in SEEDS]
    assert all(c.passed for c in checks), [c.problems for c in checks if not c.passed]
    assert sum(c.settled_points for c in checks) >= 4, "the rounding step was what cleared them"


def test_the_spread_is_the_rounding_level_large_where_terms_cancel_and_tiny_elsewhere():
    values = CANCELLING.input_values(0)
    spread = rounding_spread(
        CANCELLING, values, [np.array([1.0, -0.5, 0.25])], [0.7, np.array([1.0, 0.3, -2.0])]
    )
    assert spread[0] > 1e-10  # the cancelling entry: rounding of terms ~1e8
    assert spread[1:].max() < 1e-12  # the others, of size ~1: rounding of themselves


def test_a_wrong_second_derivative_of_the_same_size_still_fails():
    # tanh's second derivative missing, on a graph whose Hessian entries are ~1e-9 like the
    # cancelling ones: far above their rounding level, so still a finding.
    graph = Graph(
        [Input("x0", 0.7)], [OpNode("tanh", (0,)), OpNode("mul", (1,), consts=(Constant(1, 1e-8),))], [2]
    )
    engine = kind_engines.TanhFirstOrderOnly()
    for seed in SEEDS:
        check = check_graph(graph, engine, seed=seed)
        assert not check.passed and check.settled_points == 0
        assert any("second derivatives" in p for p in check.problems)
    assert check_graph(graph, load_engine("minigrad"), seed=0).passed


def test_a_wrong_second_derivative_on_the_cancelling_graph_still_fails():
    # An engine off by 1e-6 in the entries of size ~1: rounding there is ~1e-16, so it fails.
    class OffByAMillionth(type(load_engine("minigrad-tensor"))):
        name = "hvp-off"

        def run_hvp(self, graph, values, cotangent, direction):
            out = super().run_hvp(graph, values, cotangent, direction)
            return [out[0], np.asarray(out[1]) * (1.0 + 1e-6)]

    for seed in SEEDS:
        check = check_graph(CANCELLING, OffByAMillionth(), seed=seed)
        assert not check.passed
        assert any("Hessian-vector product entry" in p for p in check.problems)
