"""minigrad's modules import one another without a circle: read from the source with ast, counting
imports under TYPE_CHECKING and inside functions too (a type checker follows them all)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = ["minigrad", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py")) if "tests" not in path.parts}


def imported_modules(path: Path) -> set[str]:
    """The modules of minigrad that `path` names in any import statement (`from minigrad import x`
    names the submodule x where there is one, else the package)."""
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                named.add(submodule if submodule in MODULES else node.module)
    return {name for name in named if name in MODULES} - {_module_name(path)}


GRAPH = {name: imported_modules(path) for name, path in MODULES.items()}


def _reaches(start: str, goal: str) -> list[str] | None:
    """A chain of imports from `start` to `goal`, or None."""
    seen, stack = {start}, [[start]]
    while stack:
        chain = stack.pop()
        for nxt in sorted(GRAPH[chain[-1]]):
            if nxt == goal:
                return [*chain, nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append([*chain, nxt])
    return None


def test_the_graph_is_read_from_every_module_of_minigrad():
    assert {"minigrad.tensor", "minigrad.tensor_autograd", "minigrad.nn.linear"} <= set(GRAPH)
    assert "minigrad.tensor_autograd" in GRAPH["minigrad.tensor"], "imports are found"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_one_that_imports_it_back(module):
    for imported in sorted(GRAPH[module]):
        back = _reaches(imported, module)
        assert back is None, f"{module} imports {imported}, which imports it back: {' -> '.join(back)}"


TENSOR_BASES = ["autograd", "elementwise_methods", "reduction_methods", "shape_methods"]


@pytest.mark.parametrize("mixin", TENSOR_BASES)
def test_the_bases_of_tensor_do_not_import_the_tensor_module(mixin):
    assert "minigrad.tensor" not in GRAPH[f"minigrad.tensor_{mixin}"]
