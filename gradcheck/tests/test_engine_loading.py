"""An engine's name becomes an adapter once, at a front end; everything inside takes the adapter.

The front ends: the CLI, the pytest plugin, the library's functions of any callable (`gradcheck()`,
`gradgradcheck()`, the numerical and accurate derivatives, the kink probe), and, for a campaign,
`campaign/validation.py` (a campaign's settings name their engine), called once per process
(`pool.EngineState`) or by a script outside any campaign (`checking.campaign_checker`). Anywhere
else a call to a loader, or a parameter typed `str | EngineAdapter`, would load an engine that may
already be loaded; these tests find both by reading every library module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOADERS = frozenset({"load_engine", "load_adapter", "campaign_adapter"})
# module -> the functions in it that may turn a name into an adapter ("*": all of the module's)
FRONT_ENDS: dict[str, frozenset[str]] = {
    "gradcheck/checker/check.py": frozenset({"gradcheck", "gradgradcheck"}),
    "gradcheck/checker/numerical.py": frozenset({"numerical_jacobian", "numerical_vjp", "numerical_jvp"}),
    "gradcheck/checker/oracle.py": frozenset({"accurate_vjp", "accurate_gradient"}),
    "gradcheck/checker/kinks.py": frozenset({"is_differentiable_at"}),
    "gradcheck/engines/loading.py": frozenset({"load_engine"}),
    "gradcheck/campaign/validation.py": frozenset({"load_adapter", "campaign_adapter", "validate"}),
    "gradcheck/campaign/pool.py": frozenset({"EngineState.__init__"}),
    "gradcheck/campaign/checking.py": frozenset({"campaign_checker"}),
    "gradcheck/suite/plugin.py": frozenset({"*"}),
}


def _library_modules() -> list[Path]:
    found = sorted((ROOT / "gradcheck").rglob("*.py"))
    inside = lambda p: not {"tests", "testing", "cli"} & set(p.relative_to(ROOT / "gradcheck").parts)
    return [p for p in found if inside(p)]


def loading_places(source: str) -> list[tuple[str, str]]:
    """(function, what) for each call to a loader and each parameter typed `str | EngineAdapter`,
    by the qualified name of the function it is in ("<module>" outside any)."""
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if where == "<module>" else f"{where}.{child.name}"
                if not isinstance(child, ast.ClassDef):
                    arguments = child.args
                    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                        typed = ast.unparse(arg.annotation) if arg.annotation else ""
                        if {"str", "EngineAdapter"} <= {t.strip() for t in typed.split("|")}:
                            found.append((inner, f"parameter {arg.arg}: {typed}"))
                visit(child, inner)
                continue
            if isinstance(child, ast.Call):
                called = child.func
                name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)
                if name in LOADERS:
                    found.append((where, f"calls {name}"))
            visit(child, where)

    visit(ast.parse(source), "<module>")
    return found


def test_the_reader_finds_loader_calls_and_name_or_adapter_parameters():
    source = (
        "def check(graph, engine: str | EngineAdapter = 'minigrad'):\n"
        "    adapter = load_engine(engine)\n"
        "class Shrinker:\n"
        "    def __init__(self, settings):\n"
        "        self.adapter = validation.campaign_adapter(settings)\n"
        "def given(adapter: EngineAdapter):\n"
        "    return adapter\n"
    )
    assert loading_places(source) == [
        ("check", "parameter engine: str | EngineAdapter"),
        ("check", "calls load_engine"),
        ("Shrinker.__init__", "calls campaign_adapter"),
    ]


@pytest.mark.parametrize("path", _library_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_only_a_front_end_turns_an_engine_name_into_an_adapter(path):
    allowed = FRONT_ENDS.get(path.relative_to(ROOT).as_posix(), frozenset())
    places = [(where, what) for where, what in loading_places(path.read_text()) if where not in allowed]
    assert "*" in allowed or places == [], (
        f"{places}: take the EngineAdapter the front end loaded (docs/architecture.md, 'Engines')"
    )


def test_a_name_given_where_an_adapter_is_taken_is_refused_by_name():
    from gradcheck.engines.loading import load_engine
    from gradcheck.graphs.ir import Graph, Input
    from gradcheck.parity.compare import check_graph, check_kinks

    refused = r"check_graph: engine must be an EngineAdapter, got the name 'minigrad'"
    with pytest.raises(TypeError, match=refused):
        check_graph(Graph([Input("x0", 0.5)], [], [0]), "minigrad")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"gradcheck.load_engine\('micrograd'\)"):
        check_kinks("micrograd")  # type: ignore[arg-type]
    assert check_kinks(load_engine("minigrad"))
