"""The gradcheck pytest plugin (entry point `pytest11`): options, hypothesis profiles, fixtures,
and the suite's tests in tier order (bugs, graph code, edge behaviours: `-x` stops at the first).

Installed with the package, it lets any project run the parity suite against its own engine:

    pytest --pyargs gradcheck.suite --gradcheck-engine mypkg.adapter:MyAdapter

with `--gradcheck-baseline FILE` also gates the engine against a baseline recorded by `gradcheck
gate --update-baseline` (or `python -m ci.gate`), and offers fixtures for one's own tests:
`gradcheck_engine` (the adapter under test) and `gradcheck_graphs` / `gradcheck_tensor_graphs`
(hypothesis strategies of graphs on its ops).
It imports only pytest at load time: pytest loads it in every run of an environment that has the
package, with or without the `check` extra.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from gradcheck.launcher import command_line

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
        action="append",
        default=[],
        metavar="DIR",
        help="also replay the graph files in DIR (repeatable); the corpus shipped with gradcheck is "
        "always replayed",
    )
    group.addoption(
        "--gradcheck-dtype",
        choices=("float64", "float32"),
        default=None,
        help="dtype of the tensor graphs' engine run: float64 (default) or float32 (compared with "
        "torch in float32 against the float64 truth); scalar graphs stay float64",
    )
    group.addoption(
        "--gradcheck-baseline",
        default=None,
        metavar="FILE",
        help="also gate the engine against this baseline (recorded by `gradcheck gate "
        "--update-baseline` or `python -m ci.gate --update-baseline`): the gate's fixed campaign, "
        "compared the same way, for the baseline's parts recorded for this engine",
    )
    group.addoption(
        "--gradcheck-conventions",
        choices=("torch", "subgradient"),
        default=None,
        help="torch (default): a slope at a kink that is not torch's choice fails; subgradient: it "
        "passes (with a warning) when it lies between the one-sided derivatives",
    )


def engine_name(config: pytest.Config) -> str:
    """--gradcheck-engine, else a project's own `--engine` (this repository's alias), else minigrad."""
    return _option(config, "--gradcheck-engine", "--engine", DEFAULT_ENGINE)


def _option(config: pytest.Config, name: str, alias: str, default: Any) -> Any:
    """--gradcheck-NAME, else a project's own short alias (this repository's `--engine` style)."""
    return config.getoption(name) or config.getoption(alias, None) or default


def corpus_files(config: pytest.Config) -> list[Path]:
    """The corpus files a run replays: the shipped corpus and every --gradcheck-corpus directory."""
    from gradcheck.graphs import corpus_format

    extra = [Path(d) for d in _option(config, "--gradcheck-corpus", "--corpus", [])]
    for directory in extra:
        if not directory.is_dir():
            raise pytest.UsageError(f"--gradcheck-corpus {directory}: not a directory")
    return [p for d in (SHIPPED_CORPUS.resolve(), *extra) for p in corpus_format.corpus_files(d)]


def corpus_id(path: Path) -> str:
    """A corpus test's id: the file name in the shipped corpus, the whole path elsewhere."""
    return path.name if path.parent == SHIPPED_CORPUS.resolve() else str(path)


def gate_baseline(config: pytest.Config) -> Path | None:
    """--gradcheck-baseline, or None: the suite's gate test is then skipped."""
    value = config.getoption("--gradcheck-baseline", None)
    return None if value is None else Path(value)


def conventions(config: pytest.Config) -> str:
    """torch (a convention at a kink fails) or subgradient (it is a warning)."""
    return _option(config, "--gradcheck-conventions", "--conventions", "torch")


def tolerated(check: Any, engine: Any) -> str | None:
    """Why a failing check passes under subgradient conventions (a note), or None."""
    if _settings["conventions"] != "subgradient" or check.failure is None:
        return None
    from gradcheck.parity.classify import classify_check
    from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED

    difference = classify_check(check, engine)
    if difference.kind in SUBGRADIENT_TOLERATED:
        return f"{difference.kind} at a kink (tolerated by subgradient conventions): {check.problems[0]}"
    return None


_settings: dict[str, str] = {"conventions": "torch"}


def failure_report(check: Any, engine: Any) -> str:
    """A failing check as the campaign reports its finding: the engine's problems and figures, the
    finding's title, and the repro in the engine's own terms (`engine.snippet`: a value class's
    own spelling, or a script that loads the adapter by its name and builds the graph through
    it), then the graph's JSON. Never minigrad's code for another engine."""
    from gradcheck.campaign.blame import finding_of_check
    from gradcheck.campaign.overview import finding_code

    lines = [check.report().split("\n\n", 1)[0]]  # engine, problems, figures
    try:
        found = finding_of_check(check, engine)
        title, code = f"finding: {found.title} [{found.kind.value}, {found.check}]", finding_code(found)
    except Exception as e:  # classifying runs the engine again; the repro is shown all the same
        title, code = f"(not classified: {type(e).__name__}: {e})", engine_code(check.failure, engine)
    lines += [title, "", code]
    return "\n".join([*lines, "# graph JSON", check.failure.to_json(indent=None)])


def engine_code(graph: Any, engine: Any) -> str:
    """The graph in the engine's own terms, or torch's code when the adapter has no repro."""
    from gradcheck.engines.snippets import graph_snippet

    return engine.snippet(graph) or graph_snippet(graph, "torch")


# The suite's markers, registered by the plugin so that a project running it under
# `--strict-markers` (or with warnings as errors) collects it.
MARKERS = {
    "edges": "the edge-value checks (each op at +-0, subnormals, +-1e300, inf, nan, overflow points); "
    "deselect with -m 'not edges'",
    "structure": "the structural checks of the engine's graph code; deselect with -m 'not structure'",
}


def pytest_configure(config: pytest.Config) -> None:
    _settings["conventions"] = conventions(config)
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


# The suite's modules in the order a campaign report leads with their findings (`campaign.tiers`):
# bugs (each op alone first, then ops' gradients in random graphs, at kinks and in the corpus),
# then the engine's graph code, then edge behaviours, then the gate against a baseline; so `-x`
# stops at what to fix first.
TIER_ORDER = ("test_ops_alone", "test_parity", "test_structure", "test_edges", "test_gate")
SUITE_DIR = Path(__file__).resolve().parent


def suite_tier(item: pytest.Item) -> int | None:
    """Where a test of the suite runs in tier order (`TIER_ORDER`); None for any other test."""
    path = item.path.resolve()
    if path.parent != SUITE_DIR:
        return None
    return TIER_ORDER.index(path.stem) if path.stem in TIER_ORDER else len(TIER_ORDER)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The suite's tests in tier order (stable within a tier), in the places its tests held among
    the run's; other tests keep theirs."""
    places = [i for i, item in enumerate(items) if suite_tier(item) is not None]
    ordered = sorted((items[i] for i in places), key=lambda item: suite_tier(item) or 0)
    for place, item in zip(places, ordered):
        items[place] = item


@pytest.fixture(scope="session")
def gradcheck_engine_name(pytestconfig: pytest.Config) -> str:
    """The name of the engine under test (as given on the command line)."""
    return engine_name(pytestconfig)


@pytest.fixture(scope="session")
def gradcheck_engine(gradcheck_engine_name: str) -> Any:
    """The engine adapter under test (`gradcheck.engines.EngineAdapter`)."""
    from gradcheck.engines.loading import UnknownEngineError, load_engine

    try:
        return load_engine(gradcheck_engine_name)
    except UnknownEngineError as e:
        raise pytest.UsageError(str(e)) from e


@pytest.fixture(scope="session")
def gradcheck_dtype(pytestconfig: pytest.Config, gradcheck_engine: Any) -> str:
    """The dtype tensor graphs run in on the engine (--gradcheck-dtype; default float64)."""
    chosen = _option(pytestconfig, "--gradcheck-dtype", "--dtype", "float64")
    if chosen != "float64" and chosen not in gradcheck_engine.dtypes:
        raise pytest.UsageError(
            f"--gradcheck-dtype {chosen}: engine {gradcheck_engine.name} computes in "
            f"{list(gradcheck_engine.dtypes)}"
        )
    return chosen


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
# The run's findings directory, made on the first failure (so a passing run leaves nothing).
_findings_dir: list[Path] = []


def record_failure(check: Any) -> None:
    """Remember a failing check of the running test; it is saved if the test fails."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    _failures[current.rsplit(" (", 1)[0]] = check


def findings_directory() -> Path:
    """This run's directory for failing graphs (a new temporary directory, made once): a suite run
    never writes into the corpus it replays; `gradcheck corpus add` does that on purpose."""
    if not _findings_dir:
        _findings_dir.append(Path(tempfile.mkdtemp(prefix="gradcheck-findings-")))
    return _findings_dir[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call":
        return
    check = _failures.pop(item.nodeid, None)
    if not (report.failed and check is not None and check.failure is not None):
        return
    from gradcheck.graphs import corpus_format

    path = corpus_format.save(
        check.failure,
        check.engine,
        [str(p) for p in check.problems],
        found_by=item.nodeid,
        directory=findings_directory(),
    )
    report.sections.append(("parity findings", f"failing graph saved to {path}"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _findings_dir:
        directory = _findings_dir[0]
        terminalreporter.write_line(
            f"parity findings: failing graphs saved to {directory}; replay one with "
            f"`{command_line('replay', 'FILE', '--engine', 'NAME')}`, add it to a regression corpus with "
            f"`{command_line('corpus', 'add', f'{directory}/FILE.json', '--to', 'DIR')}` "
            "(default ./corpus) and "
            "replay that with --gradcheck-corpus DIR"
        )
