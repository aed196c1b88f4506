"""Per-op aggregation, report.json's schema and report.html, specified on hand-made graph records."""

from __future__ import annotations

import json
import math
import os
import random
import re
from dataclasses import replace

import pytest

from gradcheck.campaign import (
    HIST_BINS,
    METRICS,
    CampaignResult,
    Failure,
    GraphRecord,
    Settings,
    aggregate,
    histogram_bin,
)
from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.graph_drawing import graph_dot
from gradcheck.campaign.report_figures import distribution_svg
from gradcheck.campaign.report_html import render_html
from gradcheck.campaign.report_json import (
    SCHEMA_VERSION,
    ReportError,
    build_report,
    decode_float,
    encode_float,
    figures_only,
    histogram_labels,
    load_report,
    write_report,
)
from gradcheck.graphs.ir import Graph

GRAPH = {
    "format": "minigrad-graph",
    "version": 1,
    "inputs": [{"name": "x0", "value": 0.5, "shape": []}, {"name": "x1", "value": -1.25, "shape": []}],
    "nodes": [
        {"op": "mul", "args": [0, 1], "attrs": {}},
        {"op": "pow_const", "args": [2], "attrs": {"exponent": 2.0}},
    ],
    "outputs": [3],
}


ONE_OP = {
    "format": "minigrad-graph",
    "version": 1,
    "inputs": [{"name": "x0", "value": 0.5, "shape": []}],
    "nodes": [{"op": "exp", "args": [0], "attrs": {}}],
    "outputs": [1],
}


def figures(
    abs_t: float, rel_t: float, abs_n: float, rel_n: float, fwd: float = 0.0, bound: float = 1.0
) -> dict:
    return dict(zip(METRICS, (abs_t, rel_t, abs_n, rel_n, fwd, bound)))


def record(index: int, ops: tuple[str, ...], rel_t: float, passed: bool = True) -> GraphRecord:
    failure = None
    problems: tuple = ()
    if not passed:
        problems = sentences((f"gradient of x0 differs from torch by {rel_t:.1e} relative",))
        small = "x0 = Value(0.5)\nv2 = x0 * x0\n"
        failure = Failure(problems, "x0 = Value(0.5)\n", GRAPH, small, GRAPH, ("mul", "pow_const"))
    return GraphRecord(index, ops, passed, figures(rel_t / 2, rel_t, 1e-9, 1e-8), problems, failure)


RECORDS = [
    record(0, ("mul", "tanh"), 1e-16),
    record(1, ("mul",), 3e-15),
    record(2, ("tanh", "log"), 0.0),
    record(3, ("log",), 0.25, passed=False),
]


def result_of(records: list[GraphRecord], **settings) -> CampaignResult:
    return CampaignResult(
        Settings(**settings), sorted(records, key=lambda r: r.index), aggregate(records), 1.5, 1.0
    )


# --- aggregation ---------------------------------------------------------------------------------


def test_each_op_counts_the_graphs_that_used_it_and_their_largest_errors():
    stats = aggregate(RECORDS)
    assert list(stats) == ["log", "mul", "tanh"]
    assert stats["mul"].graphs == 2
    assert stats["mul"].maxima["max_rel_err_torch"] == 3e-15
    assert stats["mul"].maxima["max_abs_err_torch"] == 1.5e-15
    assert stats["tanh"].maxima["max_rel_err_torch"] == 1e-16
    assert stats["log"].failures == 1 and stats["log"].failing_graphs == [3]
    assert stats["log"].maxima["max_rel_err_torch"] == 0.25
    assert stats["mul"].failures == 0


def test_quantiles_are_nearest_rank_over_the_graphs_that_used_the_op(tmp_path):
    records = [GraphRecord(i, ("exp",), True, figures(0.0, float(i), 0.0, 0.0)) for i in range(1, 201)]
    stats = aggregate(records)["exp"]
    assert stats.quantile("max_rel_err_torch", 0.5) == 100.0
    assert stats.quantile("max_rel_err_torch", 0.99) == 198.0
    op = build_report(result_of(records, graphs=200))["ops"]["exp"]
    assert (op["p50_rel_err_torch"], op["p99_rel_err_torch"], op["max_rel_err_torch"]) == (
        100.0,
        198.0,
        200.0,
    )


def test_aggregation_does_not_depend_on_the_order_records_arrive_in():
    shuffled = RECORDS[:]
    random.Random(4).shuffle(shuffled)
    assert aggregate(shuffled) == aggregate(RECORDS)


def test_nan_errors_dominate_the_maximum_and_missing_figures_are_skipped():
    nan_record = GraphRecord(5, ("exp",), False, figures(math.nan, math.nan, 1.0, 1.0))
    missing = GraphRecord(6, ("exp",), True, dict.fromkeys(METRICS))
    small = GraphRecord(7, ("exp",), True, figures(1e-3, 1e-3, 1e-3, 1e-3))
    stats = aggregate([small, nan_record, missing])["exp"]
    assert math.isnan(stats.maxima["max_abs_err_torch"])
    assert stats.maxima["max_abs_err_numeric"] == 1.0
    assert stats.graphs == 3
    assert sum(stats.histograms["max_abs_err_torch"]) == 2  # the missing figure is not counted


@pytest.mark.parametrize(
    ("error", "label"),
    [
        (0.0, "0"),
        (3e-16, "[1e-16, 1e-15)"),
        (1e-16, "[1e-16, 1e-15)"),
        (1e-30, "(0, 1e-17)"),
        (5e3, ">= 1e1"),
        (math.inf, "non-finite"),
        (math.nan, "non-finite"),
    ],
)
def test_errors_fall_into_decade_bins(error, label):
    labels = histogram_labels()
    assert len(labels) == HIST_BINS
    assert labels[histogram_bin(error)] == label


# --- report.json ---------------------------------------------------------------------------------


def test_report_json_holds_every_figure_under_a_schema_version(tmp_path):
    report = build_report(result_of(RECORDS, graphs=4, seed=7), command=["python", "-m", "gradcheck", "run"])
    path = write_report(report, tmp_path / "report.json")
    loaded = load_report(path)
    assert loaded["schema_version"] == SCHEMA_VERSION
    assert loaded["settings"] == {
        "engine": "minigrad",
        "graphs": 4,
        "seed": 7,
        "ops": None,
        "tensor": False,
        "points": 4,
        "shrink_budget": 1008,  # the default: 1000 candidate checks and 2 per graph
    }
    assert loaded["totals"]["graphs"] == 4 and loaded["totals"]["failed"] == 1
    assert loaded["totals"]["max"]["max_rel_err_torch"] == 0.25
    assert loaded["ops"]["mul"]["max_rel_err_torch"] == 3e-15
    assert loaded["ops"]["mul"]["graphs"] == 2
    assert sum(loaded["ops"]["tanh"]["histograms"]["max_rel_err_torch"]) == 2
    (failure,) = loaded["failures"]
    assert failure["index"] == 3 and failure["graph"] == GRAPH
    assert failure["found_problems"] == failure["problems"] == list(map(str, RECORDS[3].problems))
    assert failure["shrunk_snippet"].startswith("x0 = Value(0.5)")
    assert loaded["run"]["command"] == "python -m gradcheck run"


def test_failures_explained_without_shrinking_keep_only_their_figures(tmp_path):
    unshrunk = GraphRecord(
        9, ("exp",), False, figures(1, 1, 1, 1), sentences(("forward differs",)), Failure((), "x", GRAPH)
    )
    (entry,) = build_report(result_of([unshrunk], graphs=10))["failures"]
    assert entry == {
        "index": 9,
        "ops": ["exp"],
        "problems": ["forward differs"],
        "records": [{"what": "earlier", "check": "forward", "note": "forward differs"}],
        "figures": {m: 1.0 for m in METRICS} | {"max_forward_err": 0.0},
    }


def test_non_finite_figures_are_written_as_strings_so_the_json_stays_strict(tmp_path):
    bad = GraphRecord(0, ("exp",), False, figures(math.inf, math.nan, 0.0, 0.0))
    path = write_report(build_report(result_of([bad], graphs=1)), tmp_path / "report.json")
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    op = json.loads(text)["ops"]["exp"]
    assert op["max_abs_err_torch"] == "inf" and op["max_rel_err_torch"] == "nan"
    assert decode_float(op["max_abs_err_torch"]) == math.inf
    assert [encode_float(x) for x in (1.5, -math.inf, None)] == [1.5, "-inf", None]


def test_figures_only_drops_what_changes_between_identical_runs():
    a = build_report(result_of(RECORDS, graphs=4, jobs=1))
    b = build_report(result_of(RECORDS, graphs=4, jobs=2))
    assert a != b
    assert figures_only(a) == figures_only(b)


def test_loading_something_else_names_the_file_and_the_problem(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(ReportError, match=r"other\.json: not a gradcheck report"):
        load_report(other)
    future = tmp_path / "future.json"
    future.write_text(json.dumps({"tool": "gradcheck", "schema_version": 99}))
    with pytest.raises(ReportError, match="schema_version 99"):
        load_report(future)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ReportError, match=r"broken\.json: cannot read"):
        load_report(broken)


# --- report.html ---------------------------------------------------------------------------------


def html_of(records: list[GraphRecord]) -> str:
    argv = ["python", "-m", "gradcheck", "run", "--graphs", "4", "--seed", "7", "--engine", "mod:My Adapter"]
    return render_html(build_report(result_of(records, graphs=4, seed=7), command=argv))


def test_html_is_one_self_contained_page_with_every_section():
    page = html_of(RECORDS)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"(src|href)=\"(?!data:|#)", page), "every resource must be inline"
    assert "http://" not in page and "https://" not in page
    for section in ('id="ops"', 'id="distributions"', 'id="failures"', 'id="settings"'):
        assert section in page
    distributions = page[page.index('id="distributions"') : page.index('id="failures"')]
    assert distributions.count("<svg ") == 1 and "<title>error distributions per op</title>" in distributions
    assert "1 of 4 graphs disagree" in page


def test_the_distributions_figure_has_a_panel_per_op_with_both_step_lines_from_its_histograms():
    report = build_report(result_of(RECORDS, graphs=4, seed=7))
    svg = distribution_svg(report)
    assert svg is not None and svg.startswith("<svg ") and svg.endswith("</svg>")
    for op, st in report["ops"].items():  # the title red for the op that failed
        colour = "#8a1c13" if st["failures"] else "#000"
        assert f'fill="{colour}">{op} ({st["graphs"]})</text>' in svg
    assert svg.count('stroke="#1f77b4"/>') == svg.count('stroke="#ff7f0e"/>') == len(report["ops"])
    assert "vs torch" in svg and "vs numeric" in svg and "non-finite" in svg
    # a step per bin, at its count: log's graphs against torch fall in different bins
    log = svg[svg.index(">log (") :]
    torch_line = log[: log.index('stroke="#1f77b4"/>')].rsplit("<path d=", 1)[1]
    heights = [float(part.split("H")[0]) for part in torch_line.strip('"').split("V")[1:]]
    assert len(heights) == len(report["histogram_bins"]) and min(heights) < max(heights)
    assert distribution_svg({"ops": {}, "histogram_bins": report["histogram_bins"]}) is None


def test_html_table_has_a_row_per_op_with_its_figures():
    page = html_of(RECORDS)
    rows = re.findall(r"<tr[^>]*><td class=op>(\w+)</td><td>(\d+)</td>", page)
    assert rows == [("log", "2"), ("mul", "2"), ("tanh", "2")]
    assert "3.00e-15" in page and '<tr class="failed"><td class=op>log' in page
    assert "<th>rel err vs torch, p99</th>" in page


def test_html_shows_each_failing_graph_and_the_exact_command_to_repeat_it(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)  # as here: graphviz's dot is absent
    page = html_of(RECORDS)
    assert 'id="graph-3"' in page
    assert "v2 = x0 * x0" in page  # the shrunk snippet
    assert "n0 -&gt; n2" in page  # the DOT text, escaped
    assert "python -m gradcheck run --graphs 4 --seed 7 --engine &#x27;mod:My Adapter&#x27;" in page
    repeat = (
        "python -m gradcheck run --engine minigrad --graphs 4 --seed 7 --points 4 --jobs 1 "
        "--shrink-budget 1008"
    )
    assert repeat in page


def test_with_graphviz_installed_the_failing_graph_is_drawn_inline(tmp_path, monkeypatch):
    fake_dot = tmp_path / "dot"  # stands in for graphviz's binary: reads DOT, writes SVG
    fake_dot.write_text(
        "#!/bin/sh\ncat > /dev/null\n"
        'echo \'<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\'\n'
        'echo \'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'width="8pt"><g id="graph0"></g></svg>\'\n'
    )
    fake_dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    page = html_of(RECORDS)
    assert '<div class="figure"><svg width="8pt"><g id="graph0"></g></svg>' in page
    assert "http" not in page and "digraph G" not in page


def test_unexplained_graphs_are_one_entry_with_the_smallest_in_full():
    why = "the shrink budget was spent before its turn"
    left = [
        GraphRecord(
            i, ("exp",), False, figures(1, 1, 1, 1), sentences(("point 0: forward differs",)), failure
        )
        for i, failure in [
            (9, Failure((), "x0 = Value(0.5)\nv1 = x0.exp()\n", ONE_OP, unexplained=why)),
            (12, Failure((), "two ops", GRAPH, unexplained=why)),
        ]
    ]
    report = build_report(result_of([*RECORDS[:3], *left], graphs=13))
    assert report["unexplained"]["graphs"] == 2 and report["unexplained"]["graph_indices"] == [9, 12]
    assert report["unexplained"]["reasons"] == {why: 2}
    assert (
        report["unexplained"]["smallest"]["index"] == 9
        and report["unexplained"]["smallest"]["graph"] == ONE_OP
    )
    assert [f["unexplained"] for f in report["failures"]] == [why, why]
    page = render_html(report)
    assert "Unexplained graphs (2)" in page and "v1 = x0.exp()" in page
    assert 'id="graph-9"' not in page, "not drawn: no finding stands for it"


def test_a_failures_code_is_written_when_a_report_first_shows_it():
    # record_of leaves it out: most failing graphs are explained by a finding, never shown
    why = "the shrink budget was spent before its turn"
    lazy = GraphRecord(
        9, ("exp",), False, figures(1, 1, 1, 1), sentences(("forward differs",)), Failure((), "", ONE_OP)
    )
    unexplained_one = replace(lazy, failure=replace(lazy.failure, unexplained=why))
    report = build_report(result_of([unexplained_one], graphs=10))
    assert report["unexplained"]["smallest"]["snippet"] == Graph.from_dict(ONE_OP).to_python("minigrad")
    shrunk = replace(
        lazy, failure=replace(lazy.failure, shrunk_graph=ONE_OP, shrunk_snippet="x0 = Value(0.5)\n")
    )
    (entry,) = build_report(result_of([shrunk], graphs=10))["failures"]
    assert entry["snippet"] == Graph.from_dict(ONE_OP).to_python("minigrad")


def test_every_failing_graph_has_a_finding_or_the_report_has_no_unexplained_entry():
    assert build_report(result_of(RECORDS[:3], graphs=3))["unexplained"] is None


def test_failures_past_the_shrink_limit_are_listed_by_index_not_drawn():
    unshrunk = GraphRecord(9, ("exp",), False, figures(1, 1, 1, 1), sentences(("point 0: forward differs",)))
    page = html_of([*RECORDS, unshrunk])
    assert "Failing graphs (2)" in page and 'id="graph-3"' in page and 'id="graph-9"' not in page
    assert "<summary>graph indices (2)</summary><p>3, 9</p>" in page
    assert "forward differs" not in page, "each graph's problems are in report.json"


def test_a_passing_campaign_says_so():
    page = html_of(RECORDS[:3])
    assert "all 3 graphs agree" in page and "<p>None.</p>" in page


def test_graph_dot_draws_inputs_ops_and_marks_outputs():
    dot = graph_dot(GRAPH)
    assert dot.startswith("digraph G {")
    assert 'n0 [shape=box, label="x0 = 0.5"]' in dot
    assert 'n3 [shape=ellipse, label="v3 = pow_const(exponent=2.0)", peripheries=2]' in dot
    assert sorted(re.findall(r"n(\d) -> n(\d)", dot)) == [("0", "2"), ("1", "2"), ("2", "3")]
