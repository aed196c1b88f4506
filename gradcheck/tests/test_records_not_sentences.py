"""A problem is a record, not a sentence (docs/architecture.md): no library code reads a problem's or
an exception's words back, outside the renderers that make the words and the reader of reports of
an earlier schema. Kept by reading every library module's syntax tree.

What counts as reading words back: a regular expression (the `re` module), or a string test
(`startswith`, `endswith`, `partition`, `split`, `find`, `in`, ...) over a value that holds a
problem's or an exception's text: a name or attribute that says so (`problem`, `message`,
`detail`, `reason`, `note`, `words`, `problems`), an exception caught by `except ... as e`
or its `str()`/f-string.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "gradcheck"

#: The modules that make text from records (the renderers) and the one that reads reports of an
#: earlier schema, whose problems were sentences: they may test and parse words.
RENDERERS_AND_READER = frozenset(
    {
        "gradcheck/parity/wording.py",
        "gradcheck/campaign/earlier_schema.py",
        "gradcheck/campaign/earlier_names.py",
        "gradcheck/campaign/overview.py",
        "gradcheck/campaign/report_html.py",
        "gradcheck/campaign/report_markdown.py",
        "gradcheck/campaign/report_junit.py",
        "gradcheck/campaign/structure_repro.py",
        "gradcheck/cli/console.py",
    }
)
#: Modules that use regular expressions on something other than a problem or an exception, and why.
OTHER_PATTERNS = {
    "gradcheck/graphs/op_table.py": "the markers of the op table in docs/architecture.md's neighbour docs",
    "gradcheck/graphs/corpus_checks.py": "node names of a corpus file (v12)",
    "gradcheck/engines/value_class.py": "the registry's method templates ({0}.tanh())",
    "gradcheck/engines/torch_engine.py": "a snippet's source lines",
    "gradcheck/campaign/graph_drawing.py": "graphviz identifiers",
    "gradcheck/campaign/primitives.py": "a culprit variant's op name ('sub(c, x)': sub)",
    "gradcheck/engines/built_from.py": "the numbers in an engine node's `_op` ('**-1' is '**')",
    # Python states which operand types an operator refused only in the TypeError's words; they
    # are read once, where the exception becomes a `Raised` record (whose `producer` says whose)
    "gradcheck/engines/origin.py": "Python's own words for an operator's refused operand types",
}
TEXT_WORDS = ("problem", "message", "detail", "reason", "note", "words", "sentence")
STRING_TESTS = frozenset(
    {
        "startswith",
        "endswith",
        "partition",
        "rpartition",
        "split",
        "rsplit",
        "find",
        "rfind",
        "index",
        "removeprefix",
        "removesuffix",
        "count",
    }
)


def library_modules() -> list[Path]:
    return sorted(
        p
        for p in LIBRARY.rglob("*.py")
        if "tests" not in p.relative_to(ROOT).parts and "testing" not in p.relative_to(ROOT).parts
    )


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _caught(tree: ast.AST) -> set[str]:
    """The names exceptions are caught as (`except X as e`)."""
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler) and node.name}


def _holds_text(node: ast.AST, caught: set[str]) -> bool:
    """Whether an expression is, or is built from, a problem's or an exception's text."""
    for inner in ast.walk(node):
        name = (
            inner.id
            if isinstance(inner, ast.Name)
            else inner.attr
            if isinstance(inner, ast.Attribute)
            else None
        )
        if name is None:
            continue
        if name in caught or name == "args" or any(word in name.lower() for word in TEXT_WORDS):
            return True
    return False


def text_as_data(source: str) -> list[str]:
    """Where a source file reads a problem's or an exception's words back (line: what)."""
    tree = ast.parse(source)
    caught = _caught(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if node.func.attr in STRING_TESTS and _holds_text(receiver, caught):
                found.append(f"{node.lineno}: .{node.func.attr}() over {ast.unparse(receiver)}")
            is_re = isinstance(receiver, ast.Name) and receiver.id == "re"
            if is_re and any(_holds_text(arg, caught) for arg in node.args[1:]):
                found.append(f"{node.lineno}: re.{node.func.attr}() over text")
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            operands = [node.left, *node.comparators]
            if any(_holds_text(o, caught) for o in operands[1:]) or (
                _holds_text(node.left, caught) and _is_str(node.comparators[0])
            ):
                found.append(f"{node.lineno}: `in` over {ast.unparse(node)}")
    return found


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, (ast.JoinedStr, ast.Constant)) and isinstance(getattr(node, "value", ""), str)


def uses_patterns(source: str) -> bool:
    """Whether a source file imports the `re` module."""
    return any(
        (isinstance(node, ast.Import) and any(a.name == "re" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and node.module == "re")
        for node in ast.walk(ast.parse(source))
    )


def test_the_detector_sees_what_it_forbids():
    assert text_as_data("def f(p):\n    return p.problems[0].startswith('engine raised')\n")
    assert text_as_data("def f(problem):\n    return 'adapter raised' in problem\n")
    assert text_as_data("try:\n    g()\nexcept Exception as e:\n    ok = 'no attribute' in str(e)\n")
    assert text_as_data("import re\ndef f(problem):\n    return re.search('x', problem)\n")
    assert text_as_data("def f(finding):\n    return finding.where.startswith('x') or finding.note.split()\n")
    assert not text_as_data("def f(p):\n    return p.what is What.RAISED and p.check in CHECKS\n")
    assert uses_patterns("import re\n") and not uses_patterns("import json\n")


LIBRARY_MODULES = [p for p in library_modules() if _name(p) not in RENDERERS_AND_READER]


@pytest.mark.parametrize("path", LIBRARY_MODULES, ids=_name)
def test_library_code_reads_no_words_back(path):
    assert text_as_data(path.read_text()) == [], (
        f"{_name(path)} reads a problem's or an exception's words: read the record's fields "
        "(gradcheck.parity.problem) instead; only renderers make and test words"
    )


@pytest.mark.parametrize("path", LIBRARY_MODULES, ids=_name)
def test_regular_expressions_only_where_they_read_no_problem(path):
    if uses_patterns(path.read_text()):
        assert _name(path) in OTHER_PATTERNS, (
            f"{_name(path)} imports re: a problem's or an exception's words are never parsed outside "
            "the renderers and the reader of earlier schemas (list it in OTHER_PATTERNS with what it reads)"
        )


def test_every_listed_module_exists():
    for name in [*RENDERERS_AND_READER, *OTHER_PATTERNS]:
        assert (ROOT / name).exists(), name
