"""A failure is classified once on its way to its finding: the shrinker and the explainer carry its
kind and check along (on the record's Failure, in blame's `Diagnosed`), and rebuild re-checks,
which only count failures, do not classify at all."""

from __future__ import annotations

from collections import Counter

import pytest

from gradcheck.campaign import blame
from gradcheck.campaign.checking import FailureExplainer, FailureShrinker, campaign_checker
from gradcheck.campaign.explain import Explaining
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.settling import rebuild_failures
from gradcheck.campaign.validation import campaign_adapter
from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.ir import Graph
from gradcheck.parity import classify, edge_check
from gradcheck.parity.edge_check import check_edges
from gradcheck.parity.kinds import Kind

SETTINGS = Settings(graphs=40, seed=0, ops=("relu", "add", "mul"))


class DoubledRelu(MinigradValue):
    """minigrad with relu's gradient doubled and its value kept: a wrong gradient of relu."""

    def apply(self, op, args, attrs):
        out = super().apply(op, args, attrs)
        return out * 2.0 - out.data if op == "relu" else out


@pytest.fixture
def classified(monkeypatch):
    """How many times each graph (by its JSON) is classified, wherever the campaign classifies."""
    counts: Counter[str] = Counter()
    for module in (classify, blame, edge_check):  # classify: its `cause_of`, the shrinker's and explainer's
        original = module.classify

        def counting(problems, graph, engine, _original=original):
            counts[graph.to_json(indent=None)] += 1
            return _original(problems, graph, engine)

        monkeypatch.setattr(module, "classify", counting)
    return counts


def _failing_record():
    checker = campaign_checker(SETTINGS)
    checker.adapter = DoubledRelu()
    return next(r for r in map(checker, range(SETTINGS.graphs)) if not r.passed)


@pytest.mark.parametrize("step", ["shrink", "explain"])
def test_a_failing_graph_and_the_node_blamed_for_it_are_each_classified_once(classified, step):
    record = _failing_record()
    adapter = campaign_adapter(SETTINGS)
    work = FailureShrinker(SETTINGS, adapter) if step == "shrink" else FailureExplainer(SETTINGS, adapter)
    work.adapter = DoubledRelu()
    done = work(record) if step == "shrink" else work(record, Explaining(()))
    finding = done.failure.finding
    assert finding.kind is Kind.WRONG_GRADIENT and finding.ops == ("relu",)
    original = Graph.from_dict(record.failure.graph).to_json(indent=None)
    blamed = Graph.from_dict(finding.graph).to_json(indent=None)
    assert classified[original] == 1 and classified[blamed] == 1, classified
    assert done.failure.difference.kind is Kind.WRONG_GRADIENT, "the record carries its classification"


def test_a_classified_record_is_not_classified_again(classified):
    record = _failing_record()
    explainer = FailureExplainer(SETTINGS, campaign_adapter(SETTINGS))
    explainer.adapter = DoubledRelu()
    once = explainer(record, Explaining(()))
    classified.clear()
    again = explainer(once, Explaining(()))
    assert again.failure.finding == once.failure.finding
    assert classified[Graph.from_dict(record.failure.graph).to_json(indent=None)] == 0


def test_rebuild_re_checks_of_an_edge_case_count_its_failures_without_classifying_them(classified):
    micrograd = load_engine("micrograd")
    (problem,) = [p for p in check_edges(micrograd, ["relu"]) if p.kind is Kind.WRONG_GRADIENT]
    classified.clear()
    assert rebuild_failures(problem.graph, micrograd) == 8
    assert not classified
