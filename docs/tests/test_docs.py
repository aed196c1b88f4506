"""README.md and docs/*.md are true as written: every ```python block runs; figures name their benchmark."""

from __future__ import annotations

import ast
import math
import re

import pytest
from docs_markdown import DOCUMENTS, MEASURED, ROOT, blocks, paragraphs

PYTHON_BLOCKS = [(path, line, source) for path in DOCUMENTS for line, source in blocks(path, "python")]


def test_the_readme_has_python_blocks_to_run():
    assert sum(path.name == "README.md" for path, _, _ in PYTHON_BLOCKS) >= 3


@pytest.mark.parametrize(
    ("path", "line", "source"), PYTHON_BLOCKS, ids=[f"{p.name}:{n}" for p, n, _ in PYTHON_BLOCKS]
)
def test_every_python_block_runs_as_written_and_prints_what_its_comments_say(
    path, line, source, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    code = compile(source, f"{path.relative_to(ROOT)}:{line}", "exec")
    exec(code, {"__name__": "__main__"})
    printed = capsys.readouterr().out.splitlines()
    promised = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)  # ([^;\n]+)", source, re.MULTILINE)]
    assert len(printed) >= len(promised)
    for text in promised:
        assert any(text == out.strip() for out in printed), f"no printed line {text!r} in {printed}"


def test_the_quickstarts_second_derivative_is_within_one_ulp_of_torchs_as_the_readme_says():
    torch = pytest.importorskip("torch")
    from minigrad import Value, grad

    t = Value(0.5)
    (dt,) = grad(t.tanh(), t, create_graph=True)
    (d2t,) = grad(dt, t)
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    (dx,) = torch.autograd.grad(torch.tanh(x), x, create_graph=True)
    (d2x,) = torch.autograd.grad(dx, x)
    assert isinstance(dt, Value) and isinstance(d2t, float)
    assert isinstance(grad(t.tanh(), t)[0], float)
    # torch's float64 tanh kernel varies with the CPU (...873 on some machines, ...874 on others)
    assert abs(d2t - d2x.item()) <= math.ulp(d2t)
    assert "torch agrees to within 1 ulp" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_stated_figure_names_the_benchmark_that_prints_it(path):
    for paragraph in paragraphs(path):
        if not MEASURED.search(paragraph):
            continue
        named = re.findall(r"benchmarks/((?:bench|test)_\w+\.py)|`((?:bench|test)_\w+\.py)`", paragraph)
        assert named, f"{path.name}: a figure without the benchmark that prints it:\n{paragraph}"
        for pair in named:
            assert (ROOT / "benchmarks" / (pair[0] or pair[1])).is_file(), pair


def test_the_readmes_cpu_torch_command_pins_the_version_pyproject_pins():
    torch_pins = set(re.findall(r'"(torch==[\d.]+)"', (ROOT / "pyproject.toml").read_text()))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cpu_installs = re.findall(
        r"pip install (torch==[\d.]+) --index-url https://download\.pytorch\.org/whl/cpu", readme
    )
    assert cpu_installs and set(cpu_installs) == torch_pins


def test_the_readme_says_how_snippets_run_and_how_to_install_minigrad_elsewhere():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/python" in readme
    assert re.search(r"pip install (-e )?['\"]?(/path/to/minigrad|\.)(\[\w+\])?", readme)


SCRIPTS = [p for p in sorted((ROOT / "benchmarks").glob("*.py")) if '__name__ == "__main__"' in p.read_text()]
# started by another benchmark, never run by hand
HELPERS = {"parity_goal_rows.py"}


@pytest.mark.parametrize("script", [p for p in SCRIPTS if p.name not in HELPERS], ids=lambda p: p.name)
def test_every_benchmark_script_says_why_it_is_not_a_pytest_benchmark(script):
    """A timing the `benchmark` fixture can take is a pytest-benchmark benchmark (benchmarks/test_*.py);
    a script says in its docstring what the fixture cannot measure there."""
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    assert "Not a pytest-benchmark benchmark: " in doc, script.name
