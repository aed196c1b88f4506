"""The parity suite: random graphs through the engine under test, torch and numerics, three ways.

Run `pytest parity_tests --engine NAME` (default minigrad). A discrepancy fails with the shrunk
graph as minigrad and torch code, its JSON and every figure, and the graph is saved to
parity_tests/corpus/, which every run replays.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck.engines.strategies import engine_tensor_graphs
from gradcheck.graphs import corpus
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.registry import SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.graphs.strategies import scalar_graphs
from gradcheck.parity.compare import check_graph, kink_graphs
from parity_tests import CORPUS
from parity_tests.conftest import EXAMPLES, record_failure
from parity_tests.known_bugs import known_bug

# The seeded stream: CHUNKS tests of PER_CHUNK graph structures, each checked at POINTS points.
CHUNKS = 4
PER_CHUNK = max(10, settings.default.max_examples // 2)
POINTS = 16
STREAM_SEED = 20261122


def _scalar_ops(engine) -> list[str]:
    return [op for op in SCALAR_OPS if op in engine.ops]


def _assert_passes(check, save: bool = True, in_hypothesis: bool = False) -> None:
    """Fail with the full report; `save` puts the failing graph into the corpus. A failure that a
    known, reported engine bug explains is an xfail naming it (parity_tests/known_bugs.py); inside
    a hypothesis property such an example just passes (the seeded tests show the xfail)."""
    if not check.passed and (bug := known_bug(check)) is not None:
        if in_hypothesis:
            return
        pytest.xfail(f"known bug of {bug.engine}: {bug.reason}")
    if not check.passed:
        if save:
            record_failure(check)
        pytest.fail(check.report(), pytrace=False)


@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_random_scalar_graphs_agree_with_torch_and_numerics(engine, data):
    graph = data.draw(scalar_graphs(ops=_scalar_ops(engine), points=8), label="graph")
    _assert_passes(check_graph(graph, engine, seed=0), in_hypothesis=True)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_seeded_random_graphs_agree(engine, chunk):
    ops = _scalar_ops(engine)
    for index in range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK):
        rng = np.random.default_rng([STREAM_SEED, index])
        graph = random_graph(rng, ops=ops, points=POINTS)
        check = check_graph(graph, engine, seed=index)
        if not check.passed:
            assert check.failure is not None
            small = shrink_graph(check.failure, lambda g, i=index: not check_graph(g, engine, seed=i).passed)
            _assert_passes(check_graph(small, engine, seed=index))
            _assert_passes(check)  # the shrunk graph passed after all: report the original


def _kink_id(graph) -> str:
    node = graph.nodes[0]
    args = ", ".join(repr(i.value) for i in graph.inputs)
    return f"{node.op}({args}{''.join(f', {k}={v!r}' for k, v in node.attrs)})"


@pytest.mark.parametrize("graph", kink_graphs(), ids=_kink_id)
def test_kink_conventions_match_torch(engine, graph):
    if not set(graph.ops()) <= engine.ops:
        pytest.skip(f"engine {engine.name} does not support {graph.ops()}")
    _assert_passes(check_graph(graph, engine, numeric=False, second_order=False), save=False)


@pytest.mark.parametrize("path", corpus.corpus_files(CORPUS), ids=lambda p: p.name)
def test_corpus_graph_still_agrees(engine, path):
    try:
        graph = corpus.load(path)
    except corpus.CorpusFileError as e:
        pytest.fail(str(e), pytrace=False)
    if not set(graph.ops()) <= engine.ops:
        pytest.skip(f"engine {engine.name} does not support {sorted(set(graph.ops()) - engine.ops)}")
    _assert_passes(check_graph(graph, engine, seed=0), save=False)


@settings(max_examples=max(20, EXAMPLES // 5))
@given(data=st.data())
def test_random_tensor_graphs_agree_with_torch_and_numerics(engine, dtype, data):
    if not engine.tensor:
        pytest.skip(f"engine {engine.name} has no tensors")
    graph = data.draw(engine_tensor_graphs(engine, points=4), label="graph")
    _assert_passes(check_graph(graph, engine, seed=0, dtype=dtype), in_hypothesis=True)


@pytest.mark.parametrize("chunk", range(2))
def test_seeded_random_tensor_graphs_agree(engine, dtype, chunk):
    if not engine.tensor:
        pytest.skip(f"engine {engine.name} has no tensors")
    ops = [op for op in TENSOR_OPS if op in engine.ops]
    per_chunk = max(5, PER_CHUNK // 4)
    for index in range(chunk * per_chunk, (chunk + 1) * per_chunk):
        graph = random_graph(np.random.default_rng([STREAM_SEED, 1, index]), ops=ops, tensor=True, points=4)
        check = check_graph(graph, engine, seed=index, dtype=dtype)
        if not check.passed:
            assert check.failure is not None
            small = shrink_graph(
                check.failure, lambda g, i=index: not check_graph(g, engine, seed=i, dtype=dtype).passed
            )
            _assert_passes(check_graph(small, engine, seed=index, dtype=dtype))
            _assert_passes(check)
