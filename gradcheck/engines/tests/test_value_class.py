"""Engines without an adapter: a micrograd-style value class is inspected, its adapter built, and
it is checked with nothing written, with the same findings as its hand-written adapter."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcheck import GradcheckError, gradcheck
from gradcheck.campaign import Settings, real_backend, run_campaign
from gradcheck.campaign.edge_phase import edge_findings
from gradcheck.cli import main
from gradcheck.engines import load_engine
from gradcheck.engines.loading import canonical_spec, import_root
from gradcheck.engines.micrograd import MicrogradAdapter
from gradcheck.engines.value_class import (
    METHOD_OPS,
    OPERATOR_METHODS,
    Spelling,
    ValueClassAdapter,
    adapter_source,
)
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS
from gradcheck.launcher import launcher
from gradcheck.parity.compare import check_graph

DATA = Path(__file__).parent / "data"
PLAIN = f"{DATA / 'plain_engine.py'}:Value"
QUIRKY = f"{DATA / 'quirky_engine.py'}:Scalar"
# engine without an adapter -> its hand-written adapter
HANDWRITTEN = {
    "micrograd.engine:Value": "micrograd",
    PLAIN: f"{DATA / 'adapters.py'}:PlainAdapter",
    QUIRKY: f"{DATA / 'adapters.py'}:QuirkyAdapter",
}


def test_pypi_micrograd_is_found_to_have_the_ops_of_its_handwritten_adapter():
    adapter = load_engine("micrograd.engine:Value")
    assert isinstance(adapter, ValueClassAdapter)
    assert adapter.ops == MicrogradAdapter.ops
    assert adapter.left_out["pow"] == "x ** y raised AssertionError: only supporting int/float powers for now"
    assert adapter.left_out["tanh"] == "no method tanh()"
    assert adapter.children == "_prev"


@pytest.mark.parametrize("engine", [PLAIN, QUIRKY])
def test_a_one_file_engine_is_found_to_have_the_ops_of_its_handwritten_adapter(engine):
    assert load_engine(engine).ops == load_engine(HANDWRITTEN[engine]).ops


def test_a_number_the_class_refuses_on_the_left_is_passed_as_a_value_and_said_so():
    adapter = load_engine(QUIRKY)
    assert adapter.spellings["div"].as_value == (0,)
    assert adapter.spellings["add"].as_value == ()
    assert "__rtruediv__ missing: 2.0 / x not checked; the constant is passed as Scalar(2.0)" in adapter.notes
    assert adapter.left_out["pow"] == "x ** y raised TypeError: exponent must be a number, not Scalar"
    div = Graph([Input("x0", 0.5)], [OpNode("div", (0,), (), (Constant(0, 2.0),))], [1])
    assert check_graph(div, adapter).passed


class Wrong:
    """A value class whose ops exist but are wrong: tanh gives the wrong number, exp always raises
    ValueError, sin returns a plain float (no gradient), cos needs an argument."""

    def __init__(self, data, children=()):
        self.data, self.grad, self.children = data, 0.0, children

    def __add__(self, other):
        return Wrong(self.data + other.data, (self, other))

    def __mul__(self, other):
        return Wrong(self.data * other.data, (self, other))

    def tanh(self):
        return Wrong(2.0 * math.tanh(self.data), (self,))

    def exp(self):
        raise ValueError("exp is broken")

    def sin(self):
        return math.sin(self.data)

    def cos(self, precision):
        return Wrong(math.cos(self.data), (self,))

    def backward(self):
        self.grad = 1.0


def test_an_op_that_exists_but_is_wrong_is_kept_so_that_it_is_checked():
    adapter = ValueClassAdapter(Wrong, "test:Wrong")
    assert {"tanh", "exp"} <= adapter.ops
    assert "exp: x.exp() raised ValueError at 0.7; kept, to be checked" in adapter.notes
    assert (
        adapter.left_out["sin"]
        == "x.sin() returned a float, not a value with backward(): no gradient to check"
    )
    assert adapter.left_out["cos"].startswith("x.cos() raised TypeError")
    tanh = Graph([Input("x0", 0.5)], [OpNode("tanh", (0,))], [1])
    assert not check_graph(tanh, adapter).passed


def test_a_class_that_is_no_value_class_is_refused_with_the_reason():
    with pytest.raises(
        ValueError,
        match=r"value class \(its values keep 0.7 in none of the attributes data, value, val\)",
    ):
        load_engine("fractions:Fraction")


class Kept:
    """A value class that keeps its number in `val` and has no `__sub__` (as fauxgrad); its
    backward goes one op deep, enough for these tests."""

    def __init__(self, val, parents=()):
        self.val, self.grad, self.parents = float(val), 0.0, parents
        self.local = lambda g: ()

    def __add__(self, other):
        out = Kept(self.val + other.val, (self, other))
        out.local = lambda g: (g, g)
        return out

    def __mul__(self, other):
        out = Kept(self.val * other.val, (self, other))
        out.local = lambda g: (g * other.val, g * self.val)
        return out

    def backward(self):
        self.grad = 1.0
        for parent, g in zip(self.parents, self.local(self.grad)):
            parent.grad += g


def test_a_class_keeping_its_number_in_val_is_read_there_and_missing_operators_are_named():
    adapter = ValueClassAdapter(Kept, "test:Kept")
    assert adapter.data == "val" and adapter.value(adapter.leaf(1.5)) == 1.5
    assert adapter.left_out["sub"] == "__sub__ missing: x - y not checked"
    assert adapter.left_out["neg"] == "__neg__ missing: -x not checked"
    assert "engine_outputs = numbers([v1.val])" in adapter.snippet(
        Graph([Input("x0", 0.5)], [OpNode("mul", (0, 0))], [1])
    )


def _findings(engine: str, phase: str | None = None) -> set[tuple]:
    settings = Settings(engine=engine, graphs=60, seed=3)
    result = run_campaign(settings, real_backend())
    ops = sorted(load_engine(engine).ops)
    found = [*result.findings, *edge_findings(load_engine(engine), ops)]
    found = [f for f in found if (f.phase == "inspection") == (phase == "inspection")]
    return {
        (f.kind, f.ops, f.check, f.where, f.graphs, f.graph_indices, _depthless(f.problems)) for f in found
    }


def _depthless(problems: tuple) -> tuple[str, ...]:
    """The problems with a recursion limit's depth left out: it moves with the frames of the
    engine's backward, and the `micrograd` adapter hashes micrograd's nodes in Python (so that
    its sets, and the report's last bits, are the same in every run), a frame more wherever
    micrograd's topological sort looks a node up in a set, for every adapter after it."""
    texts = map(str, problems)
    return tuple(re.sub(r"\d+", "N", p) if "recursion limit" in p else p for p in texts)


@pytest.mark.parametrize("engine", list(HANDWRITTEN))
def test_checked_without_an_adapter_the_findings_are_those_of_the_handwritten_adapter(engine):
    # besides what inspecting the class itself shows (a number it refuses: see the next test)
    findings = _findings(engine)
    assert findings, "each of these engines has real differences from torch"
    assert findings == _findings(HANDWRITTEN[engine])


def test_the_printed_adapter_imports_and_checks_like_the_inspected_one(tmp_path):
    inspected = load_engine(QUIRKY)
    path = tmp_path / "quirky_adapter.py"
    path.write_text(adapter_source(inspected, "ScalarAdapter"), encoding="utf-8")
    printed = load_engine(f"{path}:ScalarAdapter")
    assert not isinstance(printed, ValueClassAdapter) and printed.ops == inspected.ops
    for seed in range(20):
        graph = random_graph(np.random.default_rng(seed), ops=sorted(inspected.ops), points=2)
        assert list(map(str, check_graph(graph, printed).problems)) == list(
            map(str, check_graph(graph, inspected).problems)
        )


def test_print_adapter_on_the_command_line_writes_the_file_and_refuses_an_adapter(tmp_path, capsys):
    path = tmp_path / "micro.py"
    assert main(["run", "--engine", "micrograd.engine:Value", "--print-adapter", str(path)]) == 0
    out = capsys.readouterr().out
    assert "left out pow: x ** y raised AssertionError" in out and "wrote" in out
    assert load_engine(f"{path}:ValueAdapter").ops == MicrogradAdapter.ops
    assert main(["run", "--engine", "micrograd", "--print-adapter", str(path)]) == 2
    assert "is an adapter already" in capsys.readouterr().err


def test_a_file_loads_from_its_path_even_beside_a_package_of_the_same_name(tmp_path, monkeypatch):
    (tmp_path / "eng.py").write_text((DATA / "plain_engine.py").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "eng").mkdir()  # e.g. a campaign's --out folder; a package would win an import
    (tmp_path / "eng" / "__init__.py").write_text("Value = None\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    adapter = load_engine("eng.py:Value")
    assert "tanh" in adapter.ops
    assert adapter.spec == f"{tmp_path.resolve() / 'eng.py'}:Value" == canonical_spec("eng.py:Value")


def _import_by_path(path: Path, module_name: str, monkeypatch) -> object:
    """`path` imported as the learner would (importlib, under their own module name)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, module_name, module)
    spec.loader.exec_module(module)
    return module


def test_a_path_spec_reuses_the_module_imported_from_that_file_so_its_values_are_accepted(
    tmp_path, monkeypatch
):
    path = tmp_path / "lesson.py"
    path.write_text((DATA / "plain_engine.py").read_text(encoding="utf-8"), encoding="utf-8")
    lesson = _import_by_path(path, "lesson", monkeypatch)
    monkeypatch.chdir(tmp_path)
    for spec in (f"{path}:Value", "lesson.py:Value"):
        assert load_engine(spec).value_class is lesson.Value
        assert gradcheck(lambda a, b: (a * b).tanh() / b, [lesson.Value(0.7), lesson.Value(1.3)], engine=spec)


def test_values_of_another_copy_of_the_engines_class_are_refused_naming_both_copies(tmp_path, monkeypatch):
    path = tmp_path / "lesson.py"
    path.write_text((DATA / "plain_engine.py").read_text(encoding="utf-8"), encoding="utf-8")
    lesson = _import_by_path(path, "lesson_copied", monkeypatch)
    stale = lesson.Value(0.7)  # made before the module was loaded again: a class the engine no longer has
    lesson.__spec__.loader.exec_module(lesson)  # run again, as importlib.reload does
    with pytest.raises(TypeError) as raised:
        gradcheck(lambda a: a.tanh(), [stale], engine=f"{path}:Value")
    where = f"lesson_copied ({path})"
    assert str(raised.value).startswith(
        f"gradcheck: input 0 is a Value from {where}; expected a Value of {where} "
        "(the engine spec loaded another copy of the class)"
    )
    other = tmp_path / "other" / "lesson.py"
    other.parent.mkdir()
    other.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    elsewhere = r"of gradcheck_engine_file_\w+ \(.*other.lesson\.py\) \(another class of the same name\)"
    with pytest.raises(TypeError, match=elsewhere):
        gradcheck(lambda a: a.tanh(), [lesson.Value(0.7)], engine=f"{other}:Value")


def test_a_module_outside_the_installed_packages_names_its_folder_for_replay(tmp_path, monkeypatch):
    assert import_root("micrograd.engine:Value") is None  # installed: imports anywhere
    assert import_root(PLAIN) is None  # a file: loaded by its path
    assert import_root("gradcheck.engines.micrograd:MicrogradAdapter") is None  # beside gradcheck
    (tmp_path / "my_engine.py").write_text(
        (DATA / "plain_engine.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert isinstance(load_engine("my_engine:Value"), ValueClassAdapter)
    assert import_root("my_engine:Value") == str(tmp_path.resolve())


def _run_script(code: str) -> str:
    root = Path(__file__).parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root, check=True
    )
    return done.stdout


SQUARE_OF_INVERSE = Graph(
    [Input("x0", 0.5)],
    [OpNode("div", (0,), (), (Constant(0, 2.0),)), OpNode("pow_const", (1,), (("exponent", 2.0),))],
    [2],
)


def test_the_inspected_engines_repro_is_in_its_own_spelling_beside_torch():
    code = load_engine(QUIRKY).snippet(SQUARE_OF_INVERSE)
    assert "v1 = Scalar(2.0) / x0" in code and "v2 = v1 ** 2.0" in code
    out = _run_script(code)
    assert "engine outputs: [16.0]" in out and "engine grads:   [-64.0]" in out
    assert "torch outputs:  [16.0]" in out and "verdict: ok" in out


def test_an_adapter_without_a_snippet_gets_a_repro_through_its_spec():
    code = load_engine(HANDWRITTEN[QUIRKY]).snippet(SQUARE_OF_INVERSE)
    assert "v1 = engine.apply('div', [2.0, x0], {})" in code
    out = _run_script(code)
    assert "engine outputs: [16.0]" in out and "torch grads:" in out


def test_gradcheck_checks_a_function_of_the_class_values_and_leaves_their_grads_alone():
    engine = load_engine(QUIRKY)
    x, y = engine.leaf(0.3), engine.leaf(0.8)
    x.grad = 5.0
    assert gradcheck(lambda a, b: (a * b - a).sigmoid() / b, [x, y], engine=QUIRKY)
    assert x.grad == 5.0 and y.grad == 0.0


def test_a_gradcheck_failure_names_the_engine_as_it_was_loaded():
    engine = load_engine(PLAIN)
    with pytest.raises(GradcheckError, match=f"engine='{PLAIN}'"):  # a.data is a constant to the engine
        gradcheck(lambda a: a * a.data, [engine.leaf(0.5)], engine=PLAIN)


def test_a_folder_named_like_an_unimportable_module_is_named_as_the_cause(tmp_path, monkeypatch):
    (tmp_path / "lost_engine").mkdir()  # `--out lost_engine`, while lost_engine.py is not on sys.path
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        ValueError, match=r"'lost_engine' imported as the folder .*lost_engine .*put the module's"
    ):
        load_engine("lost_engine:Value")


def test_run_prints_the_inspection_and_its_repros_load_the_engine_from_anywhere(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(DATA)
    out = tmp_path / "quirky_engine"  # named like the engine's module: it must not stand in for it
    assert main(["run", "--engine", "quirky_engine.py:Scalar", "--graphs", "10", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert (
        "adapter built by inspecting Scalar" in printed and "left out pow: x ** y raised TypeError" in printed
    )
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["settings"]["engine"] == QUIRKY
    assert report["findings"][0]["repro"].startswith(
        shlex.join([*launcher(), "replay", str(out / "report.json"), "--engine", QUIRKY])
    )
    snippet = report["findings"][0]["snippet"]
    assert "from quirky_engine import Scalar" in snippet
    assert snippet.count("import sys\n") == 1, "the engine's part imports sys once"


def test_the_parity_suite_checks_a_value_class_named_as_its_engine():
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "gradcheck.suite"]
    command += ["--gradcheck-engine", QUIRKY, "-k", "kink", "-v"]
    run = subprocess.run(command, cwd=Path(__file__).parents[3], capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "test_kink_conventions_match_torch[pow_const(0.0, exponent=0.0)] FAILED" in run.stdout
    assert "ZeroDivisionError" in run.stdout


def test_a_function_style_adapters_repro_runs_the_graph_through_it_beside_torch():
    pytest.importorskip("autograd")
    code = load_engine("autograd").snippet(SQUARE_OF_INVERSE)
    assert "engine = load_engine('autograd')" in code and "engine.run(graph, values, cotangent)" in code
    out = _run_script(code)
    assert "torch grads:    [-64.0]" in out and "engine grads:   [-64.0]" in out and "verdict: ok" in out
    second = _run_script(load_engine("autograd").snippet(SQUARE_OF_INVERSE, second_order=True))
    assert "torch hvp:      [384.0]" in second and "engine hvp:     [384.0]" in second


def test_every_scalar_op_of_the_registry_is_tried_in_the_registrys_spelling():
    """The methods tried are read from the registry's templates: an op the reading dropped would
    be left out of every class inspected, minigrad's Value (which has them all) included."""
    assert set(METHOD_OPS) | set(OPERATOR_METHODS) == set(SCALAR_OPS)
    assert {op: Spelling(op, "method", name).template() for op, name in METHOD_OPS.items()} == {
        op: REGISTRY[op].template for op in METHOD_OPS
    }
    adapter = load_engine("minigrad:Value")
    assert adapter.ops == set(SCALAR_OPS) and adapter.left_out == {}
