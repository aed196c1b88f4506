"""What `gradcheck run` shows first: one screen that says what to fix, and commands
printed whole, that work when pasted."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding
from gradcheck.cli import main
from gradcheck.cli.console import SUMMARY_LINES, print_findings, print_summary
from gradcheck.parity.kinds import Kind
from gradcheck.testing.campaigns import triage_campaign

# A planted bug: relu's slope is 2 (its replay exits 1 while it is there).
RELU_TWO = "gradcheck.testing.kind_engines:ReluTimesTwo"


@pytest.fixture(scope="module")
def campaign():
    return triage_campaign()


def shown(draw, *args, width: int = 80) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    draw(*args, console)
    return console.file.getvalue().splitlines()


def test_a_40_item_campaign_summary_fits_40_lines_at_80_columns(campaign):
    assert len(campaign.findings) >= 40
    lines = shown(print_summary, campaign)
    assert len(lines) <= SUMMARY_LINES == 40
    assert max(map(len, lines)) <= 80
    assert lines[1].startswith("FAIL: 1500 of 2000 graphs disagree; 10 bugs, 2 graph-code findings")


def test_bugs_lead_the_table_one_line_each_then_graph_code_then_the_adapters_fault_with_its_fix(campaign):
    lines = shown(print_summary, campaign)
    rows = [line.split()[1] for line in lines if line[:3].strip().isdigit()]
    assert rows == ["bug"] * 10 + ["graph-code"] * 2 + ["adapter"]
    assert any(line.startswith(" 0  bug         tanh ") and line.endswith(" 112") for line in lines)
    assert any(
        line.startswith("fix #12: the adapter lists expand but the engine has no `.expand`") for line in lines
    )


def test_edge_behaviour_is_one_compact_table_one_line_per_op_and_conventions_a_note(campaign):
    lines = shown(print_summary, campaign)
    heading = next(i for i, line in enumerate(lines) if line.startswith("Edge behaviour"))
    header = next(line for line in lines[heading:] if line.startswith("op "))
    assert header.split()[:4] == ["op", "nan/inf", "pole", "overflow"]
    ops = [line.split()[0] for line in lines if line.split() and line.split()[-1].isdigit() and "  " in line]
    edge_ops = [
        op for op in ops if op in {"div", "log", "sqrt", "exp", "pow", "maximum", "minimum", "atan2", "relu"}
    ]
    assert sorted(edge_ops) == sorted(
        {"div", "log", "sqrt", "exp", "pow", "maximum", "minimum", "atan2", "relu"}
    )
    notes = "\n".join(lines[lines.index(next(line for line in lines if line.startswith("Conventions"))) :])
    assert "amin at a tie (12 graphs)" in notes.replace("\n", " ")


def test_a_campaign_of_many_bugs_still_fits_its_summary_and_says_where_the_rest_are(campaign):
    bugs = [dataclasses.replace(f, ops=(f"op{i}",)) for i in range(6) for f in campaign.findings[:10]]
    many = dataclasses.replace(campaign, findings=[*bugs, *campaign.findings[10:]])
    lines = shown(print_summary, many)
    assert len(lines) <= SUMMARY_LINES
    assert any(line.startswith("… and ") and "more (bug): findings " in line for line in lines)
    rows = [line.split()[1] for line in lines if line[:3].strip().isdigit()]
    assert rows[-3:] == ["graph-code", "graph-code", "adapter"], "bugs in the fewest graphs give way first"
    assert any(line.startswith("Edge behaviour of 9 op(s)") for line in lines), "the edge table in a line"


def test_a_wide_console_shows_whole_titles_up_to_120_columns(campaign):
    narrow, wide = shown(print_summary, campaign), shown(print_summary, campaign, width=200)
    assert any("…" in line for line in narrow)
    assert max(map(len, wide)) <= 120 and any(
        "mean over a tuple of dims, keeping the reduced dims" in x for x in wide
    )


def test_a_passing_campaign_says_so_in_one_line(campaign):
    clean = dataclasses.replace(campaign, records=[r for r in campaign.records if r.passed], findings=[])
    assert shown(print_summary, clean) == ["", "PASS: all 500 graphs agree, no findings"]


def test_details_print_commands_headings_and_code_whole_never_wrapped():
    long_path = "/a/very/long/directory/name/that/goes/on/and/on/for/ever/and/ever/report.json"
    repro = shlex.join([".venv/bin/python", "-m", "gradcheck", "replay", long_path, "--engine", "micrograd"])
    graph = {
        "inputs": [{"name": "x0", "value": 0.0}],
        "nodes": [{"op": "pow_const", "args": [0], "attrs": {"exponent": 0.0}}],
        "outputs": [1],
    }
    code = (
        "x0 = Value(0.0)\nv1 = x0 ** 0.0  # a comment long enough to pass the eightieth column of a CI log\n"
    )
    finding = Finding(
        Kind.EXCEPTION,
        ("pow_const",),
        "gradient",
        graph,
        region="ordinary",
        tier="bug",
        problems=sentences(("point 0 (x0=0.0): engine raised ZeroDivisionError: 0.0 cannot be raised",)),
        repro=repro,
        snippet=code,
    )
    result = dataclasses.replace(triage_campaign(graphs=20, failing=0, shrunk=0), findings=[finding])
    lines = shown(print_findings, result)
    assert f"  replay: {repro}" in lines
    assert "v1 = x0 ** 0.0  # a comment long enough to pass the eightieth column of a CI log" in lines
    assert any(
        line.startswith("finding 0 · bug · pow_const") and line.endswith("[exception, gradient]")
        for line in lines
    )


def test_a_printed_replay_command_survives_copy_paste_at_80_columns(tmp_path):
    """Through the console script, in an 80-column log: the replay line, pasted into a shell as
    it is, replays the finding (exit 1 while the bug is there)."""
    script = Path(sys.executable).parent / "gradcheck"
    out = tmp_path / "a directory whose name is long enough to push the command past 80 columns"
    argv = [str(script), "run", "--engine", RELU_TWO, "--ops", "relu,add", "--graphs", "20", "--no-edges"]
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([*argv, "--out", str(out)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 1, done.stderr
    replays = [
        line.split("replay: ", 1)[1] for line in done.stdout.splitlines() if line.startswith("  replay: ")
    ]
    assert replays and len(replays[0]) > 80
    report = json.loads((out / "report.json").read_text())
    assert replays[0] == report["findings"][0]["repro"], "the console and report.json print one command"
    entry = shlex.split(replays[0])[0]
    assert os.path.abspath(entry) == str(script), "the entry point that ran, not a bare `python`"
    pasted = subprocess.run(replays[0], shell=True, capture_output=True, text=True, env=env, check=False)
    assert pasted.returncode == 1, pasted.stdout + pasted.stderr
    assert "relu" in pasted.stdout


def test_micrograd_shows_its_x_to_the_0_bug_and_graph_code_first_and_its_edges_compact(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["run", "--engine", "micrograd", "--graphs", "300", "--out", str(tmp_path), "--no-save"]) == 1
    out = capsys.readouterr().out
    summary = out[out.index("\nFAIL: ") : out.index("\nfinding 0 · ")].splitlines()
    rows = [line for line in summary if line[:2].strip().isdigit()]
    assert rows[0].startswith("0  bug         `x ** 0` at `x = 0` raises ZeroDivis")
    assert [row.split()[1] for row in rows] == ["bug", "graph-code", "graph-code"]
    edges = summary[summary.index(next(line for line in summary if line.startswith("op "))) + 2 :]
    assert {line.split()[0] for line in edges if line.strip()} == {"div", "pow_const", "relu"}
    assert len(summary) <= SUMMARY_LINES and max(map(len, summary)) <= 80


def test_the_unexplained_graphs_are_one_line_under_the_table(campaign):
    entry = {"graphs": 7, "graph_indices": [3, 9], "smallest": {"index": 9, "ops": ["exp", "mul"]}}
    console = Console(file=io.StringIO(), width=80, color_system=None)
    print_summary(campaign, console, entry)
    text = " ".join(line.strip() for line in console.file.getvalue().splitlines())
    assert (
        "fix #12: " in text
        and "7 failing graph(s) no finding explains; the smallest, graph 9 (exp, mul)" in text
    )
    assert "4 conventions, 7 unexplained graph(s)" in text


def test_the_tables_count_cases_not_graphs_since_a_finding_counts_every_phases_cases(campaign):
    # a seed finding counts its structural check, isolation and edge cases beside its graphs:
    # more than the graphs drawn, so the column cannot say "graphs"
    lines = shown(print_summary, campaign)
    header = next(line for line in lines if line.split()[:2] == ["#", "tier"])
    edge_header = next(line for line in lines if line.startswith("op "))
    assert header.split()[-1] == edge_header.split()[-1] == "cases"
