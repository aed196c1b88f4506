"""The zoo judges a campaign by its report.json: every bug, graph-code and adapter finding must be
expected and every expected one made; its engines are pinned and their adapters are where they
say."""

from __future__ import annotations

import ast
import json
import re

import pytest

from zoo.expectations import CHECKED_TIERS, ENGINES, Engine, Expected
from zoo.runner import ROOT, campaign, markdown, selected
from zoo.verdict import judge

PLANTED = Expected(
    "bug",
    "wrong-gradient",
    ("cos",),
    "cos — wrong gradient",
    "its cos differentiates to +sin",
)


def finding(tier: str, kind: str, ops: list[str], title: str) -> dict:
    return {"tier": tier, "kind": kind, "ops": ops, "title": title, "graphs": 3}


def engine(*expected: Expected) -> Engine:
    return Engine("planted", "planted==1.0", "gradcheck.testing.broken_engines:WrongDerivative", expected)


def test_an_expected_finding_is_found_and_nothing_else_is_reported():
    report = {"findings": [finding("bug", "wrong-gradient", ["cos"], "cos — wrong gradient")]}
    verdict = judge(engine(PLANTED), report)
    assert verdict.passed and verdict.found == (PLANTED,) and verdict.tiers["bug"] == 1


@pytest.mark.parametrize("tier", CHECKED_TIERS)
def test_a_finding_of_a_checked_tier_nothing_expects_is_unexpected(tier):
    report = {"findings": [finding(tier, "exception", ["exp"], "exp — engine raised OverflowError")]}
    verdict = judge(engine(), report)
    assert not verdict.passed
    assert verdict.unexpected == (f"{tier}: exp — engine raised OverflowError [exception, 3 graphs]",)


@pytest.mark.parametrize("tier", ["edge", "convention"])
def test_edge_behaviours_and_conventions_are_counted_not_judged(tier):
    verdict = judge(engine(), {"findings": [finding(tier, "nonfinite", ["exp"], "exp at an overflow point")]})
    assert verdict.passed and verdict.tiers[tier] == 1


def test_an_expected_finding_no_campaign_made_is_missed():
    verdict = judge(engine(PLANTED), {"findings": []})
    assert verdict.missed == (PLANTED,) and not verdict.passed


@pytest.mark.parametrize(
    ("tier", "kind", "ops", "title"),
    [
        ("edge", "wrong-gradient", ["cos"], "cos — wrong gradient"),
        ("bug", "exception", ["cos"], "cos — wrong gradient"),
        ("bug", "wrong-gradient", ["cos", "add"], "cos — wrong gradient"),
        ("bug", "wrong-gradient", ["cos"], "cos — wrong gradient at tiny magnitudes"),
    ],
)
def test_tier_kind_ops_and_the_whole_title_must_all_match(tier, kind, ops, title):
    assert not PLANTED.matches(finding(tier, kind, ops, title))


def test_failing_graphs_no_finding_explains_are_unexpected():
    report = {"findings": [], "unexplained": {"count": 4}}
    assert judge(engine(), report).unexpected == ("4 failing graph(s) no finding explains",)


def test_a_campaign_is_judged_by_the_report_it_wrote(tmp_path):
    """A real campaign on a planted bug (cos' = +sin), in a process of its own: found when expected,
    unexpected when not."""
    # the campaign names the planted mistake (its cos' is sin(x)) in the title
    title = r"cos's backward behaves like sin\(x\).*"
    named = Expected("bug", "wrong-gradient", ("cos",), title, PLANTED.why)
    planted = Engine(
        "planted",
        "-",
        "gradcheck.testing.broken_engines:WrongDerivative",
        (named,),
        graphs=30,
        options=("--ops", "cos,add", "--no-edges", "--no-structure"),
    )
    outcome = campaign(planted, tmp_path / "planted", None, 1)
    assert outcome.verdict.passed, outcome.verdict
    assert "gradcheck parity campaign" in (tmp_path / "planted" / "console.txt").read_text(encoding="utf-8")
    row = outcome.row()
    assert row[0] == "planted" and row[1] == "1" and row[6] == "1/1" and row[7] == "0"
    report = json.loads((tmp_path / "planted" / "report.json").read_text(encoding="utf-8"))
    assert judge(engine(), report).unexpected[0].startswith("bug: cos's backward behaves like sin(x)")


def test_a_campaign_that_writes_no_report_is_unexpected_and_misses_everything(tmp_path):
    broken = Engine("broken", "-", "no_such_module:Value", (PLANTED,), graphs=5)
    verdict = campaign(broken, tmp_path / "broken", None, 1).verdict
    assert verdict.missed == (PLANTED,)
    why = r"the campaign exited 2 without a report \(see .*console\.txt\)"
    assert re.fullmatch(why, verdict.unexpected[0])


@pytest.mark.parametrize("zoo_engine", ENGINES, ids=lambda e: e.name)
def test_each_engine_is_pinned_and_its_adapter_class_is_where_it_says(zoo_engine):
    assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*", zoo_engine.requirement)
    where, _, cls = zoo_engine.engine.rpartition(":")
    if where.endswith(".py"):
        tree = ast.parse((ROOT / where).read_text(encoding="utf-8"))
        assert cls in {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    for expected in zoo_engine.expected:
        assert expected.tier in CHECKED_TIERS and expected.why
        re.compile(expected.title)


def test_the_engines_are_at_least_eight_scalar_and_tensor_and_two_make_the_ci_slice():
    assert len({e.requirement.split("==")[0] for e in ENGINES}) >= 8
    assert {e.tensor for e in ENGINES} == {False, True}
    assert len({e.name for e in ENGINES}) == len(ENGINES)
    assert len([e for e in ENGINES if e.ci]) == 2


def test_the_ci_flag_selects_the_ci_engines_and_names_select_in_the_zoos_order():
    from zoo.runner import parser

    assert selected(parser().parse_args(["--ci"])) == [e for e in ENGINES if e.ci]
    names = f"{ENGINES[2].name},{ENGINES[0].name}"
    assert selected(parser().parse_args(["--engines", names])) == [ENGINES[0], ENGINES[2]]
    with pytest.raises(SystemExit, match="unknown engine"):
        selected(parser().parse_args(["--engines", "nosuchgrad"]))


def test_the_markdown_table_has_a_row_per_engine_under_its_command(tmp_path):
    planted = engine(PLANTED)
    from zoo.runner import Outcome
    from zoo.verdict import no_report

    text = markdown([Outcome(planted, no_report(planted, "none"), 1.4, tmp_path)], "bash scripts/zoo.sh")
    lines = text.splitlines()
    assert lines[0] == "`bash scripts/zoo.sh`"
    assert lines[-1] == "| planted | 0 | 0 | 0 | 0 | 0 | 0/1 | 1 | 1 s |"
