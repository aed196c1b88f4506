"""Parity suite fixtures: the engine under test (`--engine`), the tensor graphs' dtype (`--dtype`)
and saving failures to the corpus."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from gradcheck.engines.adapter import EngineAdapter, UnknownEngineError, load_engine
from gradcheck.graphs import corpus
from gradcheck.parity.compare import GraphCheck
from parity_tests import CORPUS

# Graphs per hypothesis property: five times the profile's examples (ci 1,000; nightly 100,000).
EXAMPLES = 5 * settings.default.max_examples

# nodeid -> the last failing check of that test (hypothesis replays the shrunk example last)
_failures: dict[str, GraphCheck] = {}


def record_failure(check: GraphCheck) -> None:
    """Remember a failing check of the running test; it is saved to the corpus if the test fails."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    _failures[current.rsplit(" (", 1)[0]] = check


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--dtype float32`: tensor graphs run in float32, judged by torch's float32 accuracy."""
    parser.addoption(
        "--dtype",
        default="float64",
        choices=("float64", "float32"),
        help="dtype of the tensor graphs' engine run: float64 (default) or float32 "
        "(compared with torch in float32 against the float64 truth); scalar graphs stay float64",
    )


@pytest.fixture(scope="session")
def dtype(pytestconfig: pytest.Config, engine: EngineAdapter) -> str:
    chosen = pytestconfig.getoption("--dtype")
    if chosen != "float64" and chosen not in engine.dtypes:
        raise pytest.UsageError(f"--dtype {chosen}: engine {engine.name} computes in {list(engine.dtypes)}")
    return chosen


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
            check.failure, check.engine, check.problems, found_by=item.nodeid, directory=CORPUS
        )
        report.sections.append(("parity corpus", f"failing graph saved to {path}"))
