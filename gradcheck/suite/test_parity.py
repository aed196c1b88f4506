"""The parity suite: random graphs through the engine under test, torch and numerics, three ways.

Run `pytest --pyargs gradcheck.suite --gradcheck-engine NAME` (default minigrad), from anywhere.
A discrepancy fails with every figure, the finding's title, the shrunk graph in the engine's own
terms beside torch's numbers (the campaign's repro: `plugin.failure_report`) and its JSON, and
the graph is saved to a temporary directory the run names (`gradcheck corpus add` puts it
into the regression corpus, which every run replays, with any `--gradcheck-corpus DIR`). A
disagreement with central differences alone is settled by a precise oracle first
(`gradcheck.check_graph`, the check of the campaign too).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.strategies import engine_tensor_graphs
from gradcheck.graphs import corpus_format
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.registry import SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.graphs.strategies import scalar_graphs
from gradcheck.graphs.surface import adapter_variants, graph_allowed
from gradcheck.parity.compare import check_graph, kink_graphs
from gradcheck.parity.nn_step import check_networks
from gradcheck.suite.plugin import (
    corpus_files,
    corpus_id,
    examples,
    failure_report,
    record_failure,
    tolerated,
)

EXAMPLES = examples()

# The seeded stream: CHUNKS tests of PER_CHUNK graph structures, each checked at POINTS points.
CHUNKS = 4
PER_CHUNK = max(10, settings.default.max_examples // 2)
POINTS = 16
STREAM_SEED = 20261122


@pytest.fixture(scope="session")
def engine(gradcheck_engine: EngineAdapter) -> EngineAdapter:
    return gradcheck_engine


def _scalar_ops(engine) -> list[str]:
    return [op for op in SCALAR_OPS if op in engine.ops]


def _assert_passes(check, engine, save: bool = True) -> None:
    """Fail with the full report; `save` keeps the failing graph in the run's findings directory.

    Under `--conventions subgradient` a convention at a kink is a warning, not a failure.
    """
    if not check.passed:
        note = tolerated(check, engine)
        if note is not None:
            warnings.warn(note, stacklevel=2)
            return
        if save:
            record_failure(check)
        pytest.fail(failure_report(check, engine), pytrace=False)


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_random_scalar_graphs_agree_with_torch_and_numerics(engine, data):
    graph = data.draw(
        scalar_graphs(ops=_scalar_ops(engine), points=8, variants=adapter_variants(engine)), label="graph"
    )
    _assert_passes(check_graph(graph, engine, seed=0), engine)


@settings(max_examples=20)
@given(data=st.data())
def test_the_graphs_fixture_draws_only_the_engines_ops(gradcheck_engine, gradcheck_graphs, data):
    graph = data.draw(gradcheck_graphs(points=2), label="graph")
    assert set(graph.ops()) <= gradcheck_engine.ops


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_seeded_random_graphs_agree(engine, chunk):
    ops = _scalar_ops(engine)
    for index in range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK):
        rng = np.random.default_rng([STREAM_SEED, index])
        graph = random_graph(rng, ops=ops, points=POINTS, variants=adapter_variants(engine))
        check = check_graph(graph, engine, seed=index)
        if not check.passed:
            assert check.failure is not None
            small = shrink_graph(check.failure, lambda g, i=index: not check_graph(g, engine, seed=i).passed)
            _assert_passes(check_graph(small, engine, seed=index), engine)
            _assert_passes(check, engine)  # the shrunk graph passed after all: report the original


def _kink_id(graph) -> str:
    node = graph.nodes[0]
    args = ", ".join(repr(i.value) for i in graph.inputs)
    return f"{node.op}({args}{''.join(f', {k}={v!r}' for k, v in node.attrs)})"


@pytest.mark.parametrize("graph", kink_graphs(), ids=_kink_id)
def test_kink_conventions_match_torch(engine, graph):
    if not set(graph.ops()) <= engine.ops:
        pytest.skip(f"engine {engine.name} does not support {graph.ops()}")
    _skip_unless_handled(graph, engine)
    _assert_passes(check_graph(graph, engine, numeric=False, second_order=False), engine, save=False)


def _skip_unless_handled(graph, engine) -> None:
    """Skip a fixed graph with an attribute variant the adapter does not say it handles."""
    if not graph_allowed(graph, adapter_variants(engine)):
        pytest.skip(f"engine {engine.name}: its adapter does not say it handles the forms of {graph.ops()}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "corpus_path" in metafunc.fixturenames:
        paths = corpus_files(metafunc.config)
        metafunc.parametrize("corpus_path", paths, ids=corpus_id)


def test_corpus_graph_still_agrees(engine, corpus_path):  # the shipped corpus and --gradcheck-corpus DIRs
    try:
        graph = corpus_format.load(corpus_path)
    except corpus_format.CorpusFileError as e:
        pytest.fail(str(e), pytrace=False)
    if not set(graph.ops()) <= engine.ops:
        pytest.skip(f"engine {engine.name} does not support {sorted(set(graph.ops()) - engine.ops)}")
    _skip_unless_handled(graph, engine)
    _assert_passes(check_graph(graph, engine, seed=0), engine, save=False)


@settings(max_examples=max(20, EXAMPLES // 5))
@given(data=st.data())
def test_random_tensor_graphs_agree_with_torch_and_numerics(engine, gradcheck_dtype, data):
    if not engine.tensor:
        pytest.skip(f"engine {engine.name} has no tensors")
    graph = data.draw(engine_tensor_graphs(engine, points=4), label="graph")
    _assert_passes(check_graph(graph, engine, seed=0, dtype=gradcheck_dtype), engine)


@pytest.mark.parametrize("chunk", range(2))
def test_seeded_random_tensor_graphs_agree(engine, gradcheck_dtype, chunk):
    if not engine.tensor:
        pytest.skip(f"engine {engine.name} has no tensors")
    ops = [op for op in TENSOR_OPS if op in engine.ops]
    per_chunk = max(5, PER_CHUNK // 4)
    for index in range(chunk * per_chunk, (chunk + 1) * per_chunk):
        rng = np.random.default_rng([STREAM_SEED, 1, index])
        graph = random_graph(rng, ops=ops, tensor=True, points=4, variants=adapter_variants(engine))
        check = check_graph(graph, engine, seed=index, dtype=gradcheck_dtype)
        if not check.passed:
            assert check.failure is not None
            small = shrink_graph(
                check.failure,
                lambda g, i=index: not check_graph(g, engine, seed=i, dtype=gradcheck_dtype).passed,
            )
            _assert_passes(check_graph(small, engine, seed=index, dtype=gradcheck_dtype), engine)
            _assert_passes(check, engine)


@pytest.mark.parametrize("chunk", range(2))
def test_nn_training_steps_agree_with_torch(engine, chunk):
    """The engine's nn layer (if its adapter has a `network`): random MLPs trained a few steps."""
    if engine.network is None:
        pytest.skip(f"engine {engine.name} has no nn layer to train")
    checks = check_networks(engine.network, count=max(5, PER_CHUNK // 4), seed=STREAM_SEED + chunk)
    problems = [check.report() for check in checks if not check.passed]
    assert not problems, "\n".join(problems)
