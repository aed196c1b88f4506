"""The regression corpus: files round-trip, and a malformed file fails naming itself and its problem."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.graphs import corpus_format
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.compare import check_graph
from gradcheck.testing.broken_engines import AssignGrads
from parity_tests import CORPUS


def test_a_saved_failure_replays_as_the_same_failure(tmp_path):
    engine = AssignGrads()
    rng = np.random.default_rng(0)
    checks = (check_graph(random_graph(rng, points=4), engine) for _ in range(20))
    check = next(c for c in checks if not c.passed)
    words = [str(p) for p in check.problems]  # a corpus file keeps the problems in words
    path = corpus_format.save(check.failure, engine.name, words, found_by="test", directory=tmp_path)
    assert path.parent == tmp_path and path.name.startswith("failure-broken-assign-")
    graph = corpus_format.load(path)
    assert graph.meta["engine"] == "broken-assign" and graph.meta["problems"] == words
    assert not check_graph(graph, engine).passed
    assert check_graph(graph, load_engine("minigrad")).passed
    again = corpus_format.save(check.failure, engine.name, words, found_by="test", directory=tmp_path)
    assert again == path  # one file per distinct graph


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"format": "minigrad-graph", "version": 1, "inputs": [], "nodes": [], "outputs": [3]}', "id 3"),
        ('{"format": "minigrad-graph", "version": 7}', "unsupported version 7"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_a_malformed_corpus_file_names_the_file_and_the_problem(tmp_path, text, problem):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(corpus_format.CorpusFileError) as info:
        corpus_format.load(path)
    assert str(path) in str(info.value) and problem in str(info.value)


def test_the_shipped_corpus_is_well_formed_and_seeded():
    names = [p.name for p in corpus_format.corpus_files(CORPUS)]
    assert {"seed-deep-chain.json", "seed-diamond.json", "seed-kink-adjacent.json"} <= set(names)
    for path in corpus_format.corpus_files(CORPUS):
        corpus_format.load(path)
