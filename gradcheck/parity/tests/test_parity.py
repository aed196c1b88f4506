"""check_graph: the three-way verdict, its figures, and the bugs it must (and must not) report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity import torch_reference as tb
from gradcheck.parity.compare import check_graph, check_kinks, kink_graphs
from gradcheck.parity.result import GraphCheck
from gradcheck.parity.runs import random_cotangent
from gradcheck.testing.broken_engines import BROKEN_ENGINES, TinyAdapter


def graph_with_everything() -> Graph:
    rng = np.random.default_rng(5)
    while True:
        g = random_graph(rng, points=8)
        if len(g.outputs) >= 2 and len(g.nodes) >= 10:
            return g


def test_a_correct_engine_passes_with_every_figure_small():
    g = graph_with_everything()
    result = check_graph(g, load_engine("minigrad"), seed=1)
    assert isinstance(result, GraphCheck)
    assert result.passed and result.problems == []
    assert result.ops == tuple(g.ops())
    assert result.points_checked + result.points_skipped == 8 and result.points_checked >= 6
    assert result.max_forward_err < 1e-12
    assert result.max_rel_err_torch < 1e-12
    assert result.max_rel_err_numeric < 1e-6
    assert result.max_rel_err_hvp is not None and result.max_rel_err_hvp < 1e-10
    d = result.to_dict()
    assert json.loads(json.dumps(d)) == d
    for key in (
        "ops",
        "passed",
        "problems",
        "max_abs_err_torch",
        "max_rel_err_torch",
        "max_abs_err_numeric",
        "max_rel_err_numeric",
        "max_forward_err",
    ):
        assert key in d


@pytest.mark.parametrize("name", sorted(BROKEN_ENGINES))
def test_each_broken_engine_is_reported_with_a_replayable_failure(name):
    engine = BROKEN_ENGINES[name]()
    rng = np.random.default_rng(0)
    for index in range(50):
        result = check_graph(random_graph(rng, points=8), engine, seed=index)
        if not result.passed:
            break
    assert not result.passed, f"{name} was not caught in 50 graphs"
    assert result.problems and result.failure is not None
    report = result.report()
    assert "# minigrad" in report and "# torch" in report and "max_rel_err_torch=" in report
    replay = check_graph(Graph.from_json(result.failure.to_json()), engine)
    assert not replay.passed  # the saved failing point (with its cotangent) fails again
    assert check_graph(result.failure, load_engine("minigrad")).passed


def test_the_correct_tiny_engine_raises_no_false_alarm():
    rng = np.random.default_rng(1)
    for index in range(40):
        assert check_graph(random_graph(rng, points=8), TinyAdapter(), seed=index).passed


class OffForward(MinigradValue):
    name = "off-forward"

    def value(self, node):
        return node.data * (1 + 1e-9)


def engine_value(value):
    """The engine's own constructor (not its adapter's code): it raises."""
    raise ZeroDivisionError("boom")


class Raising(MinigradValue):
    name = "raising"

    def leaf(self, value):
        return engine_value(value)


class WrongSecondDerivative(MinigradValue):
    name = "wrong-hvp"

    def hvp(self, outputs, inputs, cotangent, direction):
        return [
            h * 1.001 if h is not None else None for h in super().hvp(outputs, inputs, cotangent, direction)
        ]


def tanh_graph() -> Graph:
    return Graph([Input("x0", 0.4)], [OpNode("tanh", (0,)), OpNode("mul", (1, 1))], [2])


def test_a_forward_value_off_by_1e_9_fails():
    result = check_graph(tanh_graph(), OffForward())
    assert not result.passed and "forward: output 0" in str(result.problems[0])


def test_an_engine_that_raises_is_a_finding_not_a_crash():
    result = check_graph(tanh_graph(), Raising())
    assert not result.passed and "engine raised ZeroDivisionError: boom" in str(result.problems[0])


class RaisingAdapter(MinigradValue):
    name = "raising-adapter"

    def leaf(self, value):
        raise ZeroDivisionError("boom")


def test_an_adapter_that_raises_is_named_as_the_adapter():
    result = check_graph(tanh_graph(), RaisingAdapter())
    assert not result.passed
    words = "adapter raised ZeroDivisionError: boom (in the adapter's RaisingAdapter.leaf)"
    assert words in str(result.problems[0])


def test_wrong_second_derivatives_fail():
    result = check_graph(tanh_graph(), WrongSecondDerivative())
    assert not result.passed and "second derivatives" in str(result.problems[0])
    assert check_graph(tanh_graph(), WrongSecondDerivative(), second_order=False).passed


def test_when_torch_and_engine_agree_on_a_wrong_gradient_the_numerics_object(monkeypatch):
    real = tb.run_torch_batch

    def doubled(*args, **kwargs):
        result = real(*args, **kwargs)
        result.grads = result.grads * 2
        return result

    class Doubled(MinigradValue):
        def gradients(self, outputs, inputs, cotangent):
            return [2 * g for g in super().gradients(outputs, inputs, cotangent)]

    monkeypatch.setattr(tb, "run_torch_batch", doubled)
    result = check_graph(tanh_graph(), Doubled())
    assert not result.passed
    assert any("central differences" in str(p) for p in result.problems)
    assert any("reference disagreement" in str(p) for p in result.problems)


def test_a_graph_without_op_nodes_checks_the_identity():
    g = Graph([Input("x0", 0.25)], [], [0], cotangent=[3.0])
    result = check_graph(g, load_engine("minigrad"))
    assert result.passed and result.points_checked == 1


def test_kink_conventions_relu_abs_pow_at_zero():
    graphs = kink_graphs()
    assert {g.nodes[0].op for g in graphs} >= {"relu", "abs", "pow_const", "pow"}
    assert all(r.passed for r in check_kinks(load_engine("minigrad")))
    micrograd = check_kinks(load_engine("micrograd"))
    failing = [r.failure.to_python() for r in micrograd if not r.passed]
    # micrograd computes d/dx x**0 at x = 0 as 0 * 0**-1 and raises; torch says 0
    assert len(failing) == 1 and "x0 ** 0.0" in failing[0]


def test_a_tensor_graph_on_a_scalar_engine_is_a_clear_error():
    g = random_graph(np.random.default_rng(2), ops=["add", "tanh"], tensor=True)
    g.inputs[0] = Input("x0", np.ones((2, 3)), (2, 3))
    with pytest.raises(ValueError, match="has no tensors"):
        check_graph(g, load_engine("minigrad"))


class _AbsoluteNoise(MinigradValue):
    """A correct engine plus 1e-11 on every gradient: far inside the absolute tolerance."""

    def gradients(self, outputs, inputs, cotangent):
        return [g + 1e-11 for g in super().gradients(outputs, inputs, cotangent)]


def test_relative_errors_use_the_tolerance_scale_so_tiny_gradients_do_not_inflate_them():
    # d/dx (x*x) at x = 1e-6 is 2e-6: an absolute error of 1e-11 is 5e-6 of that gradient (and
    # some 1e10 times its rounding bound: a failure), but the reported relative figure measures
    # it against max(1, scale).
    g = Graph([Input("x0", 1e-6)], [OpNode("mul", (0, 0))], [1], cotangent=[1.0])
    result = check_graph(g, _AbsoluteNoise(), seed=0, second_order=False, numeric=False)
    assert not result.passed and result.max_bound_ratio > 1e9
    assert result.max_abs_err_torch == pytest.approx(1e-11, rel=1e-3)
    assert result.max_rel_err_torch == pytest.approx(1e-11, rel=1e-3)


@pytest.mark.parametrize("shape", [(1, 1), (3, 16), (2, 3, 4)])
def test_random_cotangents_are_numpys_uniform_times_choice_of_sign(shape):
    """The cotangents (and so every figure of the gate) are those numpy's `choice` draws make."""
    for seed in range(50):
        fast, plain = np.random.default_rng(seed), np.random.default_rng(seed)
        expected = plain.uniform(0.5, 1.5, size=shape) * plain.choice([-1.0, 1.0], size=shape)
        assert np.array_equal(random_cotangent(fast, shape), expected)
        assert fast.bit_generator.state == plain.bit_generator.state


class _NumpyNumbers(MinigradValue):
    """minigrad with its forward values as numpy scalars and its gradients as 0-d arrays."""

    def value(self, node):
        return np.float64(node.data)

    def gradients(self, outputs, inputs, cotangent):
        return [None if g is None else np.array(g) for g in super().gradients(outputs, inputs, cotangent)]


class _NoNumberAtPoint3(MinigradValue):
    """minigrad, but at the fourth point checked its first gradient is no number."""

    def run_points(self, graph, points, cotangents):
        for index, (forward, grads) in enumerate(super().run_points(graph, points, cotangents)):
            yield forward, [{"not": "a number"}, *grads[1:]] if index == 3 else grads


def test_results_as_numpy_numbers_are_judged_as_floats_are():
    g = graph_with_everything()
    plain, numpy = check_graph(g, load_engine("minigrad"), seed=3), check_graph(g, _NumpyNumbers(), seed=3)
    assert numpy.passed and numpy.to_dict() | {"engine": "minigrad"} == plain.to_dict()


def test_a_result_that_is_no_number_is_reported_where_it_came():
    g = graph_with_everything()
    result = check_graph(g, _NoNumberAtPoint3(), seed=3)
    assert not result.passed and result.points_checked == 4
    assert "wrong type: the gradient of x0 is dict" in str(result.problems[0])
    assert result.max_rel_err_torch < 1e-12  # the three points before it were checked
