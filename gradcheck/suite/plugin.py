"""The gradcheck pytest plugin (entry point `pytest11`): options, hypothesis profiles, fixtures.

Installed with the package, it lets any project run the parity suite against its own engine:

    pytest --pyargs gradcheck.suite --gradcheck-engine mypkg.adapter:MyAdapter

and offers fixtures for one's own tests: `gradcheck_engine` (the adapter under test) and
`gradcheck_graphs` / `gradcheck_tensor_graphs` (hypothesis strategies of graphs on its ops).
It imports only pytest at load time: pytest loads it in every run of an environment that has the
package, with or without the `check` extra.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

DEFAULT_ENGINE = "minigrad"
# The regression corpus shipped as package data (in a clone, a link to parity_tests/corpus).
SHIPPED_CORPUS = Path(__file__).parent / "corpus"


def _register_hypothesis_profiles() -> None:
    """dev: quick local runs. ci: deterministic (the same examples every run). nightly: a long hunt."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # the package without its check extra: nothing to configure
        return
    settings.register_profile("dev", max_examples=50, deadline=None)
    settings.register_profile(
        "ci",
        max_examples=200,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "nightly",
        max_examples=20_000,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


_register_hypothesis_profiles()


def examples() -> int:
    """Graphs per hypothesis property: five times the profile's examples (ci 1,000; nightly 100,000)."""
    from hypothesis import settings

    return 5 * settings.default.max_examples


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradcheck", "gradcheck parity suite (pytest --pyargs gradcheck.suite)")
    group.addoption(
        "--gradcheck-engine",
        default=None,
        metavar="NAME",
        help=f"engine under test: a built-in name (default {DEFAULT_ENGINE}; minigrad-tensor, micrograd, "
        "jax, jax-tensor, autograd, autograd-tensor) or module:AdapterClass",
    )
    group.addoption(
        "--gradcheck-corpus",
        default=None,
        metavar="DIR",
        help="regression corpus to replay, where new failing graphs are saved too "
        "(default: the corpus shipped with gradcheck, which is replayed but only written in a clone)",
    )


def engine_name(config: pytest.Config) -> str:
    """--gradcheck-engine, else a project's own `--engine` (this repository's alias), else minigrad."""
    return config.getoption("--gradcheck-engine") or config.getoption("--engine", None) or DEFAULT_ENGINE


def corpus_directory(config: pytest.Config) -> Path:
    """The corpus replayed: --gradcheck-corpus, else the shipped one."""
    chosen = config.getoption("--gradcheck-corpus")
    return Path(chosen) if chosen else SHIPPED_CORPUS.resolve()


def save_directory(config: pytest.Config) -> Path | None:
    """Where a failing graph is saved: the chosen corpus, or the shipped one unless installed."""
    directory = corpus_directory(config)
    if config.getoption("--gradcheck-corpus") or "site-packages" not in directory.parts:
        return directory
    return None


@pytest.fixture(scope="session")
def gradcheck_engine_name(pytestconfig: pytest.Config) -> str:
    """The name of the engine under test (as given on the command line)."""
    return engine_name(pytestconfig)


@pytest.fixture(scope="session")
def gradcheck_engine(gradcheck_engine_name: str) -> Any:
    """The engine adapter under test (`gradcheck.engines.EngineAdapter`)."""
    from gradcheck.engines.adapter import UnknownEngineError, load_engine

    try:
        return load_engine(gradcheck_engine_name)
    except UnknownEngineError as e:
        raise pytest.UsageError(str(e)) from e


@pytest.fixture(scope="session")
def gradcheck_graphs(gradcheck_engine: Any) -> Any:
    """A function `(**kwargs) -> strategy` of scalar graphs on the engine's ops (`engine_graphs`)."""
    from gradcheck.engines.strategies import engine_graphs

    return lambda **kwargs: engine_graphs(gradcheck_engine, **kwargs)


@pytest.fixture(scope="session")
def gradcheck_tensor_graphs(gradcheck_engine: Any) -> Any:
    """A function `(**kwargs) -> strategy` of tensor graphs on the engine's ops."""
    from gradcheck.engines.strategies import engine_tensor_graphs

    if not gradcheck_engine.tensor:
        pytest.skip(f"engine {gradcheck_engine.name} has no tensors")
    return lambda **kwargs: engine_tensor_graphs(gradcheck_engine, **kwargs)


# nodeid -> the last failing check of that test (hypothesis replays the shrunk example last)
_failures: dict[str, Any] = {}


def record_failure(check: Any) -> None:
    """Remember a failing check of the running test; it is saved to the corpus if the test fails."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    _failures[current.rsplit(" (", 1)[0]] = check


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call":
        return
    check = _failures.pop(item.nodeid, None)
    if not (report.failed and check is not None and check.failure is not None):
        return
    directory = save_directory(item.config)
    if directory is None:
        report.sections.append(
            ("parity corpus", "rerun with --gradcheck-corpus DIR to save the failing graph")
        )
        return
    from gradcheck.graphs import corpus

    path = corpus.save(check.failure, check.engine, check.problems, found_by=item.nodeid, directory=directory)
    report.sections.append(("parity corpus", f"failing graph saved to {path}"))
