"""Forward mode is checked beside reverse mode: an engine's J·v against the exact derivative along
the direction, or, without an exact value, against its own reverse mode (the transpose identity);
a bug in forward mode alone is a finding of its own kind, on its op."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcheck.campaign.checking import real_backend
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.settings import Settings
from gradcheck.engines.loading import load_engine
from gradcheck.engines.snippets import forward_mode_snippet
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity import modes
from gradcheck.parity.classify import classify_check
from gradcheck.parity.compare import check_graph
from gradcheck.parity.exact import run_exact
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import FORWARD_MODE, What
from gradcheck.testing.mode_engines import TanhForwardOff, TanhForwardOffReverseOnly

# the tensor ops whose forward mode raises in HIPS autograd 1.9.1 (a test below shows it)
AUTOGRAD_FORWARD_MODE_RAISES = frozenset({"amax", "amin"})
TANH = Graph([Input("x0", 0.7)], [OpNode("tanh", (0,))], [1])


def test_the_exact_reference_gives_each_outputs_derivative_along_the_direction():
    # y0 = x0 * x1, y1 = tanh(x0) at (0.5, 3) along (2, -1): J·v = (2·3 - 0.5, 2·(1 - tanh²(0.5)))
    graph = Graph([Input("x0", 0.5), Input("x1", 3.0)], [OpNode("mul", (0, 1)), OpNode("tanh", (0,))], [2, 3])
    exact = run_exact(
        graph, [np.array([0.5]), np.array([3.0])], np.ones((2, 1)), np.array([[2.0], [-1.0]]), jvp=True
    )
    assert exact.jvp is not None
    assert exact.jvp[:, 0].tolist() == [5.5, 2 * (1 - math.tanh(0.5) ** 2)]
    assert exact.settled.jvp is not None and exact.settled.jvp.all()


def test_a_wrong_forward_mode_rule_fails_though_the_reverse_mode_is_right():
    check = check_graph(TANH, TanhForwardOff())
    (problem,) = check.problems
    assert problem.what is What.JVP and problem.check == FORWARD_MODE
    t = math.tanh(0.7)
    assert problem.exact == pytest.approx((1 - t * t) * problem.direction[0])
    assert problem.engine == pytest.approx((1 - t) * problem.direction[0])
    assert str(problem).startswith("point 0 (x0=0.7): forward mode: J·v entry 0: engine")
    assert classify_check(check, TanhForwardOff()).kind is Kind.WRONG_FORWARD_MODE


def test_the_same_engine_checked_in_reverse_mode_alone_passes_unnoticed():
    assert check_graph(TANH, TanhForwardOffReverseOnly()).passed


def test_without_an_exact_value_the_two_modes_are_held_to_the_transpose_identity(monkeypatch):
    monkeypatch.setattr(modes, "_exact_and_radius", lambda *args: None)
    check = check_graph(TANH, TanhForwardOff())
    (problem,) = check.problems
    assert problem.what is What.MODES
    assert classify_check(check, TanhForwardOff()).kind is Kind.WRONG_FORWARD_MODE
    assert np.isnan(modes.exact_jvp(TANH, [0.7], [1.0], [1.0])).tolist() == [True]
    assert str(problem).startswith("point 0 (x0=0.7): forward and reverse mode disagree: u·(J v)")
    assert check_graph(TANH, TorchAdapter()).passed


def test_modes_that_agree_spend_no_exact_evaluation(monkeypatch):
    calls = []
    monkeypatch.setattr(modes, "_exact_and_radius", lambda *args: calls.append(args))
    assert check_graph(TANH, TorchAdapter()).passed and calls == []
    check_graph(TANH, TanhForwardOff())
    assert len(calls) == 1, "the modes disagree: the exact value judges"


class ForwardModeRaises(TorchAdapter):
    name = "forward-mode-raises"

    def run_jvp(self, graph, values, direction):
        raise RuntimeError("no dual numbers today")


class ForwardModeMissingForTheGraph(TorchAdapter):
    name = "forward-mode-missing"

    def run_jvp(self, graph, values, direction):
        raise NotImplementedError("tanh has no forward-mode rule")


def test_forward_mode_raising_is_a_finding_and_a_missing_rule_skips_the_check():
    (problem,) = check_graph(TANH, ForwardModeRaises()).problems
    assert problem.what is What.RAISED and problem.check == FORWARD_MODE
    assert "forward mode: adapter raised RuntimeError: no dual numbers today" in str(problem)
    assert check_graph(TANH, ForwardModeMissingForTheGraph()).passed


@pytest.mark.parametrize(
    ("engine", "tensor"),
    [("torch", False), ("torch", True), ("autograd", False), ("autograd-tensor", True), ("jax", False)],
)
def test_correct_forward_modes_pass_on_random_graphs(engine, tensor):
    if engine.startswith(("autograd", "jax")):
        pytest.importorskip(engine.split("-")[0])
    adapter = load_engine(engine)
    assert adapter.forward_mode
    ops = sorted(adapter.ops - AUTOGRAD_FORWARD_MODE_RAISES) if tensor else None
    rng = np.random.default_rng(7)
    for seed in range(12):
        graph = random_graph(rng, ops=ops, tensor=tensor, points=2)
        check = check_graph(graph, adapter, seed=seed)
        assert not [p for p in check.problems if p.check == FORWARD_MODE], [str(p) for p in check.problems]


def test_hips_autograds_forward_mode_of_a_max_over_negative_dims_is_found_as_it_raises():
    """HIPS autograd 1.9.1's forward mode of np.max over a tuple of negative axes raises AxisError
    (its reverse mode is right): the check says so, and agrees with autograd's own call."""
    pytest.importorskip("autograd")
    raises = _autograds_max_jvp_raises()
    x = np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]])
    graph = Graph([Input("x0", x, (2, 3))], [OpNode("amax", (0,), (("dims", (-2, -1)),))], [1])
    problems = [
        p for p in check_graph(graph, load_engine("autograd-tensor")).problems if p.check == FORWARD_MODE
    ]
    assert [p.raised.type for p in problems if p.raised] == ([raises] if raises else [])


def test_a_forward_mode_that_raises_is_titled_so():
    pytest.importorskip("autograd")
    if _autograds_max_jvp_raises() is None:
        pytest.skip("this HIPS autograd's forward mode of a max over negative dims does not raise")
    settings = Settings(engine="autograd-tensor", tensor=True, ops=("amax",), graphs=6, structure=False)
    titles = [f.title for f in run_campaign(settings, real_backend()).failing_findings]
    assert "amax over a tuple of dims — engine raised AxisError (forward mode)" in titles, titles


def test_a_campaign_names_the_forward_mode_bug_once_on_its_op():
    settings = Settings(
        engine="gradcheck.testing.mode_engines:TanhForwardOff",
        graphs=30,
        seed=2,
        tensor=True,
        ops=("add", "mul", "tanh", "sin"),
        structure=False,
    )
    result = run_campaign(settings, real_backend())
    assert [f.title for f in result.failing_findings] == ["tanh — wrong forward-mode derivative"]
    (finding,) = result.failing_findings
    assert finding.ops == ("tanh",) and "engine.run_jvp(graph, values, ones)" in finding.snippet


def test_a_forward_mode_findings_repro_shows_the_engines_j_v_beside_the_exact_one(capsys):
    code = forward_mode_snippet(TANH, "gradcheck.testing.mode_engines:TanhForwardOff")
    exec(compile(code, "repro", "exec"), {})
    t = math.tanh(0.7)
    lines = capsys.readouterr().out.splitlines()
    engine, exact = (float(line.split("[")[1].rstrip("]")) for line in lines[:2])
    assert engine == pytest.approx(1 - t, rel=1e-15) and exact == pytest.approx(1 - t * t, rel=1e-15)
    assert lines[2].startswith("forward mode: J·v entry 0: engine")


def test_the_command_line_says_under_its_header_that_forward_mode_is_checked(tmp_path, capsys):
    from gradcheck.cli import main

    common = [
        "run",
        "--tensor",
        "--graphs",
        "2",
        "--ops",
        "tanh",
        "--no-save",
        "--no-structure",
        "--no-edges",
    ]
    said = "Forward mode: checked too (each graph's J·v against the exact values)."
    for engine, shown in (("TanhForwardOff", True), ("TanhForwardOffReverseOnly", False)):
        main(
            [*common, "--engine", f"gradcheck.testing.mode_engines:{engine}", "--out", str(tmp_path / engine)]
        )
        assert (said in capsys.readouterr().out) is shown


def _autograds_max_jvp_raises() -> str | None:
    """The exception HIPS autograd's own forward mode of a max over dims (-2, -1) raises, if any."""
    import autograd.numpy as anp
    from autograd import make_jvp

    x = np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]])
    try:
        make_jvp(lambda y: anp.max(y, axis=(-2, -1)))(x)(np.ones_like(x))
    except Exception as e:
        return type(e).__name__
    return None
