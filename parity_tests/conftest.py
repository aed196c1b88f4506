"""Parity suite fixtures and options: the engine under test (`--engine`), extra corpus directories
to replay (`--corpus DIR`, repeatable), the kink conventions (`--conventions torch|subgradient`),
and where a failing run's graphs are saved (a temporary directory the run names, never the repo).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from gradcheck.campaign.findings import CONVENTIONS
from gradcheck.engines.adapter import EngineAdapter, UnknownEngineError, load_engine
from gradcheck.graphs import corpus
from gradcheck.parity.classify import classify_check
from gradcheck.parity.compare import GraphCheck
from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED
from parity_tests import CORPUS

# Graphs per hypothesis property: five times the profile's examples (ci 1,000; nightly 100,000).
EXAMPLES = 5 * settings.default.max_examples

# nodeid -> the last failing check of that test (hypothesis replays the shrunk example last)
_failures: dict[str, GraphCheck] = {}
# The run's findings directory, made on the first failure (so a passing run leaves nothing).
_findings_dir: list[Path] = []
_options: dict[str, str] = {"conventions": "torch"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "gradcheck parity suite")
    group.addoption(
        "--corpus",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="also replay the graph files in DIR (repeatable); parity_tests/corpus is always replayed",
    )
    group.addoption(
        "--conventions",
        choices=CONVENTIONS,
        default="torch",
        help="torch (default): a slope at a kink that is not torch's choice fails; subgradient: it "
        "passes (with a warning) when it lies between the one-sided derivatives",
    )


def pytest_configure(config: pytest.Config) -> None:
    _options["conventions"] = config.getoption("--conventions", "torch")


def corpus_files(config: pytest.Config) -> list[Path]:
    """The corpus files a run replays: parity_tests/corpus and every --corpus directory."""
    extra = [Path(d) for d in config.getoption("--corpus", [])]
    for directory in extra:
        if not directory.is_dir():
            raise pytest.UsageError(f"--corpus {directory}: not a directory")
    return [p for d in (CORPUS, *extra) for p in corpus.corpus_files(d)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "corpus_path" in metafunc.fixturenames:
        files = corpus_files(metafunc.config)
        metafunc.parametrize("corpus_path", files, ids=[_corpus_id(p) for p in files])


def _corpus_id(path: Path) -> str:
    return path.name if path.parent == CORPUS else str(path)


def tolerated(check: GraphCheck, engine: EngineAdapter) -> str | None:
    """Why a failing check passes under `--conventions subgradient` (a note), or None."""
    if _options["conventions"] != "subgradient" or check.failure is None:
        return None
    difference = classify_check(check, engine)
    if difference.kind in SUBGRADIENT_TOLERATED:
        return f"{difference.kind} at a kink (tolerated by --conventions subgradient): {check.problems[0]}"
    return None


def record_failure(check: GraphCheck) -> None:
    """Remember a failing check of the running test; it is saved if the test fails."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    _failures[current.rsplit(" (", 1)[0]] = check


def findings_directory() -> Path:
    """This run's directory for failing graphs (a new temporary directory, made once)."""
    if not _findings_dir:
        _findings_dir.append(Path(tempfile.mkdtemp(prefix="gradcheck-findings-")))
    return _findings_dir[0]


@pytest.fixture(scope="session")
def engine_name(pytestconfig: pytest.Config) -> str:
    return pytestconfig.getoption("--engine")


@pytest.fixture(scope="session")
def engine(engine_name: str) -> EngineAdapter:
    try:
        return load_engine(engine_name)
    except UnknownEngineError as e:
        raise pytest.UsageError(str(e)) from e


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call":
        return
    check = _failures.pop(item.nodeid, None)
    if report.failed and check is not None and check.failure is not None:
        path = corpus.save(
            check.failure, check.engine, check.problems, found_by=item.nodeid, directory=findings_directory()
        )
        report.sections.append(("parity findings", f"failing graph saved to {path}"))


def pytest_terminal_summary(terminalreporter) -> None:
    if _findings_dir:
        directory = _findings_dir[0]
        terminalreporter.write_line(
            f"parity findings: failing graphs saved to {directory}; replay one with "
            f"`python -m gradcheck replay FILE --engine NAME`, add it to the regression corpus with "
            f"`python -m gradcheck corpus add {directory}/FILE.json`"
        )
