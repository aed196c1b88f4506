"""The arrows between the parts (docs/architecture.md), kept by reading every module's imports.

minigrad never imports the harness; the harness uses no private (`_`-prefixed) minigrad name;
benchmarks import no test module; inside gradcheck the layers import only the layers below them,
and no library module uses the test machinery of `gradcheck.testing`.
"""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: gradcheck's layers, lowest first: each may import only itself and the layers before it. `testing`
#: (engines with planted bugs, catching loops) is test machinery above the library: it may import
#: every layer, and no layer may import it.
LAYERS = ("graphs", "engines", "checker", "parity", "campaign", "suite", "cli", "notebook", "testing")


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


#: a module of the test machinery or an engine in it (`gradcheck.testing.kind_engines:ReluTimesTwo`);
#: tests, parity_tests and benchmarks use them, no library module of gradcheck does
TESTING = re.compile(r"gradcheck\.testing(\.\w+)*(:\w+)?")


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a relative `from` import in `package` names (`..testing` in gradcheck.campaign)."""
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def uses_of_testing(source: str, package: str) -> set[str]:
    """What a source file of `package` takes from `gradcheck.testing`: the modules it imports
    (relative imports resolved) and the engine specs its strings name (`load_engine(spec)`)."""
    named = imported_modules(source)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            module = _absolute(node, package)
            named.update([module, *(f"{module}.{alias.name}" for alias in node.names)])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value)
    return {name for name in named if TESTING.fullmatch(name)}


def test_the_testing_detector_sees_what_it_forbids():
    campaign = "gradcheck.campaign"
    assert uses_of_testing("import gradcheck.testing.catching", campaign) == {"gradcheck.testing.catching"}
    assert "gradcheck.testing" in uses_of_testing("from gradcheck import testing", campaign)
    imported = uses_of_testing("from gradcheck.testing.kind_engines import ReluTimesTwo", campaign)
    assert "gradcheck.testing.kind_engines" in imported
    assert "gradcheck.testing.catching" in uses_of_testing("from ..testing import catching", campaign)
    assert "gradcheck.testing" in uses_of_testing("from .. import testing", campaign)
    spec = "gradcheck.testing.kind_engines:ReluTimesTwo"
    assert uses_of_testing(f"engine = load_engine({spec!r})", campaign) == {spec}
    # another module named testing, and prose that names the package, are not uses of it
    assert uses_of_testing("from . import testing\nx = 'see gradcheck.testing/'", campaign) == set()


@pytest.mark.parametrize(
    "path",
    [p for p in _modules("gradcheck") if p.relative_to(ROOT / "gradcheck").parts[0] != "testing"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_library_module_uses_the_test_machinery(path):
    package = ".".join(path.relative_to(ROOT).parent.parts)
    assert uses_of_testing(path.read_text(), package) == set()


def module_name(path: Path) -> str:
    """The dotted name Python imports `path` by (a package's `__init__.py` is the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(sources: dict[str, str], packages: set[str]) -> dict[str, set[str]]:
    """The modules of `sources` (name -> source; `packages` are the `__init__.py` ones) that each
    imports, at its top or inside a function. `from p import n` reaches module `p.n` when there is
    one (Python imports it without running more of `p/__init__.py`), else `p` itself: a name that
    `__init__.py` defines or re-exports, so a circle through it is seen."""
    graph: dict[str, set[str]] = {}
    for module, source in sources.items():
        reached: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    prefixes = (".".join(parts[:i]) for i in range(len(parts), 0, -1))
                    reached.update(next(([p] for p in prefixes if p in sources), []))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's package, one level up per extra dot
                    package = module if module in packages else module.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        package = package.rpartition(".")[0]
                    base = f"{package}.{base}".rstrip(".")
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    reached.add(target if target in sources else base)
        graph[module] = (reached & sources.keys()) - {module}
    return graph


def import_circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of `graph`: modules each importing the next, the first repeated last; [] if none."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(reversed(error.args[1]))  # graphlib lists each module before its importer
    return []


def test_the_circle_detector_sees_circles_between_modules_and_through_init_files():
    packages = {"pkg"}
    between = {"pkg": "", "pkg.a": "from pkg.b import f", "pkg.b": "def g():\n    from pkg import a"}
    assert import_circle(import_graph(between, packages)) == ["pkg.a", "pkg.b", "pkg.a"]
    relative = {"pkg": "", "pkg.a": "from .b import f", "pkg.b": "from . import a"}
    assert import_circle(import_graph(relative, packages)) == ["pkg.a", "pkg.b", "pkg.a"]
    through_init = {"pkg": "from pkg.a import f", "pkg.a": "import numpy\nfrom pkg import g"}
    assert import_circle(import_graph(through_init, packages)) == ["pkg", "pkg.a", "pkg"]
    # a sibling module reached through the package is no circle through its __init__.py
    sibling = {"pkg": "from pkg.a import f", "pkg.a": "from pkg import b", "pkg.b": "import pkg.c"}
    sibling["pkg.c"] = ""
    assert import_graph(sibling, packages)["pkg.a"] == {"pkg.b"}
    assert import_circle(import_graph(sibling, packages)) == []


@pytest.mark.parametrize("package", ["gradcheck", "minigrad"])
def test_neither_package_has_an_import_circle(package):
    # minigrad's Tensor is split into mixin modules, which name Tensor only for the type checker
    paths = _modules(package)
    sources = {module_name(p): p.read_text() for p in paths}
    packages = {module_name(p) for p in paths if p.name == "__init__.py"}
    circle = import_circle(import_graph(sources, packages))
    assert not circle, "import circle: " + " -> ".join(circle)


#: No module of gradcheck or minigrad (tests included) may be longer: past it, split by concept.
MAX_LINES = 550
#: Modules that are data rather than code (one row per entry, nothing to split by concept) may be
#: longer; each with its reason. None today.
DATA_TABLES: dict[str, str] = {}


@pytest.mark.parametrize(
    "path",
    sorted([*(ROOT / "gradcheck").rglob("*.py"), *(ROOT / "minigrad").rglob("*.py")]),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_module_is_over_550_lines_data_tables_aside(path):
    name, lines = str(path.relative_to(ROOT)), len(path.read_text().splitlines())
    if name in DATA_TABLES:
        assert lines > MAX_LINES, f"{name} is {lines} lines now: drop it from DATA_TABLES"
    else:
        assert lines <= MAX_LINES, f"{name} is {lines} lines, over {MAX_LINES}: split it by concept"


#: The front ends that report a campaign or a gate: each goes through the one report session.
REPORTING_FRONT_ENDS = ("gradcheck/cli/run.py", "gradcheck/cli/gate.py", "gradcheck/suite/test_gate.py")
#: What writes or assembles a report; only `campaign/report_session.py` (and the writers' own
#: modules) call these.
REPORT_WRITERS = frozenset(
    {
        "gradcheck.campaign.report_json.build_report",
        "gradcheck.campaign.outputs.write_report_pair",
        "gradcheck.campaign.report_junit.write_junit",
        "gradcheck.campaign.report_junit.run_suite",
        "gradcheck.campaign.report_junit.gate_suites",
        "gradcheck.campaign.report_markdown.run_markdown",
        "gradcheck.campaign.report_markdown.gate_markdown",
    }
)


@pytest.mark.parametrize("name", REPORTING_FRONT_ENDS)
def test_run_gate_and_the_plugin_report_through_the_one_report_session(name):
    imported = imported_modules((ROOT / name).read_text())
    assert imported & REPORT_WRITERS == set(), f"{name} assembles reports: call campaign.report_session"
    assert "gradcheck.campaign.report_session" in imported


def torch_imports(source: str) -> bool:
    """Whether a source file imports torch itself (not a name of gradcheck's that holds it)."""
    return any(m == "torch" or m.startswith("torch.") for m in imported_modules(source))


def test_the_torch_detector_sees_what_it_forbids():
    assert torch_imports("try:\n    import torch\nexcept ImportError:\n    torch = None\n")
    assert torch_imports("from torch.autograd import grad")
    assert not torch_imports("from gradcheck.engines.torch_engine import torch\nlines = ['import torch']")


@pytest.mark.parametrize("path", _modules("gradcheck"), ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_torch_engine_imports_torch(path):
    if path.relative_to(ROOT).as_posix() != "gradcheck/engines/torch_engine.py":
        assert not torch_imports(path.read_text()), "take `torch` from gradcheck.engines.torch_engine"


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def documented_modules(text: str) -> dict[str, set[str]]:
    """The modules docs/architecture.md names, by package directory: the first cell of each table
    row under a heading that names the directory (`### \\`gradcheck/campaign/\\``), its subheadings
    included."""
    found: dict[str, set[str]] = {}
    package, level = None, 0
    for line in text.splitlines():
        heading = re.match(r"(#+) (.*)", line)
        if heading:
            depth, title = len(heading.group(1)), heading.group(2)
            named = re.fullmatch(r"`([\w/]+)/`", title.strip())
            if named:
                package, level = named.group(1), depth
                found.setdefault(package, set())
            elif package is not None and depth <= level:
                package = None
        elif package is not None:
            cell = re.match(r"\| `([\w.]+\.py)` \|", line)
            if cell:
                found[package].add(cell.group(1))
    return found


def test_the_module_list_reader_sees_tables_under_their_package():
    text = (
        "### `pkg/`\n\n| module | role |\n|---|---|\n| `a.py` | A |\n"
        "#### group\n| `b.py` | B |\n### next\n| `c.py` | C |\n"
    )
    assert documented_modules(text) == {"pkg": {"a.py", "b.py"}}


def _package_modules() -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for path in [*_modules("minigrad"), *_modules("gradcheck")]:
        if path.name != "__init__.py":
            packages.setdefault(path.parent.relative_to(ROOT).as_posix(), set()).add(path.name)
    return packages


@pytest.mark.parametrize("package", sorted(_package_modules()))
def test_docs_architecture_names_every_module_and_no_other(package):
    named = documented_modules(ARCHITECTURE.read_text(encoding="utf-8")).get(package, set())
    modules = _package_modules()[package]
    assert not modules - named, f"docs/architecture.md does not name {sorted(modules - named)} of {package}/"
    assert not named - modules, f"docs/architecture.md names {sorted(named - modules)}: not in {package}/"
