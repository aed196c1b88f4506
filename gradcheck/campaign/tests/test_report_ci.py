"""The files CI reads, laid out as a triage (`campaign.overview`): the markdown summary and the JUnit XML lead
with bugs, then graph code; the edge behaviour is compact; every finding shows its tier."""

from __future__ import annotations

import pytest

from gradcheck.campaign.report_junit import run_suite
from gradcheck.campaign.report_markdown import run_markdown
from gradcheck.testing.campaigns import triage_campaign

EDGE_OPS = {"div", "log", "sqrt", "exp", "pow", "maximum", "minimum", "atan2", "relu"}


@pytest.fixture(scope="module")
def campaign():
    return triage_campaign()


def test_the_markdown_summary_leads_with_a_table_of_bugs_then_graph_code_then_the_adapters_fault(campaign):
    text = run_markdown(campaign)
    lines = text.splitlines()
    assert lines[0] == "## gradcheck parity campaign: FAIL"
    assert "**10 bugs, 2 graph-code findings, 1 adapter fault, 24 edge behaviours, 4 conventions**" in lines
    header = lines.index("| # | tier | finding | kind | cases |")
    rows = [line.split(" | ")[1] for line in lines[header + 2 : header + 15]]
    assert rows == ["bug"] * 10 + ["graph-code"] * 2 + ["adapter"]
    assert lines[header + 2] == "| 0 | bug | tanh — wrong gradient | wrong-gradient | 112 |"
    assert "- fix #12: the adapter lists expand but the engine has no `.expand`: " in text


def test_the_markdown_edge_behaviour_is_one_row_per_op_and_conventions_one_note(campaign):
    lines = run_markdown(campaign).splitlines()
    edge_rows = [line for line in lines if line.startswith("| `") and line.count("|") == 10]
    assert {row.split("`")[1] for row in edge_rows} == EDGE_OPS
    assert "| `div` | inf/nan | raises ZeroDivisionError | inf/nan |  |  |  | 36 | 13, 14, 15 |" in lines
    (notes,) = [line for line in lines if line.startswith("**Conventions")]
    assert "amin at a tie (12 graphs)" in notes
    details = [line for line in lines if line.startswith("- **finding ")]
    assert len(details) == 13, "details for what to fix; the edges and conventions are in their tables"


def test_junit_cases_lead_with_bugs_then_graph_code_and_carry_their_tier(campaign):
    cases = run_suite(campaign).findall("testcase")
    tiers = [
        c.find("properties/property[@name='tier']").get("value")
        for c in cases
        if c.find("properties") is not None
    ]
    assert tiers == ["bug"] * 10 + ["graph-code"] * 2 + ["adapter"] + ["convention"] * 4 + ["edge"] * 9
    first = cases[0]
    assert first.get("classname") == "gradcheck.findings" and first.get("name") == "tanh — wrong gradient"
    assert first.find("failure").get("message") == "bug: tanh — wrong gradient: 112 graphs"


def test_junit_edge_behaviour_is_one_case_per_op_with_every_finding_in_its_text(campaign):
    edges = [c for c in run_suite(campaign).findall("testcase") if c.get("classname") == "gradcheck.edges"]
    assert {c.get("name") for c in edges} == {f"edge behaviour of {op}" for op in EDGE_OPS}
    div = next(c for c in edges if c.get("name") == "edge behaviour of div").find("failure")
    assert div.get("message") == (
        "edge: div: nan/inf: inf/nan; pole: raises ZeroDivisionError; overflow: inf/nan (36 graph(s))"
    )
    assert div.text.count("reproduce: ") == 3, "each of its three findings with its replay command"
