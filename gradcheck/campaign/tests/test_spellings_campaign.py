"""A bug in one spelling of an op, or one argument type, is a finding of its own, named by its
spelling; a campaign that calls each op one way (the same engine listing no spellings) passes."""

from __future__ import annotations

import pytest

from gradcheck.campaign.checking import real_backend
from gradcheck.campaign.isolation import GRAPHS_PER_OP, IsolationCase, case_graph, check_case
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.validation import validate
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.spellings import Spelling, spelling_of
from gradcheck.testing import spelling_engines

ENGINES = "gradcheck.testing.spelling_engines"


def campaign(engine: str, graphs: int = 40):
    s = Settings(engine=f"{ENGINES}:{engine}", graphs=graphs, seed=1, structure=False)
    return run_campaign(s, real_backend())


def test_a_nan_at_zero_in_one_spelling_of_abs_is_found_and_named_by_that_spelling():
    result = campaign("AbsoluteThroughSqrt")
    assert [f.title for f in result.failing_findings] == ["abs as absolute(x) at 0 — nan/inf unlike torch"]


def test_the_same_engine_called_one_way_passes_unnoticed():
    result = campaign("AbsoluteThroughSqrtCalledOneWay")
    assert result.passed and not result.failing_findings


def test_an_int_exponent_disagreeing_with_the_float_exponent_of_the_same_value_is_a_finding():
    result = campaign("IntegerPowerKeepsSlope")
    titles = {f.title for f in result.failing_findings}
    assert "pow_const as x ** int, to the power 0 — wrong gradient" in titles, titles
    assert all(t.startswith("pow_const as x ** int, to the power 0") for t in titles), titles
    finding = next(f for f in result.failing_findings if f.region == "ordinary")
    assert [n["attrs"].get("spelling") for n in finding.graph["nodes"]] == ["x ** int"]


def test_the_int_exponent_engine_called_with_float_exponents_only_passes_unnoticed():
    result = campaign("IntegerPowerKeepsSlopeCalledOneWay")
    assert result.passed and not result.failing_findings


def test_a_malformed_list_of_spellings_is_bad_input_before_the_campaign(monkeypatch):

    twice = (Spelling("abs", "absolute(x)", abs),) * 2
    monkeypatch.setattr(spelling_engines.AbsoluteThroughSqrt, "spellings", twice)
    s = Settings(engine=f"{ENGINES}:AbsoluteThroughSqrt", graphs=1, structure=False)
    with pytest.raises(CampaignError, match="lists the spelling 'absolute\\(x\\)' of abs twice"):
        validate(s)


class BothSpellingsWrong(MinigradValue):
    name = "both-spellings-wrong"
    ops = frozenset({"abs"})
    spellings = (Spelling("abs", "abs(x)", lambda a, k: a[0].abs() * 1.5),)

    def apply(self, op, args, attrs):
        return args[0].abs() * 1.5


def test_an_isolated_failure_that_every_spelling_shares_is_titled_by_the_op_alone():
    adapter, s = BothSpellingsWrong(), Settings(engine="minigrad", graphs=1, structure=False)
    forms = {"abs": (adapter.spellings[0].form,)}
    cases = [IsolationCase("abs", k) for k in range(GRAPHS_PER_OP)]
    assert any(spelling_of(case_graph(c, s, ["abs"], frozenset(), forms).nodes[0]) for c in cases)
    titles = {f.title for c in cases for f in check_case(c, s, ["abs"], adapter, frozenset(), forms).findings}
    assert titles == {"abs — wrong value"}
