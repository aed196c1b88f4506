"""Each entry is judged by its own rounding bound: a few ulps where the graph is well
conditioned (a gradient 1e-12 off is caught), the rounding of the cancelled terms where they
cancel (no alarm), for values, gradients and Hessian-vector products."""

from pathlib import Path

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.bound import EPS, EntryBounds, RoundingBounds, entry_bounds
from gradcheck.parity.compare import check_graph, repro_allowances
from gradcheck.parity.copies import Copies
from gradcheck.parity.errors import BOUND_SAFETY
from gradcheck.testing import kind_engines
from gradcheck.testing.broken_engines import MulOffByATrillionth, TinyAdapter
from gradcheck.testing.field_engines import DivisionOffByAPart, ReciprocalDivision

DATA = Path(__file__).with_name("data")
SEEDS = range(8)  # each draws its own cotangent (and Hessian direction)
X = -0.7202254583150607  # where x * x ** -1 is 1 - 1.1e-16 (micrograd's division)


# --- a well-conditioned graph: a 1e-12 error is caught -------------------------------------------

# x0 * x1 + sin(x0): every term positive at these points, no cancellation anywhere.
WELL_CONDITIONED = Graph(
    [Input("x0", 0.8), Input("x1", 1.3)],
    [OpNode("mul", (0, 1)), OpNode("sin", (0,)), OpNode("add", (2, 3))],
    [4],
    points=[np.array([0.8, 1.1, 0.4]), np.array([1.3, 0.7, 2.2])],
)


def test_a_planted_1e12_gradient_error_is_caught_on_a_well_conditioned_graph():
    assert check_graph(WELL_CONDITIONED, TinyAdapter(), seed=0).passed
    check = check_graph(WELL_CONDITIONED, MulOffByATrillionth(), seed=0, numeric=False)
    assert not check.passed
    (problem,) = [p for p in check.problems if p.input == "x1"]
    assert "× the rounding bound" in str(problem) and f"(allowed {BOUND_SAFETY:g} ×)" in str(problem)
    assert problem.error / problem.bound > BOUND_SAFETY and problem.allowed == BOUND_SAFETY * problem.bound


def test_a_well_conditioned_entry_is_allowed_a_few_ulps():
    bounds = entry_bounds(WELL_CONDITIONED, [np.array([0.8]), np.array([1.3])], np.array([[1.0]]))
    gradient = np.array([1.3 + np.cos(0.8), 0.8])
    assert np.all(bounds.grads[:, 0] < 4 * EPS * np.abs(gradient))
    assert bounds.forward[0, 0] < 4 * EPS * (0.8 * 1.3 + np.sin(0.8))


# --- a graph whose terms cancel: no alarm -----------------------------------------------------------

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
    assert 0 < check.max_bound_ratio <= 1


def test_a_square_of_a_cancellation_is_allowed_its_second_order_rounding():
    # (log(x / x))^2: the engine's 1 - 1.1e-16 squares to 1.2e-32 where torch has 0, and every
    # first-order term vanishes there (the square's slope is 0 at 0)
    graph = log_of_ratio(OpNode("mul", (2, 2)))
    forward, _ = ReciprocalDivision().run(graph, [X], [1.0])
    assert 0 < forward[0] < 1e-31
    check = check_graph(graph, ReciprocalDivision())
    assert check.passed, check.report()


def test_a_square_of_a_wrong_value_at_a_cancellation_still_fails():
    check = check_graph(log_of_ratio(OpNode("mul", (2, 2))), DivisionOffByAPart())
    assert not check.passed and "× the rounding bound" in str(check.problems[0])


def test_a_wrong_value_at_an_exact_cancellation_still_fails():
    check = check_graph(log_of_ratio(), DivisionOffByAPart())
    assert not check.passed
    (problem,) = map(str, check.problems)
    assert "forward: output 0 is 1.0000" in problem and "e-12 but torch gives 0.0" in problem
    assert "× the rounding bound" in problem


def test_the_forward_bound_is_the_rounding_of_the_terms_that_cancel():
    # log(x / x): the quotient 1 errs by div's accuracy, and log'(1) = 1; log(1) = 0 exactly
    div = REGISTRY["div"].accuracy.value
    bound = entry_bounds(log_of_ratio(), [np.array([X])], np.array([[1.0]])).forward[0, 0]
    assert bound == pytest.approx(div * EPS)
    # the same cancellation times 1000: the bound scales with it (and the product's own rounding is of 0)
    scaled = log_of_ratio(OpNode("mul", (2,), consts=(Constant(1, 1000.0),)))
    bound = entry_bounds(scaled, [np.array([X])], np.array([[1.0]])).forward[0, 0]
    assert bound == pytest.approx(1000 * div * EPS)


def test_a_gradient_proportional_to_a_cancelled_value_is_judged_by_its_rounding():
    # log(x1 / x1) / x2 ** 3: its gradient in x2 is -3 log(x1 / x1) / x2 ** 4, rounding amplified
    inputs = (Input("x1", X), Input("x2", 0.02))
    extra = (OpNode("pow_const", (1,), (("exponent", 3.0),)), OpNode("div", (3, 4)))
    graph = log_of_ratio(*extra, inputs=inputs)
    _, grads = ReciprocalDivision().run(graph, [X, 0.02], [1.0])
    assert abs(grads[1]) > 1e-10, "far beyond a few ulps of the entry torch computes, 0"
    check = check_graph(graph, ReciprocalDivision())
    assert check.passed, check.report()
    assert not check_graph(graph, DivisionOffByAPart()).passed


def test_a_nonfinite_difference_is_never_within_the_bound():
    graph = Graph([Input("x0", 0.5)], [OpNode("log", (0,))], [1])

    class NanLog(ReciprocalDivision):
        def apply(self, op, args, attrs):
            out = super().apply(op, args, attrs)
            return out * float("nan") if op == "log" else out

    check = check_graph(graph, NanLog())
    assert not check.passed and check.max_forward_err == np.inf


# log_softmax(1e6 * x0 + x1): the shift by 1e6 * x0 cancels exactly, so d/dx0 is 0, but every
# float64 evaluation leaves ~1e-10 of rounding of terms ~1e6 there.
CANCELLING_GRADIENT = Graph(
    [Input("x0", 0.37), Input("x1", np.array([0.5, -1.25, 2.0]), (3,))],
    [
        OpNode("mul", (0,), consts=(Constant(1, 1e6),)),
        OpNode("add", (2, 1)),
        OpNode("log_softmax", (3,), attrs=(("dim", -1),)),
    ],
    [4],
    meta={"kind": "tensor"},
)


def test_a_cancelling_gradient_entry_passes_and_its_bound_is_the_terms_rounding():
    checks = [check_graph(CANCELLING_GRADIENT, load_engine("minigrad-tensor"), seed=s) for s in SEEDS]
    assert all(c.passed for c in checks), [c.problems for c in checks if not c.passed]
    values = CANCELLING_GRADIENT.input_values(0)
    bounds = entry_bounds(
        CANCELLING_GRADIENT, [np.asarray(v)[None] for v in values], [np.array([[1.0, -0.5, 0.25]])]
    )
    assert bounds.grads[0, 0] > 1e6 * EPS  # d/dx0, 0 exactly: the rounding of terms ~1e6
    # d/dx1, entries of size ~1 read softmax of the rounded logits 1e6 * x0 + x1 (~4e5 in
    # size): that rounding, far below a wrong derivative
    assert bounds.grads[1:, 0].max() < 1e-9


@pytest.mark.parametrize("seed", SEEDS)
def test_a_wrong_gradient_on_the_cancelling_graph_still_fails(seed):
    class OffByAMillionth(type(load_engine("minigrad-tensor"))):
        name = "grad-off"

        def run(self, graph, values, cotangent):
            forward, grads = super().run(graph, values, cotangent)
            return forward, [grads[0], np.asarray(grads[1]) * (1.0 + 1e-6)]

    check = check_graph(CANCELLING_GRADIENT, OffByAMillionth(), seed=seed, second_order=False)
    assert not check.passed
    assert any("gradient of x1" in str(p) for p in check.problems)


def test_a_convention_at_a_kink_is_not_taken_for_rounding():
    # relu(x0 - 0.5) at x0 = 0.5, an engine with relu'(0) = 1/2 where torch takes 0
    graph = Graph(
        [Input("x0", 0.5)], [OpNode("sub", (0,), consts=(Constant(1, 0.5),)), OpNode("relu", (1,))], [2]
    )
    for seed in SEEDS:
        check = check_graph(graph, kind_engines.ReluHalfAtZero(), seed=seed, numeric=False)
        assert not check.passed
        assert any("gradient of x0: engine" in str(p) and "torch 0.0" in str(p) for p in check.problems)


# --- Hessian-vector products ------------------------------------------------------------------------

# log_softmax(1e4 * x0 + x1): d²/dx0² is 0 by cancellation, but evaluations leave ~1e-9 of
# rounding of terms ~1e8 there (the tensor campaign's one second-derivative false alarm of old).
CANCELLING_HVP = Graph.from_json((DATA / "hvp_cancellation_log_softmax_shift.json").read_text())


def test_a_cancelling_hessian_entry_passes_and_its_bound_is_the_terms_rounding():
    checks = [check_graph(CANCELLING_HVP, load_engine("minigrad-tensor"), seed=s) for s in SEEDS]
    assert all(c.passed for c in checks), [c.problems for c in checks if not c.passed]
    values = CANCELLING_HVP.input_values(0)
    bounds = entry_bounds(
        CANCELLING_HVP,
        [np.asarray(v)[None] for v in values],
        [np.array([[1.0, -0.5, 0.25]])],
        direction=[np.array([0.7]), np.array([[1.0, 0.3, -2.0]])],
    )
    assert bounds.grads[0, 0] > 1e-10  # the cancelling entry: rounding of terms ~1e8
    assert bounds.grads[1:, 0].max() < 1e-9  # the others, of size ~1: the rounding of the logits


def test_a_wrong_second_derivative_of_the_same_size_still_fails():
    # tanh's second derivative missing, on a graph whose Hessian entries are ~1e-9 like the
    # cancelling ones: far above their rounding bound, so still a finding.
    graph = Graph(
        [Input("x0", 0.7)], [OpNode("tanh", (0,)), OpNode("mul", (1,), consts=(Constant(1, 1e-8),))], [2]
    )
    for seed in SEEDS:
        check = check_graph(graph, kind_engines.TanhFirstOrderOnly(), seed=seed)
        assert not check.passed
        assert any(
            "second derivatives" in str(p) and "× the rounding bound" in str(p) for p in check.problems
        )
    assert check_graph(graph, load_engine("minigrad"), seed=0).passed


def test_a_wrong_second_derivative_on_the_cancelling_graph_still_fails():
    class OffByAMillionth(type(load_engine("minigrad-tensor"))):
        name = "hvp-off"

        def run_hvp(self, graph, values, cotangent, direction):
            out = super().run_hvp(graph, values, cotangent, direction)
            return [out[0], np.asarray(out[1]) * (1.0 + 1e-6)]

    for seed in SEEDS:
        check = check_graph(CANCELLING_HVP, OffByAMillionth(), seed=seed)
        assert not check.passed
        assert any("Hessian-vector product entry" in str(p) for p in check.problems)


class HvpOffByUlps(type(load_engine("minigrad"))):
    """minigrad with its Hessian-vector product scaled by 1 + ulps * EPS."""

    name = "hvp-off-by-ulps"
    ulps = 2.0

    def run_hvp(self, graph, values, cotangent, direction):
        out = super().run_hvp(graph, values, cotangent, direction)
        return [float(v) * (1.0 + self.ulps * EPS) for v in out]


# x0 ** 2 * x1: minigrad computes its gradients as torch does, to the bit
CUBIC = Graph([Input("x0", 0.7), Input("x1", -1.3)], [OpNode("mul", (0, 1)), OpNode("mul", (2, 0))], [3])


def no_bound(*args, **kwargs):
    raise AssertionError("the rounding bound was computed for entries within ulps of torch's")


class GradientsOffByAnUlp(type(load_engine("minigrad"))):
    """minigrad with its forward values and gradients scaled by 1 + EPS."""

    name = "gradients-off-by-an-ulp"
    factor = 1.0 + EPS

    def run_points(self, graph, points, cotangents):
        for forward, grads in super().run_points(graph, points, cotangents):
            yield [v * self.factor for v in forward], [g * self.factor for g in grads]


def test_values_and_gradients_an_ulp_from_torchs_pass_without_computing_their_bound(monkeypatch):
    monkeypatch.setattr("gradcheck.parity.compare.RoundingBounds", no_bound)
    for seed in SEEDS:
        check = check_graph(CUBIC, GradientsOffByAnUlp(), seed=seed, second_order=False)
        assert check.passed, check.problems
        assert check.max_bound_ratio == 0.0  # no ratio to a bound that was not computed


def test_values_and_gradients_beyond_the_agreeing_ulps_are_judged_by_their_bound():
    engine = GradientsOffByAnUlp()
    engine.factor = 1.0 + 1e-12
    for seed in SEEDS:
        check = check_graph(CUBIC, engine, seed=seed, second_order=False)
        assert not check.passed
        assert any("× the rounding bound" in str(p) for p in check.problems)


def test_a_hessian_product_a_few_ulps_from_torchs_passes_without_computing_its_bound(monkeypatch):
    monkeypatch.setattr("gradcheck.parity.compare.RoundingBounds", no_bound)
    for seed in SEEDS:
        assert check_graph(CUBIC, HvpOffByUlps(), seed=seed).passed


def test_a_hessian_product_beyond_the_agreeing_ulps_is_judged_by_its_bound():
    engine = HvpOffByUlps()
    engine.ulps = 1e4  # about 2e-12 relative: far outside this graph's rounding bound
    for seed in SEEDS:
        check = check_graph(CUBIC, engine, seed=seed)
        assert not check.passed
        assert any("× the rounding bound" in str(p) for p in check.problems)


def test_a_point_failing_against_central_differences_takes_its_full_bound_in_one_pass(monkeypatch):
    runs = []
    original = Copies._run
    monkeypatch.setattr(
        Copies, "_run", lambda self, **passes: (runs.append(passes), original(self, **passes))[1]
    )
    engine = GradientsOffByAnUlp()
    engine.factor = 1.1  # 10% off: central differences disagree too
    check = check_graph(CUBIC, engine, seed=0, second_order=False)
    assert not check.passed and any("× the rounding bound" in str(p) for p in check.problems)
    assert runs == [{"seeded": False, "differentiable": True}]


def test_a_repros_allowances_take_one_pass_each(monkeypatch):
    runs = []
    original = Copies._run
    monkeypatch.setattr(
        Copies, "_run", lambda self, **passes: (runs.append(passes), original(self, **passes))[1]
    )
    repro_allowances(CUBIC, second_order=True)
    assert runs == [{"seeded": False, "differentiable": True}, {"seeded": True, "differentiable": True}]


def test_the_margin_figure_is_against_the_full_bound_not_its_lower_part(monkeypatch):
    # a lower part ten times smaller than the bound: an entry at a fifth of the bound passes
    # within twice the lower part; the figure must still say a fifth
    full = RoundingBounds.full

    def lower(self, float32=False):
        bounds = full(self, float32)
        return EntryBounds(bounds.forward / 10, bounds.grads / 10)

    graph = log_of_ratio()
    expected = check_graph(graph, ReciprocalDivision()).max_bound_ratio
    assert 0.1 < expected <= 0.4
    monkeypatch.setattr(RoundingBounds, "partial", lower)
    assert check_graph(graph, ReciprocalDivision()).max_bound_ratio == pytest.approx(expected)
