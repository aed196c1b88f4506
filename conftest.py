"""Root pytest configuration: the gradcheck plugin (hypothesis profiles, the parity suite's
options and fixtures) and this repository's short aliases `--engine`, `--dtype`, `--corpus`,
`--conventions` for the `--gradcheck-` options; `ci.dependencies` fails a test skipped for a missing
test dependency when CI runs the tests (scripts/test.sh); the command line's engines in the test's
process, except in tests marked `supervised` (`engines_in_this_process`); `shallow_chains` for
tests whose campaigns need not build chains 10^5 deep; `recursion_limit_kept` fails a test that
leaves Python's recursion limit changed."""

from __future__ import annotations

import sys

import pytest

# Installed, the plugin is loaded by its `pytest11` entry point (of the same name); this loads it
# from a clone that was not reinstalled since the entry point was added.
pytest_plugins = ["gradcheck.suite.plugin", "ci.dependencies"]
UNSUPERVISED = "GRADCHECK_UNSUPERVISED"  # gradcheck.cli.arguments.engine_workers


def pytest_addoption(parser):
    """In this repository, `--engine NAME` is `--gradcheck-engine NAME` (and likewise the others)."""
    parser.addoption(
        "--engine",
        default=None,
        help="engine checked by the parity suite (alias of --gradcheck-engine): minigrad (default), "
        "minigrad-tensor, micrograd, jax, autograd, module:Adapter",
    )
    parser.addoption(
        "--dtype", choices=("float64", "float32"), default=None, help="alias of --gradcheck-dtype"
    )
    parser.addoption("--corpus", action="append", default=[], help="alias of --gradcheck-corpus DIR")
    parser.addoption(
        "--conventions",
        choices=("torch", "subgradient"),
        default=None,
        help="alias of --gradcheck-conventions",
    )


@pytest.fixture(autouse=True)
def engines_in_this_process(request, monkeypatch):
    """The command line runs engines in watched worker processes (`gradcheck.cli.arguments.
    engine_workers`), each seconds to start; tests of what it prints and writes run them in the
    test's process instead (GRADCHECK_UNSUPERVISED=1). Tests marked `supervised` keep the
    workers, as users have them."""
    if request.node.get_closest_marker("supervised"):
        monkeypatch.delenv(UNSUPERVISED, raising=False)
    else:
        monkeypatch.setenv(UNSUPERVISED, "1")


@pytest.fixture(autouse=True)
def recursion_limit_kept():
    """A test that leaves the recursion limit raised slows every later structural check in its
    process: micrograd's deep chains then go as deep as the limit (mypy's api.run set it to 16,384,
    and one test of micrograd took 234 s instead of 5). Restored, and the test fails."""
    before = sys.getrecursionlimit()
    yield
    after = sys.getrecursionlimit()
    if after != before:
        sys.setrecursionlimit(before)
        pytest.fail(f"the test left Python's recursion limit at {after}, not {before}: restore it")


@pytest.fixture
def shallow_chains(monkeypatch):
    """The structural phase's deep chains only 10^3 long, not also 10^4 and 10^5, for campaigns run
    in the test's process by tests about something else: through a tensor adapter the longer
    chains took about 4.5 s CPU per campaign. An engine passing 10^5 passes 10^3 alike; the tests
    of depth itself (gradcheck/campaign/tests/test_structure.py) keep every length."""
    from gradcheck.campaign import structure

    monkeypatch.setattr(structure, "DEPTHS", structure.DEPTHS[:1])


# What asks for measurements: with one of these, the benchmarks measure (pytest.ini_options' addopts
# has --benchmark-disable, so that the suite's normal run executes each benchmark once).
MEASURING = ("benchmark_only", "benchmark_autosave", "benchmark_save", "benchmark_compare", "benchmark_json")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """`pytest benchmarks --benchmark-only` (or --benchmark-autosave, --benchmark-compare, ...)
    measures as pytest-benchmark documents, without --benchmark-enable: the option that asks for
    figures overrides the --benchmark-disable every other run has (pytest-benchmark's own
    pytest_configure, trylast, reads the options after this)."""
    if any(config.getoption(name, None) for name in MEASURING):
        config.option.benchmark_enable = True
