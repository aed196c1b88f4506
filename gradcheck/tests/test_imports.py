"""`import gradcheck` is cheap: torch is imported when a check needs it, not to check a function
numerically (a fresh interpreter per test, since this one has torch loaded already)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gradcheck


def _fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_gradcheck_and_its_plugin_does_not_import_torch():
    run = _fresh("import sys, gradcheck, gradcheck.suite.plugin\nprint('torch' in sys.modules)")
    assert run.stdout.strip() == "False", run.stderr


def test_checking_a_minigrad_function_numerically_needs_no_torch():
    code = """
import sys
import numpy as np
from gradcheck import gradcheck, gradgradcheck
from minigrad import Tensor, Value
assert gradcheck(lambda a, b: (a * b).tanh() + a.log(), [Value(0.7), Value(1.3)])
assert gradgradcheck(lambda a: a.sigmoid(), [Value(0.2)])
assert gradcheck(lambda t: (t * t).sum(), [Tensor(np.ones((2, 3)), requires_grad=True)])
print('torch' in sys.modules)
"""
    run = _fresh(code)
    assert run.stdout.strip() == "False", run.stderr


def test_the_parity_check_is_there_on_first_use():
    from gradcheck.parity.compare import check_graph
    from gradcheck.parity.result import GraphCheck

    assert gradcheck.check_graph is check_graph and gradcheck.GraphCheck is GraphCheck
    with pytest.raises(AttributeError, match="no attribute 'check_grpah'"):
        gradcheck.check_grpah  # noqa: B018


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["--help"], 0),
        (["run", "--help"], 0),
        (["gate", "--help"], 0),
        (["replay", "--help"], 0),
        (["corpus", "add", "--help"], 0),
        (["run", "--graphs", "0"], 2),
        (["gate", "--engine", "minigrad"], 2),
    ],
)
def test_the_command_lines_help_and_argument_errors_import_neither_torch_nor_numpy(argv, status):
    command = [sys.executable, "-X", "importtime", "-m", "gradcheck", *argv]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == status, run.stderr[-2000:]
    timed = [line for line in run.stderr.splitlines() if line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[1].strip() for line in timed}
    assert "gradcheck.cli.parser" in imported, "the parser was built in this process"
    heavy = sorted(m for m in imported if m.split(".")[0] in {"torch", "numpy", "mpmath", "rich"})
    assert not heavy, f"gradcheck {' '.join(argv)} imported {heavy[:5]}"


@pytest.mark.slow
@pytest.mark.supervised
def test_the_command_that_writes_the_reports_leaves_torch_to_its_workers(tmp_path):
    # a failing campaign with every phase: shrinking, blame, settling and the reports. torch's own
    # code (torch._C) runs only in the workers, so the command pays its start-up once, not twice
    code = f"""
import sys
from gradcheck.cli import main
status = main(["run", "--engine", "gradcheck.testing.tutorial_engines:TanhOneMinusT", "--graphs", "30",
               "--out", {str(tmp_path)!r}, "--no-save"])
print(status, "torch._C" in sys.modules)
"""
    run = _fresh(code)
    assert run.stdout.strip().splitlines()[-1] == "1 False", run.stdout[-2000:] + run.stderr[-2000:]
    assert (tmp_path / "report.json").exists() and (tmp_path / "report.html").exists()


def test_torch_runs_on_first_use_and_is_set_to_one_thread_then():
    code = """
import sys
from gradcheck.engines.torch_engine import torch
before = "torch._C" in sys.modules
x = torch.tensor([1.0, 2.0], dtype=torch.float64)
print(before, "torch._C" in sys.modules, torch.get_num_threads(), float(x.sum()))
"""
    run = _fresh(code)
    assert run.stdout.strip() == "False True 1 3.0", run.stderr


def test_checking_graphs_against_torch_never_imports_sympy():
    # torch imports sympy (half a second) the first time grad_outputs' shapes are checked or
    # torch.broadcast_shapes runs; the reference needs neither, in every path of a check
    code = """
import sys
import numpy as np
from gradcheck.engines import load_engine
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.compare import check_graph
from gradcheck.parity.edge_check import check_edge, edge_cases
rng = np.random.default_rng(0)
wrong = load_engine("gradcheck.testing.tutorial_engines:TanhOneMinusT")
engines = ((load_engine("minigrad"), False), (wrong, False), (load_engine("minigrad-tensor"), True))
for adapter, tensor in engines:
    for _ in range(12):
        check_graph(random_graph(rng, ops=sorted(adapter.ops), tensor=tensor, points=2), adapter)
for graph in edge_cases(["tanh", "mul"])[:8]:
    check_edge(wrong, graph)
print("sympy" in sys.modules)
"""
    run = _fresh(code)
    assert run.stdout.strip() == "False", run.stderr[-2000:]
