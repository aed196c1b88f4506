"""The campaign runner: per-graph seeding, chunking, shrinking policy, corpus files, validation."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcheck import campaign
from gradcheck.campaign import (
    METRICS,
    Backend,
    CampaignError,
    Failure,
    GraphChecker,
    GraphRecord,
    Settings,
    chunks,
    graph_seed,
    open_corpus,
    run_campaign,
    save_failures,
)
from gradcheck.campaign.report_json import build_report, write_report
from gradcheck.graphs import corpus as graph_corpus
from gradcheck.graphs.ir import Graph

BROKEN = textwrap.dedent(
    """
    import minigrad
    from minigrad.scalar_ops import Sin
    from gradcheck.engines.minigrad_value import MinigradValue


    class WrongSin(Sin):
        @staticmethod
        def backward(g, out, a):
            return (-g * minigrad.scalar_ops.cos(a),)  # sign error


    class BrokenSin(MinigradValue):
        def apply(self, op, args, attrs):
            if op == "sin":
                return minigrad.apply_op(WrongSin, args[0])
            return super().apply(op, args, attrs)
    """
)


@pytest.fixture
def broken_sin(tmp_path, monkeypatch):
    (tmp_path / "campaign_engines.py").write_text(BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "campaign_engines:BrokenSin"


# --- seeding and splitting ---------------------------------------------------------------------


def test_graph_seed_is_a_pure_function_of_seed_and_index():
    assert graph_seed(3, 17) == graph_seed(3, 17)
    seeds = {graph_seed(s, i) for s in range(5) for i in range(200)}
    assert len(seeds) == 1000, "distinct (seed, index) pairs get distinct streams"


@given(graphs=st.integers(1, 5000), jobs=st.integers(1, 64))
def test_chunks_cover_every_index_once_in_order(graphs, jobs):
    parts = chunks(graphs, jobs)
    assert [i for part in parts for i in part] == list(range(graphs))
    assert max(len(p) for p in parts) <= 100


def test_a_graph_is_the_same_whichever_worker_draws_it_and_whatever_came_before():
    settings = Settings(graphs=50, seed=9, points=2)
    alone = GraphChecker(settings).graph(37)
    in_sequence = GraphChecker(settings)
    for i in range(37):
        in_sequence.graph(i)
    assert in_sequence.graph(37).to_dict() == alone.to_dict()
    assert GraphChecker(Settings(seed=10, points=2)).graph(37).to_dict() != alone.to_dict()


# --- running with a stand-in checker -----------------------------------------------------------


def fake_record(index: int) -> GraphRecord:
    passed = index % 3 != 0
    failure = None if passed else Failure(("wrong",), f"graph {index}", {"index": index})
    return GraphRecord(
        index, ("mul",), passed, dict.fromkeys(METRICS, index * 1e-16), ("wrong",) * (not passed), failure
    )


def fake_shrink(record: GraphRecord) -> GraphRecord:
    assert record.failure is not None
    f = record.failure
    shrunk = Failure(
        f.problems, f.snippet, f.graph, f"small {record.index}", {"small": record.index}, ("mul",)
    )
    return GraphRecord(record.index, record.ops, False, record.figures, record.problems, shrunk)


FAKE = Backend(make_checker=lambda s: fake_record, make_shrinker=lambda s: fake_shrink)


def test_only_the_first_max_shrink_failures_by_index_are_shrunk_and_progress_reaches_the_end():
    calls = []
    settings = Settings(graphs=20, max_shrink=3, structure=False, isolation=False)
    result = run_campaign(settings, FAKE, lambda *a: calls.append(a))
    assert [r.index for r in result.records] == list(range(20))
    failing = [r.index for r in result.failures]
    assert failing == [0, 3, 6, 9, 12, 15, 18]
    shrunk = [r.index for r in result.failures if r.failure.shrunk_snippet]
    assert shrunk == [0, 3, 6]
    checks = [done for phase, done, total in calls if phase == "check"]
    assert checks == sorted(checks) and checks[-1] == 20
    assert ("shrink", 3, 3) in calls
    assert result.ops["mul"].failures == 7 and result.ops["mul"].graphs == 20


# --- the real checker and shrinker ---------------------------------------------------------------


def test_a_failing_graph_shrinks_to_the_broken_op_and_is_saved_under_the_suites_file_name(
    broken_sin, tmp_path
):
    settings = Settings(engine=broken_sin, graphs=6, seed=1, ops=("sin", "mul", "add"), max_shrink=1)
    result = run_campaign(settings, campaign.real_backend())
    first = result.failures[0]
    assert first.failure.shrunk_ops == ("sin",)
    assert "v1 = x0.sin()" in first.failure.shrunk_snippet
    saved = save_failures(result, open_corpus(tmp_path / "corpus"))
    (path,) = sorted((tmp_path / "corpus").glob("*.json"))
    assert [r.failure.corpus_file for r in saved.failures if r.failure.corpus_file] == [str(path)]
    graph = Graph.from_json(path.read_text())
    assert graph.meta["found_by"] == f"gradcheck run --seed 1, graph {first.index}"
    again = graph_corpus.save(graph, broken_sin, [], "test", tmp_path / "suite")
    assert again.name == path.name, "campaign and parity suite share one corpus naming scheme"
    assert graph_corpus.load(path).ops() == ["sin"]


def test_a_failure_that_does_not_reproduce_alone_is_kept_as_found():
    graph = {
        "format": "minigrad-graph",
        "version": 1,
        "inputs": [{"name": "x0", "value": 0.5, "shape": []}],
        "nodes": [{"op": "tanh", "args": [0], "attrs": {}}],
        "outputs": [1],
    }
    failure = Failure(("flaky",), "x", graph)
    record = GraphRecord(4, ("tanh",), False, dict.fromkeys(METRICS, 0.0), ("flaky",), failure)
    shrunk = campaign.FailureShrinker(Settings())(record)
    assert shrunk.failure.shrunk_graph["nodes"] == graph["nodes"]
    assert shrunk.problems == ("flaky",)


def test_a_clean_corpus_directory_loads_every_file(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.json").write_text(
        (Path(__file__).parents[3] / "parity_tests/corpus/seed-diamond.json").read_text()
    )
    assert list(open_corpus(corpus).files) == ["a.json"]
    assert open_corpus(tmp_path / "missing").files == {}
    (tmp_path / "file").write_text("")
    with pytest.raises(CampaignError, match="not a directory"):
        open_corpus(tmp_path / "file")


# --- validation ----------------------------------------------------------------------------------


def test_the_graph_kind_must_match_the_engine():
    with pytest.raises(CampaignError, match="'micrograd' evaluates scalar graphs only; drop --tensor"):
        campaign.validate(Settings(engine="micrograd", tensor=True))


def test_validate_returns_the_ops_in_the_order_given_without_repeats():
    assert campaign.validate(Settings(ops=("tanh", "add", "tanh"))) == ("tanh", "add")
    assert campaign.validate(Settings(engine="micrograd")) == tuple(
        op for op in campaign.scalar_ops() if op in {"add", "sub", "mul", "div", "pow_const", "neg", "relu"}
    )


def test_report_of_a_real_campaign_is_strict_json(tmp_path):
    result = run_campaign(Settings(graphs=12, seed=2), campaign.real_backend())
    path = write_report(build_report(result), tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["totals"]["graphs"] == 12 and data["totals"]["failed"] == 0
    assert data["totals"]["points_checked"] + data["totals"]["points_skipped"] == 12 * 4
    assert sum(op["graphs"] for op in data["ops"].values()) >= 12
