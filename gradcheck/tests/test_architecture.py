"""The arrows between the parts (docs/architecture.md), kept by reading every module's imports.

minigrad never imports the harness; the harness uses no private (`_`-prefixed) minigrad name;
benchmarks import no test module; inside gradcheck the layers import only the layers below them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: gradcheck's layers, lowest first: each may import only itself and the layers before it.
LAYERS = ("graphs", "engines", "checker", "parity", "campaign", "suite", "cli")


def _modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "tests" not in p.relative_to(ROOT).parts)


def imported_modules(source: str) -> set[str]:
    """Every module a source file imports (for `from m import a`, both `m` and `m.a`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def private_names_used(source: str, package: str) -> list[str]:
    """Names of `package` starting with `_` that a source file imports or reaches by attribute."""
    tree = ast.parse(source)
    private = lambda dotted: any(p.startswith("_") and not p.startswith("__") for p in dotted.split("."))
    bad = [m for m in imported_modules(source) if m.split(".")[0] == package and private(m)]
    roots = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.split(".")[0] == package
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in roots and private(".".join(parts)):
                bad.append(".".join([inner.id, *reversed(parts)]))
    return bad


def test_the_detectors_see_what_they_forbid():
    source = "import minigrad\nfrom minigrad.autograd import _local_grads\nx = minigrad.autograd._run\n"
    assert sorted(private_names_used(source, "minigrad")) == [
        "minigrad.autograd._local_grads",
        "minigrad.autograd._run",
    ]
    assert private_names_used("from minigrad import Value\nimport minigrad\nminigrad.grad", "minigrad") == []
    assert "parity_tests.catching" in imported_modules("from parity_tests.catching import x")


@pytest.mark.parametrize("path", _modules("minigrad"), ids=lambda p: str(p.relative_to(ROOT)))
def test_minigrad_never_imports_the_harness(path):
    assert not {m for m in imported_modules(path.read_text()) if m.split(".")[0] == "gradcheck"}


@pytest.mark.parametrize("path", _modules("gradcheck"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_harness_uses_no_private_minigrad_name(path):
    assert private_names_used(path.read_text(), "minigrad") == []


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks").glob("*.py")), ids=lambda p: p.name)
def test_benchmarks_import_no_test_module(path):
    assert not {m for m in imported_modules(path.read_text()) if m.split(".")[0] == "parity_tests"}


@pytest.mark.parametrize("path", _modules("gradcheck"), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_layer_imports_only_the_layers_below_it(path):
    parts = path.relative_to(ROOT / "gradcheck").parts
    if len(parts) < 2:
        return  # gradcheck/__init__.py and __main__.py sit above every layer
    allowed = LAYERS[: LAYERS.index(parts[0]) + 1]
    used = {m.split(".")[1] for m in imported_modules(path.read_text()) if m.startswith("gradcheck.")}
    assert used & set(LAYERS) <= set(allowed), f"{parts[0]} imports {sorted(used - set(allowed))}"
