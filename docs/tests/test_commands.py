"""Every command README.md and docs/*.md show is one today's code accepts, and every module, file
and dotted name they point at exists: a renamed flag, module or command fails here, not in a
reader's terminal.

Commands are read from fenced bash/yaml blocks (parsed in full: flags, choices, required options)
and from inline code in the prose (their flags only, as prose quotes parts of commands).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import importlib.util
import io
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from docs_markdown import DOCUMENTS, FENCE, ROOT, prose

from gradcheck.cli.parser import build_parser

INLINE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")
SHELL_BLOCKS = {"bash", "sh", "shell", "yaml"}
OPERATORS = {"&&", "||", "|", ";", "&", ">", "<", ">>", "(", ")"}
# Words a reader replaces: paths and names in the docs' examples that are not this repository's.
PLACEHOLDER = re.compile(
    r"^(path/to/|/path/to|out/|OUT/|\./|nightly/|my|mypkg|mypackage|\$|corpus/|OWNER|report\.)"
)


def shell_commands(text: str) -> list[tuple[int, list[str]]]:
    """(line, argv) of each simple command in the fenced shell and yaml blocks of `text`."""
    found = []
    for match in FENCE.finditer(text):
        if match.group(1) not in SHELL_BLOCKS:
            continue
        first = text.count("\n", 0, match.start()) + 2
        joined = re.sub(r"\\\n", " ", match.group(2))  # continuation lines
        for offset, line in enumerate(joined.splitlines()):
            line = re.sub(r"^\s*(- )?(run|name):\s*\|?", "", line) if match.group(1) == "yaml" else line
            found += [(first + offset, argv) for argv in simple_commands(line)]
    return found


def simple_commands(line: str) -> list[list[str]]:
    """The simple commands of one shell line: comments dropped, split at && | ; & and redirections."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: not shell (yaml text)
        return []
    commands, current = [], []
    for token in tokens:
        if token in OPERATORS or set(token) <= set("&|;<>()"):
            commands.append(current)
            current = []
        else:
            current.append(token)
    return [c for c in [*commands, current] if c]


def inline_commands(text: str) -> list[tuple[int, list[str]]]:
    """(line, argv) of each inline code span of the prose that is a command."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found = []
    for match in INLINE.finditer(text):
        for argv in simple_commands(match.group(1).replace("\n", " ")):
            if program(argv)[0] is not None:
                found.append((text.count("\n", 0, match.start()) + 1, argv))
    return found


def program(argv: list[str]) -> tuple[str | None, list[str]]:
    """(which program, its arguments): gradcheck, pytest, a benchmark, ci.gate, a script; else None."""
    words = list(argv)
    while words and (re.match(r"^\w+=", words[0]) or words[0] in {"time", "exec"}):
        words.pop(0)  # VAR=value and `time` prefixes
    if not words:
        return None, []
    name = words[0].rsplit("/", 1)[-1]
    if name == "gradcheck":
        return "gradcheck", words[1:]
    if name in {"pytest", "py.test"}:
        return "pytest", words[1:]
    if name == "bash" and len(words) > 1:
        return "bash", words[1:]
    if re.match(r"python(3(\.\d+)?)?$", name) and len(words) > 1:
        if words[1:3] == ["-m", "gradcheck"]:
            return "gradcheck", words[3:]
        if words[1:3] == ["-m", "pytest"]:
            return "pytest", words[3:]
        if words[1] == "-m" and len(words) > 2 and words[2] == "ci.gate":
            return "ci.gate", words[3:]
        if words[1] == "-m" and len(words) > 2 and words[2].startswith("gradcheck."):
            return "module", words[2:]
        if re.match(r"^benchmarks/\w+\.py$", words[1]):
            return "benchmark", words[1:]
    return None, []


def every_command() -> list[tuple[str, int, list[str], bool]]:
    """(document, line, argv, whole): whole commands from blocks, partial ones from the prose."""
    commands = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        commands += [(path.name, line, argv, True) for line, argv in shell_commands(text)]
        commands += [(path.name, line, argv, False) for line, argv in inline_commands(text)]
    return [c for c in commands if program(c[2])[0] is not None]


COMMANDS = every_command()


def flags(argv: list[str]) -> list[str]:
    return [word.split("=", 1)[0] for word in argv if word.startswith("--")]


def subcommand_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser of the (sub)command `argv` names: `gradcheck run`, `gradcheck corpus add`, ..."""
    parser = build_parser()
    for word in argv:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions or word not in actions[0].choices:
            break
        parser = actions[0].choices[word]
    return parser


@functools.cache
def pytest_help() -> str:
    """What `pytest --help` lists, run outside the repository: the options an installed gradcheck
    gives pytest, without this repository's conftest aliases (`--engine`, `--corpus`, ...)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--help"],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@functools.cache
def script_flags(path: Path) -> str:
    """The flags a benchmark script's argparse parser defines (read from its source, not run)."""
    calls = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]
    return " ".join(
        arg.value
        for call in calls
        if getattr(call.func, "attr", None) == "add_argument"
        for arg in call.args
        if isinstance(arg, ast.Constant) and str(arg.value).startswith("-")
    )


@functools.cache
def ci_gate_help() -> str:
    """What `python -m ci.gate --help` prints."""
    from ci import gate

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.suppress(SystemExit):
        gate.main(["--help"])
    return printed.getvalue()


def gradcheck_problems(arguments: list[str], whole: bool) -> list[str]:
    """What today's `gradcheck` parser refuses in a command: the whole of it (flags, their values'
    types and choices, required options) or, for a part quoted in prose, its flags. Flags must be
    spelled in full: argparse takes `--graph` for `--graphs`, a reader's next version may not."""
    parser = subcommand_parser(arguments)
    known = {s for action in parser._actions for s in action.option_strings}
    found = [f"{parser.prog} has no {f}" for f in flags(arguments) if f not in known]
    if whole and not found:
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            try:
                build_parser().parse_args(arguments)
            except SystemExit as exit:
                if exit.code != 0:
                    found.append(errors.getvalue().strip().splitlines()[-2])
    return found


def listed(flag: str, help: str) -> bool:
    return re.search(rf"(^|[\s,\[]){re.escape(flag)}(?![\w-])", help, re.MULTILINE) is not None


def pytest_problems(arguments: list[str]) -> list[str]:
    """The suite runs as installed (`--pyargs gradcheck.suite`), with options pytest and the plugin
    know outside this repository (its conftest's short aliases are not a user's), on paths that exist."""
    problems = []
    if "--pyargs" in arguments and arguments[arguments.index("--pyargs") + 1 :][:1] != ["gradcheck.suite"]:
        problems.append("--pyargs of something other than gradcheck.suite")
    if "parity_tests" in arguments:
        problems.append("the parity suite is `pytest --pyargs gradcheck.suite`, not `pytest parity_tests`")
    for before, word in zip(["-", *arguments], arguments):
        a_path = re.match(r"^[\w./-]+$", word) and "/" in word and not before.startswith("-")
        if a_path and not (PLACEHOLDER.match(word) or (ROOT / word).exists()):
            problems.append(f"no {word} in the repository")
    known = pytest_help()
    return problems + [f"pytest has no {f}" for f in flags(arguments) if not listed(f, known)]


def script_problems(kind: str, arguments: list[str]) -> list[str]:
    """A script, module or benchmark that exists, given flags its --help lists."""
    if kind == "bash":
        return [] if (ROOT / arguments[0]).is_file() else [f"no {arguments[0]}"]
    if kind == "module":
        return [] if importlib.util.find_spec(arguments[0]) else [f"no module {arguments[0]}"]
    if kind == "benchmark":
        if not (ROOT / arguments[0]).is_file():
            return [f"no {arguments[0]}"]
        known, arguments = script_flags(ROOT / arguments[0]), arguments[1:]
    else:
        known = ci_gate_help()
    return [f"it has no {f}" for f in flags(arguments) if not listed(f, known)]


def problems(argv: list[str], whole: bool) -> list[str]:
    kind, arguments = program(argv)
    if kind == "gradcheck":
        return gradcheck_problems(arguments, whole)
    if kind == "pytest":
        return pytest_problems(arguments)
    return script_problems(kind, arguments)


def test_the_docs_show_commands_of_every_kind():
    kinds = {program(argv)[0] for _, _, argv, _ in COMMANDS}
    assert {"gradcheck", "pytest", "benchmark", "ci.gate", "bash", "module"} <= kinds
    assert len(COMMANDS) > 60


STALE = """
```bash
pytest parity_tests --engine minigrad               # the suite before gradcheck.suite
python -m gradcheck run --graph 100                 # a misspelt flag
gradcheck gate --engine micrograd                   # --baseline is required
gradcheck run --conventions subgradients            # not a choice
gradcheck corpus add out/corpus/x.json --into dir   # --to, not --into
.venv/bin/python benchmarks/bench_scalar.py --rounds 3
python -m ci.gate --tensor
bash scripts/no_such_script.sh
```
And in prose: `gradcheck replay report.json --index 0`.
"""


def test_a_stale_command_fails_these_checks():
    found = [(a, True) for _, a in shell_commands(STALE)] + [(a, False) for _, a in inline_commands(STALE)]
    assert len(found) == 9
    for argv, whole in found:
        assert problems(argv, whole), f"`{shlex.join(argv)}` passed the checks"
    assert not problems(["gradcheck", "gate", "--engine", "micrograd", "--baseline", "b.json"], True)
    assert not problems(["pytest", "--pyargs", "gradcheck.suite", "--gradcheck-engine", "jax"], True)


@pytest.mark.parametrize(
    ("document", "line", "argv", "whole"), COMMANDS, ids=[f"{d}:{n}" for d, n, _, _ in COMMANDS]
)
def test_every_command_the_docs_show_is_one_the_code_accepts(document, line, argv, whole):
    found = problems(argv, whole)
    assert not found, f"{document}:{line}: `{shlex.join(argv)}`: {'; '.join(found)}"


# --- names in the prose ------------------------------------------------------------------------

SPANS = [(path.name, match.group(1)) for path in DOCUMENTS for match in INLINE.finditer(prose(path))]
DOTTED = re.compile(r"^(gradcheck|minigrad|ci)(\.\w+)+(:\w+)?$")
PATHLIKE = re.compile(r"^[\w.-]+(/[\w.-]+)*/?$")
TOPS = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name not in {".git", ".venv", "out"}}
FILES = [p for p in ROOT.rglob("*") if not {".venv", ".git", "out"} & set(p.parts)]


def resolves(name: str) -> bool:
    """Whether a dotted name (module, module.attribute or module:attribute) exists."""
    module, _, attribute = name.partition(":")
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in [*parts[cut:], *([attribute] if attribute else [])]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


@pytest.mark.parametrize("document", [p.name for p in DOCUMENTS])
def test_every_dotted_name_in_the_prose_imports(document):
    names = {span for doc, span in SPANS if doc == document and DOTTED.match(span)}
    missing = sorted(n for n in names if not resolves(n))
    assert not missing, f"{document} names what does not exist: {missing}"


def exists(span: str) -> bool:
    """Whether a path named in the docs is in the repository: from its root, from gradcheck/ or
    minigrad/, or (a module named after its package was) as the end of some file's path."""
    span = span.rstrip("/")
    if any((base / span).exists() for base in (ROOT, ROOT / "gradcheck", ROOT / "minigrad")):
        return True
    return any(p.as_posix().endswith("/" + span) for p in FILES)


@pytest.mark.parametrize("document", [p.name for p in DOCUMENTS])
def test_every_file_the_prose_names_exists(document):
    named = {
        span
        for doc, span in SPANS
        if doc == document
        and PATHLIKE.match(span)
        and (span.split("/")[0] in TOPS or re.search(r"\.(py|md|sh|toml|json)$", span))
        and not PLACEHOLDER.match(span)
        and not DOTTED.match(span)
    }
    missing = sorted(s for s in named if not exists(s))
    assert not missing, f"{document} names files that do not exist: {missing}"


# --- links between the docs --------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a markdown file."""
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.*)$", prose(path), re.MULTILINE)
    }


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_link_to_a_file_or_heading_of_this_repository_resolves(path):
    for target in LINK.findall(prose(path)):
        if re.match(r"^[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{path.name} links to {target}: no such file"
        if anchor:
            assert anchor in anchors(linked), f"{path.name} links to {target}: no such heading"
