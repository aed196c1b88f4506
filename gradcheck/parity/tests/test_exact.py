"""The exact reference: a graph's outputs, gradients and Hessian-vector products, exact and
correctly rounded to float64; torch's float64 within its rounding bound of them; torch's
conventions at kinks and ties; exact where float64 is not; IEEE's nan and inf where torch's are."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import exact, exact_jets
from gradcheck.parity.bound import entry_bounds
from gradcheck.parity.exact import exact_values, run_exact, run_exact_batch
from gradcheck.parity.exact_jets import nearest_float
from gradcheck.parity.runs import ScalarRun, TensorRun
from gradcheck.parity.torch_reference import run_torch_batch, run_torch_tensor_batch

# torch's float64 results sit within this many times their rounding bound of the exact values
# (measured: 1.26 at most over the graphs below)
TORCH_WITHIN = 2.0


def _graph(nodes, *values, outputs=None, tensor=False):
    inputs = [Input(f"x{i}", v, np.shape(v)) for i, v in enumerate(values)]
    last = len(values) + len(nodes) - 1
    return Graph(inputs, nodes, outputs or [last], meta={"kind": "tensor"} if tensor else {})


def _scalar(graph, cot=1.0, direction=None, **kw):
    points = [np.array([inp.value]) for inp in graph.inputs]
    cotangent = np.full((len(graph.outputs), 1), cot)
    d = None if direction is None else np.array(direction, dtype=float)[:, None]
    return run_exact_batch(graph, points, cotangent, d, **kw), run_torch_batch(graph, points, cotangent, d)


def test_the_worked_example_z_is_x_times_y_plus_x():
    z = _graph([OpNode("mul", (0, 1)), OpNode("add", (2, 0))], 2.0, 3.0)
    result, _ = _scalar(z, direction=[1.0, 2.0])
    assert result.forward[:, 0].tolist() == [8.0]
    assert result.grads[:, 0].tolist() == [4.0, 2.0]
    assert result.hvp[:, 0].tolist() == [2.0, 1.0]  # the Hessian [[0, 1], [1, 0]] times (1, 2)
    assert result.all_settled and not result.undecided.any()


# --- against torch on random graphs ----------------------------------------------------------------


def _within_torchs_bound(graph, run, result, reference):
    bounds = entry_bounds(graph, run.batch, run.cot)
    hvp_bounds = entry_bounds(graph, run.batch, run.cot, direction=run.direction)
    for part, bound in (("forward", bounds.forward), ("grads", bounds.grads), ("hvp", hvp_bounds.grads)):
        ours, theirs = getattr(result, part), getattr(reference, part)
        allowed = TORCH_WITHIN * bound + getattr(result.radius, part)
        both_nan = np.isnan(ours) & np.isnan(theirs)
        assert np.all(both_nan | (np.abs(ours - theirs) <= allowed)), (part, graph.to_python("torch"))


@pytest.mark.parametrize("seed", range(3))
def test_torchs_float64_on_random_scalar_graphs_is_within_its_rounding_bound_of_the_exact_values(seed):
    rng = np.random.default_rng(seed)
    for _ in range(6):
        graph = random_graph(rng, points=4)
        run = ScalarRun(graph, 4, rng, hvp=True)
        result = run_exact_batch(graph, run.batch, run.cot, run.direction)
        _within_torchs_bound(graph, run, result, run.torch())


@pytest.mark.parametrize("seed", range(2))
def test_torchs_float64_on_random_tensor_graphs_is_within_its_rounding_bound_of_the_exact_values(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        graph = random_graph(rng, tensor=True, points=3)
        run = TensorRun(graph, 3, rng, hvp=True)
        result = run_exact(graph, run.batch, run.cot, run.direction)
        _within_torchs_bound(graph, run, result, run.torch())


def test_settled_values_are_those_of_a_run_at_four_times_the_precision(monkeypatch):
    """How we know the float64 values are the exact ones rounded: a run at 800 bits rounds every
    settled entry to the same float64, and lies within the radius of the 192-bit value."""
    rng = np.random.default_rng(7)
    graphs = [random_graph(rng, points=3) for _ in range(8)] + [random_graph(rng, tensor=True, points=2)]
    runs = [(ScalarRun if g.is_tensor is False else TensorRun)(g, g.n_points, rng, hvp=True) for g in graphs]
    first = [run_exact(g, r.batch, r.cot, r.direction, precise=True) for g, r in zip(graphs, runs)]
    monkeypatch.setattr(exact, "LOW", 400)
    monkeypatch.setattr(exact, "HIGH", 800)
    for graph, run, ours in zip(graphs, runs, first):
        finer = run_exact(graph, run.batch, run.cot, run.direction, precise=True)
        for part in ("forward", "grads", "hvp"):
            settled = getattr(ours.settled, part)
            assert np.array_equal(getattr(ours, part)[settled], getattr(finer, part)[settled])
            for mine, theirs, radius in zip(
                np.ravel(getattr(ours.precise, part)),
                np.ravel(getattr(finer.precise, part)),
                np.ravel(getattr(ours.radius, part)),
            ):
                assert (mpmath.isnan(mine) and mpmath.isnan(theirs)) or abs(mine - theirs) <= radius


# --- torch's conventions at kinks and ties ----------------------------------------------------------


def _kink_cases():
    for name, spec in sorted(REGISTRY.items()):
        for args, attrs in spec.kink_cases:
            yield pytest.param(name, args, attrs, id=f"{name}{list(np.asarray(a).tolist() for a in args)}")


@pytest.mark.parametrize(("name", "args", "attrs"), list(_kink_cases()))
def test_at_each_registry_kink_case_the_gradient_is_torchs_convention(name, args, attrs):
    """relu'(0) = 0, abs'(0) = 0, maximum's tie half each, amax's tied maxima sharing evenly,
    max(dim) all to the first index, clamp's bounds inside, x ** 0 flat at 0."""
    spec = REGISTRY[name]
    graph = _graph([OpNode(name, tuple(range(len(args))), tuple(sorted(attrs.items())))], *args)
    if spec.tensor_only:
        points = [np.asarray(a, dtype=float)[None] for a in args]
        out = REGISTRY[name].out_shape([np.shape(a) for a in args], attrs)
        cot = [np.ones((1, *out))]
        ours, theirs = run_exact(graph, points, cot), run_torch_tensor_batch(graph, points, cot)
    else:
        ours, theirs = _scalar(graph)
    assert ours.settled.grads.all()
    np.testing.assert_allclose(ours.grads, theirs.grads, rtol=2e-16, atol=0)


# --- exact where float64 is not ----------------------------------------------------------------------


def test_exp_of_a_tiny_x_minus_one_is_expm1_where_float64_keeps_a_millionth():
    x = 1e-10
    minus_one = OpNode("sub", (1,), consts=(Constant(1, 1.0),))
    graph = Graph([Input("x", x)], [OpNode("exp", (0,)), minus_one], [2])
    ours, theirs = _scalar(graph)
    with mpmath.workprec(300):
        expected = nearest_float(mpmath.expm1(x))
    assert ours.forward[0, 0] == expected and ours.settled.forward.all()
    assert abs(theirs.forward[0, 0] - expected) > 1e-8 * expected  # float64's exp(x) - 1


def test_a_number_lost_to_a_large_one_and_back_is_kept():
    graph = Graph(
        [Input("x", 1.5)],
        [OpNode("add", (0,), consts=(Constant(1, 1e16),)), OpNode("sub", (1,), consts=(Constant(1, 1e16),))],
        [2],
    )
    ours, theirs = _scalar(graph)
    assert ours.forward[0, 0] == 1.5 and theirs.forward[0, 0] == 2.0


def test_a_sum_float64_rounds_twice_is_rounded_once():
    # (1 + 2^-53) + 2^-53: float64 rounds 1 + 2^-53 to 1, then again; exactly 1 + 2^-52
    graph = _graph([OpNode("add", (0, 1)), OpNode("add", (3, 2))], 1.0, 2.0**-53, 2.0**-53)
    ours, theirs = _scalar(graph)
    assert ours.forward[0, 0] == 1.0 + 2.0**-52 and theirs.forward[0, 0] == 1.0


def test_a_sum_on_a_float64_midpoint_rounds_to_even_and_is_settled():
    graph = _graph([OpNode("add", (0, 1))], 1.0, 2.0**-53)  # exactly halfway between two floats
    ours, _ = _scalar(graph)
    assert ours.forward[0, 0] == 1.0 and ours.settled.forward.all() and ours.radius.forward[0, 0] == 0.0


def test_log_of_x_over_x_is_exactly_0_and_its_gradient_0_to_far_beyond_float64():
    graph = _graph([OpNode("div", (0, 0)), OpNode("log", (1,))], -0.7202254583150607)
    ours, _ = _scalar(graph, precise=True)
    assert ours.forward[0, 0] == 0.0 and ours.settled.forward.all()
    gradient, radius = ours.precise.grads[0, 0], ours.radius.grads[0, 0]
    assert abs(gradient) <= 1e-50 and radius <= 1e-50


# --- branches the precision cannot decide -----------------------------------------------------------


def _pythagoras_relu(x):
    """relu(sin(x)^2 + cos(x)^2 - 1): relu at exactly 0, reached through rounded values."""
    nodes = [
        OpNode("sin", (0,)),
        OpNode("cos", (0,)),
        OpNode("mul", (1, 1)),
        OpNode("mul", (2, 2)),
        OpNode("add", (3, 4)),
        OpNode("sub", (5,), consts=(Constant(1, 1.0),)),
        OpNode("relu", (6,)),
    ]
    return Graph([Input("x", x)], nodes, [7])


def test_a_branch_taken_on_a_value_the_precision_does_not_determine_leaves_the_point_unsettled(monkeypatch):
    monkeypatch.setattr(exact, "MAX_PRECISION", exact.HIGH)  # no run at a higher precision
    undecided = []
    for x in np.linspace(0.3, 3.0, 28):
        result, _ = _scalar(_pythagoras_relu(float(x)))
        if result.undecided.all():
            undecided.append(x)
            assert not result.settled.grads.any() and not result.settled.forward.any()
    assert undecided, "no point where relu's argument is below both precisions' resolution"


def test_a_higher_precision_decides_the_branch_when_the_value_is_exactly_0():
    result, _ = _scalar(_pythagoras_relu(1.3))  # the 64-bit run puts relu's argument at 1e-19
    assert result.precision[0] > exact.HIGH and not result.undecided.any()
    assert result.grads[0, 0] == 0.0 and result.settled.grads.all()  # relu'(0) = 0


# --- nan and inf where torch has them ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "x"),
    [
        ([OpNode("log", (0,))], 0.0),  # -inf, gradient inf
        ([OpNode("sqrt", (0,))], -1.0),  # nan
        ([OpNode("sqrt", (0,))], 0.0),  # 0, gradient inf
        ([OpNode("div", (0,), consts=(Constant(0, 1.0),))], 0.0),  # inf, gradient -inf
        ([OpNode("exp", (0,))], 1000.0),  # overflows: inf
        ([OpNode("exp", (0,)), OpNode("mul", (1,), consts=(Constant(1, 0.0),))], 1000.0),  # inf * 0 = nan
        ([OpNode("exp", (0,)), OpNode("sub", (1, 1))], 1000.0),  # inf - inf = nan
        ([OpNode("pow_const", (0,), (("exponent", -1.0),))], 0.0),  # inf
    ],
)
def test_nan_and_inf_stand_where_torchs_do(nodes, x):
    ours, theirs = _scalar(_graph(nodes, x))
    for part in ("forward", "grads"):
        mine, torchs = getattr(ours, part), getattr(theirs, part)
        assert np.array_equal(np.isnan(mine), np.isnan(torchs)), (part, mine, torchs)
        infinite = lambda v: np.where(np.isinf(v), np.sign(v), 0.0)
        assert np.array_equal(infinite(mine), infinite(torchs)), (part, mine, torchs)


# --- what is asked, and what is kept ------------------------------------------------------------------


def test_the_values_alone_are_the_full_runs_outputs():
    rng = np.random.default_rng(3)
    graph = random_graph(rng, points=5)
    run = ScalarRun(graph, 5, rng, hvp=False)
    full = run_exact_batch(graph, run.batch, run.cot)
    alone = exact_values(graph, run.batch)
    assert np.array_equal(alone.forward, full.forward) and alone.grads.shape == (0, 5) and alone.hvp is None


def test_the_high_precision_values_round_to_the_float64_ones():
    rng = np.random.default_rng(4)
    graph = random_graph(rng, points=3)
    run = ScalarRun(graph, 3, rng, hvp=True)
    result = run_exact_batch(graph, run.batch, run.cot, run.direction, precise=True)
    for part in ("forward", "grads", "hvp"):
        precise = np.vectorize(nearest_float)(getattr(result.precise, part))
        np.testing.assert_array_equal(precise, getattr(result, part))


def test_a_graph_evaluated_again_takes_every_jet_from_the_cache():
    rng = np.random.default_rng(5)
    nodes = [OpNode("mul", (0, 1)), OpNode("tanh", (2,)), OpNode("sin", (0,)), OpNode("add", (3, 4))]
    graph = _graph(nodes, 0.5, -1.5)
    graph.points = [rng.normal(size=4), rng.normal(size=4)]
    run = ScalarRun(graph, 4, rng, hvp=True)
    exact_jets.clear_cache()
    first = run_exact_batch(graph, run.batch, run.cot, run.direction)
    kept = exact_jets.cache_size()
    again = run_exact_batch(graph, run.batch, run.cot, run.direction)
    assert kept > 0 and exact_jets.cache_size() == kept and np.array_equal(first.grads, again.grads)
    assert math.isfinite(float(np.nansum(again.hvp)))


# --- a scalar graph's points at once ----------------------------------------------------------------


@pytest.mark.parametrize("hvp", [False, True])
def test_a_scalar_graphs_points_at_once_are_its_points_one_by_one_to_the_bit(hvp):
    """`exact_lanes` (every point of a node at once) does the number-by-number path's arithmetic."""
    rng = np.random.default_rng(9)
    for _ in range(6):
        graph = random_graph(rng, points=5)
        run = ScalarRun(graph, 5, rng, hvp=hvp)
        points = [
            exact._Point(
                [float(b[j]) for b in run.batch],
                run.cot[:, j].tolist(),
                None if run.direction is None else run.direction[:, j].tolist(),
            )
            for j in range(5)
        ]
        together = exact._Lanes(graph).evaluate_many(points, exact.HIGH)
        alone = exact._Graph(graph).evaluate_many(points, exact.HIGH)
        for lanes, numbers in zip(together, alone):
            assert [e._mpf_ for e in lanes.entries] == [e._mpf_ for e in numbers.entries]
            # the same values compared (numpy's sign on one number stops at the first that decides)
            assert _compared(lanes.decisions) == _compared(numbers.decisions)


def _compared(decisions):
    return {(a._mpf_, b._mpf_) for a, b, _ in decisions}


def test_the_hessian_of_a_power_at_exponent_0_keeps_its_mixed_derivative():
    # d2/da db a**b = a**(b - 1) (1 + b log a): 1/2 at (2, 0), though d/da a**b is 0 for every a
    # there; torch's convention (0 at 0 ** 0) must not take the rate along b with it
    graph = Graph([Input("a", 2.0), Input("b", 0.0)], [OpNode("pow", (0, 1))], [2])
    batch = [np.array([2.0]), np.array([0.0])]
    along_a = run_exact(graph, batch, np.array([[1.0]]), np.array([[1.0], [0.0]]))
    along_b = run_exact(graph, batch, np.array([[1.0]]), np.array([[0.0], [1.0]]))
    assert along_a.hvp[:, 0].tolist() == [0.0, 0.5]
    with mpmath.workdps(40):
        assert along_b.hvp[:, 0].tolist() == [0.5, float(mpmath.log(2) ** 2)]
