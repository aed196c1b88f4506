"""A repro prints the engine's and torch's numbers at full precision and ends with a verdict: exit
status 1 while the engine differs from torch (an exception included), 0 once it agrees, for
every adapter style (`gradcheck.engines.snippets`)."""

import subprocess
import sys
from pathlib import Path

import pytest

from gradcheck.engines import load_engine
from gradcheck.engines.snippets import REPRO_ATOL, REPRO_RTOL
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.errors import TORCH_TOLERANCE

ROOT = Path(__file__).parents[3]
TRIAGE = "gradcheck.testing.triage_engines"


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def one_op(op: str, x: float, consts=(), **attrs) -> Graph:
    node = OpNode(op, (0,), tuple(sorted(attrs.items())), consts)
    return Graph([Input("x0", x)], [node], [1], cotangent=[1.5])


def test_a_tanh_slope_written_1_minus_t_shows_both_numbers_in_full_and_exits_1():
    done = run(load_engine(f"{TRIAGE}:TanhOneMinusT").snippet(one_op("tanh", 0.37)))
    assert done.returncode == 1
    # 1.5 * (1 - tanh(0.37) ** 2) against 1.5 * (1 - tanh(0.37)), every digit printed
    assert "torch grads:    [1.3120348012463525]" in done.stdout
    assert "engine grads:   [0.969012431284431]" in done.stdout
    verdict = "verdict: FAIL, the engine differs from torch: gradient of x0: engine 0.969012431284431"
    assert f"{verdict}, torch 1.3120348012463525" in done.stdout


@pytest.mark.parametrize(
    ("engine", "graph", "status"),
    [
        ("gradcheck.testing.structural_engines:Value", one_op("tanh", 0.37), 0),  # a value class
        (f"{TRIAGE}:TanhOneMinusT", one_op("tanh", 0.37), 1),  # the same, with the bug
        ("gradcheck.testing.structural_engines:CorrectAdapter", one_op("tanh", 0.37), 0),  # object-style
        (f"{TRIAGE}:TapeGradientsOnly", one_op("cos", 0.7), 1),  # its cos slope has the wrong sign
        ("gradcheck.testing.kind_engines:ReluTimesTwo", one_op("relu", 0.7), 1),  # minigrad changed
        ("minigrad", one_op("relu", 0.7), 0),  # minigrad in its own spelling
        ("micrograd", one_op("pow_const", 0.5, exponent=2.0), 0),  # micrograd in its own spelling
        ("micrograd", one_op("pow_const", 0.0, exponent=0.0), 1),  # its x ** 0 raises at 0
        ("autograd", one_op("relu", 0.7), 0),  # function-style
        ("autograd", one_op("relu", 0.0), 1),  # np.maximum(x, 0): slope 1/2 at 0, torch 0
    ],
)
def test_a_repro_exits_1_while_the_engine_differs_and_0_once_it_agrees(engine, graph, status):
    if engine == "autograd":
        pytest.importorskip("autograd")
    done = run(load_engine(engine).snippet(graph))
    assert done.returncode == status, done.stdout + done.stderr
    (verdict,) = [line for line in done.stdout.splitlines() if line.startswith("verdict: ")]
    assert verdict.startswith("verdict: ok" if status == 0 else "verdict: FAIL")


def test_an_engine_raising_ends_its_repro_with_a_verdict_and_status_1():
    graph = one_op("div", 1.3, consts=(Constant(0, 2.0),))
    done = run(load_engine(f"{TRIAGE}:NoRtruedivValue").written_snippet(graph))
    assert done.returncode == 1
    assert "verdict: FAIL, the engine raised TypeError where torch computed the numbers above" in done.stdout


def test_a_repro_without_rounding_bounds_judges_gradients_as_classify_does():
    # an edge or structural finding's repro has no per-entry bounds (gradcheck.campaign.blame's
    # with_allowances gives them to differences of numbers): it falls back to the tolerance
    # `classify` tells a gross difference by
    assert (TORCH_TOLERANCE.rtol, TORCH_TOLERANCE.atol) == (REPRO_RTOL, REPRO_ATOL)


def test_a_second_order_repro_runs_where_torchs_gradient_does_not_depend_on_the_inputs():
    # torch's gradient of x ** 0.0 is a constant 0 with no graph: its Hessian-vector product is 0
    done = run(load_engine("minigrad").snippet(one_op("pow_const", 0.0, exponent=0.0), second_order=True))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: ok, the engine agrees with torch" in done.stdout
