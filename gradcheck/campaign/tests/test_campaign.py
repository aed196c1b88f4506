"""The campaign runner: per-graph seeding, chunking, shrinking policy, corpus files, validation."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcheck import campaign
from gradcheck.campaign import (
    METRICS,
    Backend,
    CampaignError,
    CampaignResult,
    Failure,
    GraphRecord,
    Settings,
    campaign_checker,
    chunks,
    graph_seed,
    open_corpus,
    run_campaign,
    save_failures,
    unexplained,
)
from gradcheck.campaign.accounting import account_for_failures
from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.pool import SHRINK_TIME_CAP_REACHED, Campaign, Inline, ShrinkBudget
from gradcheck.campaign.report_json import build_report, write_report
from gradcheck.engines.loading import load_engine
from gradcheck.graphs import corpus_format
from gradcheck.graphs.ir import Graph
from gradcheck.parity.kinds import Kind

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
    alone = campaign_checker(settings).graph(37)
    in_sequence = campaign_checker(settings)
    for i in range(37):
        in_sequence.graph(i)
    assert in_sequence.graph(37).to_dict() == alone.to_dict()
    assert campaign_checker(Settings(seed=10, points=2)).graph(37).to_dict() != alone.to_dict()


# --- running with a stand-in checker -----------------------------------------------------------


def fake_record(index: int) -> GraphRecord:
    passed = index % 3 != 0
    failure = None if passed else Failure(sentences(("wrong",)), f"graph {index}", {"index": index})
    return GraphRecord(
        index, ("mul",), passed, dict.fromkeys(METRICS, index * 1e-16), ("wrong",) * (not passed), failure
    )


def fake_shrink(record: GraphRecord, budget: ShrinkBudget | None) -> GraphRecord:
    assert record.failure is not None
    f = record.failure
    finding = Finding(Kind.WRONG_GRADIENT, ("mul",), "gradient", {}, graph_indices=(record.index,))
    shrunk = Failure(
        f.problems,
        f.snippet,
        f.graph,
        f"small {record.index}",
        {"small": record.index},
        ("mul",),
        finding=finding,
    )
    return GraphRecord(record.index, record.ops, False, record.figures, record.problems, shrunk)


FAKE = Backend(make_checker=lambda s, a: fake_record, make_shrinker=lambda s, a: fake_shrink)


def fake_accounting(settings: Settings) -> tuple[dict[int, GraphRecord], list[tuple]]:
    """Graphs 0..N-1 of the stand-in checker, accounted for with its shrinker and no explainer."""
    calls: list[tuple] = []
    records = {i: fake_record(i) for i in range(settings.graphs)}
    with Inline() as runner:
        account_for_failures(
            runner, Campaign(FAKE, settings), records, [], lambda phase: None, lambda *a: calls.append(a)
        )
    return records, calls


def test_with_no_finding_to_explain_them_failing_graphs_are_shrunk_while_the_budget_lasts():
    records, calls = fake_accounting(Settings(graphs=20))
    failing = [r for r in records.values() if not r.passed]
    assert [r.index for r in failing] == [0, 3, 6, 9, 12, 15, 18]
    assert all(r.failure.shrunk_snippet for r in failing) and unexplained(failing) is None
    assert ("shrink", 0, 7) in calls and ("shrink", 7, 7) in calls


def test_graphs_left_when_the_shrink_budget_is_spent_are_unexplained_not_findings():
    records, _ = fake_accounting(Settings(graphs=20, shrink_budget=0))
    left = unexplained(list(records.values()))
    assert left.indices == (0, 3, 6, 9, 12, 15, 18)
    assert left.reasons == {"the shrink budget was spent before its turn": 7}
    assert all(r.failure.finding is None for r in records.values() if not r.passed)


def costly_shrink(record: GraphRecord, budget: ShrinkBudget | None) -> GraphRecord:
    """`fake_shrink` that spends 10 checks per graph and 1 more per index, or says the budget was
    spent when it was given fewer (as `FailureShrinker` does), recording each budget it was given."""
    GIVEN.append((record.index, budget))
    cost = 10 + record.index
    assert record.failure is not None
    if budget is not None and budget.checks is not None and budget.checks < cost:
        f = replace(record.failure, unexplained="the shrink budget was spent", shrink_checks=budget.checks)
        return replace(record, failure=f)
    done = fake_shrink(record, budget)
    assert done.failure is not None
    return replace(done, failure=replace(done.failure, shrink_checks=cost))


GIVEN: list[tuple[int, ShrinkBudget | None]] = []


def counted_accounting(settings: Settings) -> dict[int, GraphRecord]:
    records = {i: fake_record(i) for i in range(settings.graphs)}
    backend = Backend(make_checker=lambda s, a: fake_record, make_shrinker=lambda s, a: costly_shrink)
    with Inline() as runner:
        engine = Campaign(backend, settings)
        account_for_failures(runner, engine, records, [], lambda phase: None, lambda *a: None)
    return records


def test_the_shrink_budget_is_counted_in_checks_and_spent_alike_at_any_jobs():
    # graphs 0, 3, 6, 9, 12 fail; shrinking them costs 10, 13, 16, 19, 22 checks: 45 buy three
    # (39), and the fourth, given the 6 left, spends them and is left unexplained; none after it
    GIVEN.clear()
    one = counted_accounting(Settings(graphs=15, shrink_budget=45))
    shrunk = [i for i, r in one.items() if r.failure is not None and r.failure.finding is not None]
    assert shrunk == [0, 3, 6]
    assert [(i, b.checks) for i, b in GIVEN] == [(0, 45), (3, 35), (6, 22), (9, 6)]
    assert one[9].failure.unexplained == "the shrink budget was spent"
    assert one[12].failure.unexplained == "the shrink budget was spent before its turn"
    # three at a time, each given what was left at the turn's start: a graph that would have had
    # less, and spent all of it, is shrunk again with what it would have had
    three = counted_accounting(Settings(graphs=15, shrink_budget=45, jobs=3))
    assert {i: r.failure for i, r in three.items()} == {i: r.failure for i, r in one.items()}
    assert (9, 6) in [(i, b.checks) for i, b in GIVEN[4:]], "graph 9 again, with the 6 checks left"


def test_a_shrinking_stopped_by_its_time_cap_is_named_in_the_report_not_counted_as_spent():
    records = counted_accounting(Settings(graphs=15, shrink_time_cap=1e-9))  # passed at once
    capped = [i for i, r in records.items() if r.failure is not None and r.failure.cut_short]
    assert capped == [0, 3, 6, 9, 12]
    assert {r.failure.unexplained for i, r in records.items() if i in capped} == {SHRINK_TIME_CAP_REACHED}
    as_checked = [replace(r, problems=r.failure.problems if r.failure else ()) for r in records.values()]
    result = CampaignResult(Settings(graphs=15, shrink_time_cap=1e-9), as_checked, {}, 1.0, 1.0)
    assert result.cut_short == (0, 3, 6, 9, 12)
    report = build_report(result)
    assert report["cut_short"]["shrinking"] == {
        "time_cap_seconds": 1e-9,
        "graph_indices": [0, 3, 6, 9, 12],
        "why": "shrinking reached its safety cap in seconds before its budget of checks was spent",
    }
    assert "cut_short" not in build_report(replace(result, records=[fake_record(1)]))


def test_progress_of_a_campaign_reaches_the_end_of_each_phase():
    calls = []
    result = run_campaign(
        Settings(graphs=20, structure=False), campaign.real_backend(), lambda *a: calls.append(a)
    )
    checks = [done for phase, done, total in calls if phase == "check"]
    assert checks == sorted(checks) and checks[-1] == 20
    assert [r.index for r in result.records] == list(range(20))


# --- the real checker and shrinker ---------------------------------------------------------------


def test_a_failing_graph_shrinks_to_the_broken_op_and_is_saved_under_the_suites_file_name(
    broken_sin, tmp_path
):
    settings = Settings(engine=broken_sin, graphs=6, seed=1, ops=("sin", "mul", "add"), isolation=False)
    backend = Backend(campaign.make_checker, campaign.make_shrinker)  # every failing graph shrunk
    result = run_campaign(settings, backend)
    first = result.failures[0]
    assert first.failure.shrunk_ops == ("sin",)
    assert "v1 = x0.sin()" in first.failure.shrunk_snippet
    saved = save_failures(result, open_corpus(tmp_path / "corpus"))
    files = [r.failure.corpus_file for r in saved.failures]
    assert all(files) and sorted(set(files)) == sorted(map(str, (tmp_path / "corpus").glob("*.json")))
    path = Path(files[0])
    graph = Graph.from_json(path.read_text())
    assert graph.meta["found_by"] == f"gradcheck run --seed 1, graph {first.index}"
    again = corpus_format.save(graph, broken_sin, [], "test", tmp_path / "suite")
    assert again.name == path.name, "campaign and parity suite share one corpus naming scheme"
    assert corpus_format.load(path).ops() == ["sin"]


def test_a_failure_that_does_not_fail_again_when_shrunk_is_left_unexplained():
    graph = {
        "format": "minigrad-graph",
        "version": 1,
        "inputs": [{"name": "x0", "value": 0.5, "shape": []}],
        "nodes": [{"op": "tanh", "args": [0], "attrs": {}}],
        "outputs": [1],
    }
    failure = Failure(sentences(("flaky",)), "x", graph)
    record = GraphRecord(4, ("tanh",), False, dict.fromkeys(METRICS, 0.0), sentences(("flaky",)), failure)
    shrunk = campaign.FailureShrinker(Settings(), load_engine("minigrad"))(record)
    assert shrunk.failure.finding is None and shrunk.failure.shrunk_graph is None
    assert shrunk.failure.unexplained == "it did not fail its way again when shrunk"
    assert tuple(map(str, shrunk.problems)) == ("flaky",)


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
