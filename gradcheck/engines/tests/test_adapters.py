"""Engine adapters, load_engine, the batched torch reference and the batched central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from gradcheck.engines import BUILTIN_ENGINES, EngineAdapter, UnknownEngineError, load_engine
from gradcheck.engines.micrograd import MicrogradAdapter
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.engines.snippets import value_snippet
from gradcheck.engines.strategies import engine_graphs
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.compare import check_graph
from gradcheck.parity.numeric_reference import central_differences, central_differences_tensor
from gradcheck.parity.torch_reference import run_torch_batch, run_torch_tensor_batch
from gradcheck.testing.fragment_engines import MulGradientOffAdapter


def sin_times() -> Graph:
    # f = sin(x0) * x1, output twice-weighted through the cotangent
    return Graph([Input("x0", 0.3), Input("x1", 2.0)], [OpNode("sin", (0,)), OpNode("mul", (2, 1))], [3])


def test_load_engine_resolves_builtin_names_and_module_paths():
    assert isinstance(load_engine(), MinigradValue)
    assert isinstance(load_engine("micrograd"), MicrogradAdapter)
    assert isinstance(load_engine("gradcheck.engines.micrograd:MicrogradAdapter"), MicrogradAdapter)
    adapter = MicrogradAdapter()
    assert load_engine(adapter) is adapter


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("pytorch", "unknown engine 'pytorch'; valid: minigrad, minigrad-tensor, micrograd"),
        ("no_such_module:Adapter", "cannot import module 'no_such_module'"),
        ("gradcheck.engines.adapter:Nope", "has no attribute 'Nope'"),
        ("gradcheck.graphs.ir:Graph", "is not an EngineAdapter"),
    ],
)
def test_load_engine_errors_name_the_problem_and_the_valid_names(name, message):
    with pytest.raises(UnknownEngineError, match=message.replace("(", r"\(")):
        load_engine(name)


@pytest.mark.parametrize(
    ("spec", "missing"),
    [
        ("minigrad", None),
        ("gradcheck.testing.hostile_engines:Benign", None),
        ("os.path:join", None),  # a module known by another name (posixpath)
        ("no_such_engine:Value", "no_such_engine"),
        ("gradcheck.no_such_module:Value", "gradcheck.no_such_module"),
        ("gradcheck.engines.loading.inner:Value", "gradcheck.engines.loading.inner"),  # not a package
        ("/no/such/engine.py:Value", "/no/such/engine.py"),
    ],
)
def test_the_module_an_engine_needs_is_found_without_importing_it(spec, missing):
    from gradcheck.engines.loading import missing_module

    assert missing_module(spec) == missing


def test_finding_an_engines_module_runs_none_of_its_code(tmp_path, monkeypatch):
    from gradcheck.engines.loading import missing_module

    (tmp_path / "exits_if_imported").mkdir()
    (tmp_path / "exits_if_imported" / "__init__.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "exits_if_imported" / "engine.py").write_text("raise SystemExit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert missing_module("exits_if_imported.engine:Value") is None
    assert missing_module("exits_if_imported.other:Value") == "exits_if_imported.other"


def test_builtin_table_lists_every_engine_the_docs_promise():
    assert set(BUILTIN_ENGINES) == {"minigrad", "minigrad-tensor", "micrograd", "torch"}


class Few(EngineAdapter):
    """A third-party engine plugged in with a few lines (micrograd's Value, three ops)."""

    name = "few"
    ops = frozenset({"add", "mul", "relu"})

    def leaf(self, value):
        from micrograd.engine import Value

        return Value(value)


@settings(max_examples=15)
@given(engine_graphs(Few(), points=4))
def test_a_third_party_adapter_is_a_few_lines_and_the_generator_keeps_to_its_ops(graph):
    assert set(graph.ops()) <= {"add", "mul", "relu"}
    assert check_graph(graph, Few()).passed


def test_checking_an_op_the_engine_lacks_is_a_clear_error():
    with pytest.raises(ValueError, match=r"does not support op\(s\) \['sin'\]"):
        check_graph(sin_times(), Few())


def test_micrograd_adapter_runs_a_graph_through_backward_of_the_weighted_sum():
    g = Graph([Input("x0", 1.5), Input("x1", -2.0)], [OpNode("mul", (0, 1)), OpNode("relu", (0,))], [2, 3])
    forward, grads = MicrogradAdapter().run(g, [1.5, -2.0], [0.5, 3.0])
    assert forward == [-3.0, 1.5]
    assert grads == [0.5 * -2.0 + 3.0, 0.5 * 1.5]


def test_micrograds_figures_are_the_same_in_every_run_of_a_seed():
    """micrograd sums gradients in the order its sets of nodes iterate; the adapter fixes that order
    (nodes hash by value), so two campaigns of one seed, with other objects alive between them
    (other addresses), report the same figures to the last bit."""
    from gradcheck.campaign import Settings, real_backend, run_campaign
    from gradcheck.campaign.report_json import build_report, figures_only

    settings = Settings(engine="micrograd", graphs=150, seed=1, structure=False, isolation=False)
    first = figures_only(build_report(run_campaign(settings, real_backend())))
    elsewhere = [object() for _ in range(1000)]
    assert figures_only(build_report(run_campaign(settings, real_backend()))) == first, len(elsewhere)


def test_minigrad_adapter_second_derivatives_are_hessian_vector_products():
    # f = sin(x0) * x1: H = [[-sin x0 * x1, cos x0], [cos x0, 0]]
    hvp = MinigradValue().run_hvp(sin_times(), [0.3, 2.0], [1.0], [1.0, -1.0])
    assert hvp == pytest.approx([-math.sin(0.3) * 2.0 - math.cos(0.3), math.cos(0.3)], rel=1e-14)


def test_torch_batch_equals_one_point_at_a_time():
    g = random_graph(np.random.default_rng(11), points=6)
    cot = np.random.default_rng(1).normal(size=(len(g.outputs), 6))
    batch = run_torch_batch(g, g.points, cot)
    for p in range(6):
        single = run_torch_batch(g, [x[p : p + 1] for x in g.points], cot[:, p : p + 1])
        np.testing.assert_array_equal(single.forward[:, 0], batch.forward[:, p])
        np.testing.assert_allclose(single.grads[:, 0], batch.grads[:, p], rtol=1e-15, atol=1e-300)


def test_central_differences_are_accurate_and_estimate_their_error():
    g = sin_times()
    x0 = np.array([0.3, -1.2, 2.5])
    x1 = np.array([2.0, 0.7, -3.0])
    cot = np.array([[1.0, -0.5, 2.0]])
    result = central_differences(g, [x0, x1], cot)
    exact = np.stack([cot[0] * np.cos(x0) * x1, cot[0] * np.sin(x0)])
    assert result.valid.all()
    assert np.all(np.abs(result.grads - exact) <= result.error)
    assert np.all(result.error < 1e-9)


def test_central_differences_mark_points_whose_stencil_crosses_a_kink():
    g = Graph([Input("x0", 0.0)], [OpNode("relu", (0,))], [1])
    result = central_differences(g, [np.array([1e-7, 0.5, -1e-7])], np.ones((1, 3)))
    assert result.valid.tolist() == [False, True, False]


def test_tensor_torch_batch_equals_one_point_at_a_time():
    g = random_graph(np.random.default_rng(8), tensor=True, points=5)
    shapes = graph_shapes(g)
    rng = np.random.default_rng(2)
    cot = [rng.normal(size=(5, *shapes[o])) for o in g.outputs]
    batch = run_torch_tensor_batch(g, g.points, cot)
    for p in range(5):
        single = run_torch_tensor_batch(g, [x[p : p + 1] for x in g.points], [c[p : p + 1] for c in cot])
        np.testing.assert_allclose(single.forward[:, 0], batch.forward[:, p], rtol=1e-15)
        np.testing.assert_allclose(single.grads[:, 0], batch.grads[:, p], rtol=1e-13, atol=1e-300)


def test_tensor_central_differences_match_a_worked_gradient():
    # f = sum(c * (A @ B)): df/dA = c @ B^T, df/dB = A^T @ c
    a = np.array([[[1.0, 2.0], [0.5, -1.0]]])
    b = np.array([[[0.3, -0.2, 1.0], [2.0, 0.7, -0.4]]])
    c = np.array([[[1.0, -1.0, 0.5], [2.0, 0.25, -3.0]]])
    g = Graph(
        [Input("x0", a[0], (2, 2)), Input("x1", b[0], (2, 3))],
        [OpNode("matmul", (0, 1))],
        [2],
        meta={"kind": "tensor"},
    )
    result = central_differences_tensor(g, [a, b], [c])
    exact = np.concatenate([(c[0] @ b[0].T).reshape(-1), (a[0].T @ c[0]).reshape(-1)])
    assert result.valid.all()
    np.testing.assert_allclose(result.grads[:, 0], exact, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(result.forward[:, 0], (a[0] @ b[0]).reshape(-1))


def test_a_lone_output_is_differentiated_as_it_is_not_through_the_engines_mul():
    adapter = MulGradientOffAdapter()  # its mul's gradient is 10% off; tanh is right
    graph = Graph([Input("x0", 0.5)], [OpNode("tanh", (0,))], [1], cotangent=[-2.0])
    _, (grad,) = adapter.run(graph, [0.5], [-2.0])
    assert grad == -2.0 * (1.0 - math.tanh(0.5) ** 2)
    snippet = value_snippet(graph, [], "Value", {"tanh": "{0}.tanh()"}, {})
    assert "v1.backward()" in snippet and "-2.0 * x0.grad" in snippet and "loss" not in snippet
