"""report.html opens on what to fix first, fits an 800 px window and stays small:
specified on a made-up campaign of 40 items over 2,000 graphs of which 1,500 fail.

(That no element scrolls sideways at 800 px was also checked by hand in headless Chromium on the
lab's engines; here, what keeps it so: wrapped code, folded lists, wide tables in scroll boxes.)"""

from __future__ import annotations

import dataclasses
import re

import pytest

from gradcheck.campaign.report_html import CODE_SHOWN, render_html
from gradcheck.campaign.report_json import build_report
from gradcheck.testing.campaigns import triage_campaign


@pytest.fixture(scope="module")
def report() -> dict:
    return build_report(triage_campaign())


@pytest.fixture(scope="module")
def page(report) -> str:
    return render_html(report)


def test_2000_graphs_of_which_1500_fail_make_a_page_under_300_kb(report, page):
    assert report["totals"]["graphs"] == 2000 and report["totals"]["failed"] == 1500
    assert len(report["findings"]) >= 40
    assert len(page.encode("utf-8")) < 300_000


def test_the_page_opens_on_the_overview_table_bugs_first_each_row_linking_to_its_details(page):
    sections = re.findall(r'<h2 id="(\w+)"', page)
    assert sections[:2] == ["overview", "findings"]
    table = page[page.index('<table class="overview">') : page.index("</table>")]
    tiers = re.findall(r'<span class="tier t-([\w-]+)">', table)
    assert tiers == ["bug"] * 10 + ["graph-code"] * 2 + ["adapter"]
    for number in re.findall(r'href="#finding-(\d+)"', table):
        assert f'id="finding-{number}"' in page


def test_the_verdict_is_one_short_line_said_once_before_the_table(page):
    verdict = "FAIL: 1500 of 2000 graphs disagree; 10 bugs, 2 graph-code findings, 1 adapter fault, "
    assert page.count(verdict) == 1
    before_table = page[: page.index('<table class="overview">')]
    assert "tanh — wrong gradient" not in before_table, "no paragraph of titles ahead of the table"


def test_the_edge_behaviour_is_one_table_a_row_per_op_and_conventions_one_note(page):
    overview = page[page.index('id="overview"') : page.index('id="findings"')]
    edge_table = overview[overview.index("<h3>Edge behaviour") :]
    rows = re.findall(r'<tr><td class="op">(\w+)</td>', edge_table)
    assert sorted(rows) == sorted(["div", "log", "sqrt", "exp", "pow", "maximum", "minimum", "atan2", "relu"])
    assert "<b>Conventions (a valid slope at a kink or tie that is not torch&#x27;s choice)</b>: " in overview
    assert "<b>fix #12</b>: the adapter lists expand but the engine has no `.expand`" in overview


def folded(page: str, position: int) -> bool:
    """Whether `position` lies inside a <details> element (they do not nest here)."""
    before = page[:position]
    return before.rfind("<details") > before.rfind("</details>")


def test_graph_lists_are_folded(report, page):
    lists = [m.start() for m in re.finditer(r"<p>\d+(?:, \d+){5,}</p>", page)]
    assert len(lists) > 40, "each finding's graphs, and each finding's failing graphs"
    assert all(folded(page, position) for position in lists)
    failing = page[page.index('<h2 id="failures"') :]
    assert failing.count("<details><summary>finding ") == len(report["findings"])


def test_nothing_is_laid_out_wider_than_the_window(page):
    css = page[page.index("<style>") : page.index("</style>")]
    assert re.search(r"pre \{[^}]*white-space: pre-wrap", css), "code wraps on screen (and copies whole)"
    assert "table.overview td, table.edges td { overflow-wrap: break-word; }" in css, "the first screen wraps"
    assert ".figure img, .figure svg { max-width: 100%" in css
    assert '<meta name="viewport" content="width=device-width' in page
    for table in re.finditer(r"<table[^>]*>", page):
        before = page[: table.start()]
        assert before.endswith('<div class="scroll">'), f"{table.group(0)} scrolls in its box, not the page"


def test_at_most_20_findings_show_their_code_the_rest_replay_by_command():
    campaign = triage_campaign(graphs=200, failing=100, shrunk=0)
    bugs = [dataclasses.replace(f, ops=(f"op{i}",)) for i in range(6) for f in campaign.findings[:10]]
    page = render_html(build_report(dataclasses.replace(campaign, findings=bugs)))
    assert page.count("<summary>Repro, in ") == CODE_SHOWN == 20
    assert page.count('<pre class="command">') == 60
