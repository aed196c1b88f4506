"""An engine's other roads to the gradient (torch.func's jacrev, jacfwd and vmap; JAX without jit)
are checked beside its reverse mode, and to the Hessian-vector product (forward over reverse,
reverse over reverse) beside its own: a bug under one transform alone is a finding of its own kind,
on its op, while a correct engine stays clean."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from gradcheck.campaign.checking import real_backend
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.settings import Settings
from gradcheck.engines.loading import load_engine
from gradcheck.engines.snippets import transform_snippet
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity import transforms
from gradcheck.parity.classify import classify_check
from gradcheck.parity.compare import check_graph
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import TRANSFORM, What
from gradcheck.testing.mode_engines import (
    TanhHvpForwardOff,
    TanhHvpForwardOffReverseOnly,
    TanhVmapOff,
    TanhVmapOffReverseOnly,
)

SPEC = "gradcheck.testing.mode_engines:TanhVmapOff"
HVP_SPEC = "gradcheck.testing.mode_engines:TanhHvpForwardOff"
# tanh(x0) * x1 at four points: vmap maps the batched rule over all four
TANH_MUL = Graph(
    [Input("x0", 0.0), Input("x1", 0.0)],
    [OpNode("tanh", (0,)), OpNode("mul", (2, 1))],
    [3],
    [np.array([0.7, -0.3, 1.2, 0.1]), np.array([1.5, 2.0, -0.5, 3.0])],
)


def test_torchs_transforms_give_the_reverse_mode_gradient():
    # d/dx0 = (1 - tanh²(0.7)) * 1.5, d/dx1 = tanh(0.7), the cotangent 1 at each of the four points
    points = [TANH_MUL.input_values(p) for p in range(4)]
    for name in TorchAdapter.transforms:
        (g0, g1), *rest = TorchAdapter().run_transform(name, TANH_MUL, points, [[1.0]] * 4)
        assert float(g0) == pytest.approx((1 - math.tanh(0.7) ** 2) * 1.5, rel=1e-15)
        assert float(g1) == pytest.approx(math.tanh(0.7), rel=1e-15)
        assert len(rest) == (3 if name == "torch.func.vmap" else 0)


def test_a_wrong_batching_rule_fails_under_vmap_alone():
    check = check_graph(TANH_MUL, TanhVmapOff())
    assert check.problems and {(p.what, p.check, p.case) for p in check.problems} == {
        (What.TRANSFORM, TRANSFORM, "torch.func.vmap")
    }
    problem = check.problems[0]
    assert problem.exact == pytest.approx(problem.reference, rel=1e-14)  # reverse mode is right
    assert abs(problem.engine - problem.exact) > 1e-9  # float32's rounding, carried into the gradient
    assert "torch.func.vmap: gradient entry" in str(problem)
    assert classify_check(check, TanhVmapOff()).kind is Kind.WRONG_TRANSFORM


def test_the_same_engine_checked_without_its_transforms_passes_unnoticed():
    assert check_graph(TANH_MUL, TanhVmapOffReverseOnly()).passed


def test_a_transform_that_does_not_apply_is_skipped():
    # the custom tanh has no forward-mode rule: jacfwd raises NotImplementedError, and is not judged
    points, cots = [TANH_MUL.input_values(0)], [[1.0]]
    with pytest.raises(NotImplementedError):
        TanhVmapOff().run_transform("torch.func.jacfwd", TANH_MUL, points, cots)
    reverse = np.array([0.0, 0.0])
    found = transforms.transform_problems(TanhVmapOff(), "torch.func.jacfwd", TANH_MUL, points, cots, reverse)
    assert found == ([], 0.0)


def test_without_an_exact_value_a_transform_is_held_to_the_reverse_mode(monkeypatch):
    monkeypatch.setattr(transforms, "run_exact", lambda *args: (_ for _ in ()).throw(ValueError("no form")))
    problems = check_graph(TANH_MUL, TanhVmapOff()).problems
    assert problems and all(p.what is What.TRANSFORM and p.exact is None for p in problems)


@pytest.mark.parametrize("tensor", [False, True])
def test_torch_is_clean_under_its_transforms(tensor):
    rng = np.random.default_rng(7)
    for _ in range(25):
        graph = random_graph(rng, tensor=tensor, points=4)
        check = check_graph(graph, TorchAdapter())
        assert check.passed, [str(p) for p in check.problems]


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_is_clean_with_and_without_jit():
    engine = load_engine("jax")
    assert engine.transforms == ("jax eager",)
    rng = np.random.default_rng(3)
    for _ in range(15):
        check = check_graph(random_graph(rng, ops=sorted(engine.ops), points=4), engine)
        assert check.passed, [str(p) for p in check.problems]


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_on_tensor_graphs_is_checked_under_jit_one_op_at_a_time():
    engine = load_engine("jax-tensor")
    (name,) = engine.transforms
    one = Sizes(nodes=(1, 1), tensor_nodes=(1, 1), deep_every=0)
    rng = np.random.default_rng(5)
    for op in ("mul", "tanh", "softmax", "amax"):
        graph = random_graph(rng, ops=[op], tensor=True, points=2, sizes=one)
        while len(graph.nodes) != 1:  # a drawn operand may need an op of its own
            graph = random_graph(rng, ops=[op], tensor=True, points=2, sizes=one)
        values = graph.input_values(0)
        outputs, _ = engine.run_jvp(graph, values, [np.zeros(np.shape(v)) for v in values])
        cotangent = [rng.normal(size=np.shape(o)) for o in outputs]
        (jitted,) = engine.run_transform(name, graph, [values], [cotangent])
        _, grads = engine.run(graph, values, cotangent)
        for g, j in zip(grads, jitted):
            np.testing.assert_allclose(j, g, rtol=1e-13, atol=1e-15)  # both rounded: no sum's order is fixed
        check = check_graph(graph, engine)
        assert check.passed, [str(p) for p in check.problems]
    with pytest.raises(NotImplementedError):  # compiling every larger graph: about 4x its check
        engine.run_transform(name, TANH_MUL, [TANH_MUL.input_values(0)], [[np.ones(4)]])


def test_a_campaign_names_the_batching_bug_once_on_its_op():
    settings = Settings(
        engine=SPEC, graphs=30, seed=2, tensor=True, ops=("add", "mul", "tanh", "sin"), structure=False
    )
    result = run_campaign(settings, real_backend())
    titles = [f.title for f in result.failing_findings]
    assert titles == ["tanh — wrong derivative under a transform (torch.func.vmap)"]
    assert "engine.run_transform(name, graph, [values], [cotangent])" in result.failing_findings[0].snippet


def test_a_transform_findings_repro_shows_each_transform_beside_reverse_mode(capsys):
    exec(compile(transform_snippet(TANH_MUL, SPEC), "repro", "exec"), {})
    out = capsys.readouterr().out
    assert "torch.func.jacrev agrees with reverse mode" in out
    assert "torch.func.jacfwd: does not apply" in out
    assert "torch.func.vmap: gradient entry" in out


# H(tanh(x0) * x1) · (1, 1) at x = (0.7, 1.5): t = tanh(0.7), s = 1 - t²
_T = math.tanh(0.7)
_S = 1 - _T**2
TANH_MUL_HVP = (-2 * _T * _S * 1.5 + _S, _S)


def _hvp_by(engine, name):
    values = TANH_MUL.input_values(0)
    return [float(h) for h in engine.run_hvp_transform(name, TANH_MUL, values, [1.0], [1.0, 1.0])]


def test_torchs_forward_over_reverse_gives_the_hessian_vector_product():
    (name,) = TorchAdapter.hvp_transforms
    assert _hvp_by(TorchAdapter(), name) == pytest.approx(TANH_MUL_HVP, rel=1e-15)


@pytest.mark.parametrize("engine", ["jax", "autograd"])
def test_the_function_engines_other_order_gives_the_hessian_vector_product(engine):
    if importlib.util.find_spec(engine) is None:
        pytest.skip(f"{engine} is not installed")
    adapter = load_engine(engine)
    (name,) = adapter.hvp_transforms  # JAX's own is forward over reverse; autograd's reverse over reverse
    assert _hvp_by(adapter, name) == pytest.approx(TANH_MUL_HVP, rel=1e-14)


def test_a_wrong_forward_rule_in_a_backward_fails_forward_over_reverse_alone():
    engine = TanhHvpForwardOff()
    check = check_graph(TANH_MUL, engine)
    assert {(p.what, p.check, p.case) for p in check.problems} == {
        (What.TRANSFORM, TRANSFORM, TorchAdapter.hvp_transforms[0])
    }
    problem = check.problems[0]
    assert problem.direction is not None and problem.exact is not None
    assert abs(problem.engine - problem.exact) > 1e-3  # -t where -2t belongs: a wrong number, not rounding
    assert "Hessian-vector product entry" in str(problem)
    assert classify_check(check, engine).kind is Kind.WRONG_TRANSFORM


def test_the_same_engine_without_its_other_order_passes_unnoticed():
    assert check_graph(TANH_MUL, TanhHvpForwardOffReverseOnly()).passed


def test_without_an_exact_value_the_other_order_is_held_to_the_engines_own(monkeypatch):
    monkeypatch.setattr(transforms, "run_exact", lambda *args: (_ for _ in ()).throw(ValueError("no form")))
    values = TANH_MUL.input_values(0)
    own = np.array(TANH_MUL_HVP)
    name = TorchAdapter.hvp_transforms[0]
    found, excess = transforms.hvp_transform_problems(
        TanhHvpForwardOff(), name, TANH_MUL, values, [1.0], [1.0, 1.0], own
    )
    assert found and excess > 1 and all(p.exact is None for p in found)


def test_a_campaign_names_the_forward_over_reverse_bug_once_on_its_op():
    settings = Settings(
        engine=HVP_SPEC, graphs=30, seed=2, tensor=True, ops=("add", "mul", "tanh", "sin"), structure=False
    )
    result = run_campaign(settings, real_backend())
    titles = [f.title for f in result.failing_findings]
    assert titles == [f"tanh — wrong derivative under a transform ({TorchAdapter.hvp_transforms[0]})"]


def test_the_repro_shows_each_order_of_the_hessian_vector_product(capsys):
    exec(compile(transform_snippet(TANH_MUL, HVP_SPEC), "repro", "exec"), {})
    out = capsys.readouterr().out
    assert "H·v:" in out
    assert "Hessian-vector product entry" in out
    exec(compile(transform_snippet(TANH_MUL, "torch"), "repro", "exec"), {})
    assert "agrees with the H·v" in capsys.readouterr().out


@pytest.mark.parametrize("x0, judged", [(0.0, False), (0.5, True)])
def test_the_other_order_is_not_judged_where_central_differences_cross_a_kink(x0, judged):
    # relu(x0) + tanh(x1) * x1: at x0 = 0 the first point's differences cross relu's kink
    graph = Graph(
        [Input("x0", x0), Input("x1", 0.7)],
        [OpNode("relu", (0,)), OpNode("tanh", (1,)), OpNode("mul", (3, 1)), OpNode("add", (2, 4))],
        [5],
    )
    problems = check_graph(graph, TanhHvpForwardOff(), seed=0).problems
    assert any(p.what is What.TRANSFORM for p in problems) is judged


def test_the_command_line_says_under_its_header_that_the_other_order_is_checked(tmp_path, capsys):
    from gradcheck.cli import main

    said = "H·v also by forward over reverse (forward_ad over autograd.grad)."
    for engine, shown in (("TanhHvpForwardOff", True), ("TanhHvpForwardOffReverseOnly", False)):
        spec = f"gradcheck.testing.mode_engines:{engine}"
        args = ["run", "--tensor", "--graphs", "2", "--ops", "tanh", "--no-save", "--no-structure"]
        main([*args, "--no-edges", "--engine", spec, "--out", str(tmp_path / engine)])
        assert (said in capsys.readouterr().out) is shown
