"""`gradcheck run --help` lists its options in groups by what they decide, and parses as before."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gradcheck.cli import build_parser

GROUPS = {
    "what to check": ["--seed", "--engine", "--ops", "--tensor", "--points", "--dtype"],
    "phases to leave out": ["--no-edges", "--no-isolation", "--no-structure"],
    "how it is judged": ["--conventions", "--reference"],
    "how long": ["--graphs", "--graph-timeout", "--shrink-budget", "--shrink-time-cap"],
    "where it runs": ["--jobs", "--scheduler"],
    "outputs": ["--out", "--corpus", "--no-save", "--junit-xml", "--summary-md", "--print-adapter"],
}

# Every option of `gradcheck run` given, and what the parser made of it before the groups.
EVERY_OPTION = [
    *("run", "--graphs", "7", "--seed", "3", "--engine", "micrograd", "--ops", "tanh,mul"),
    *("--tensor", "--points", "2", "--dtype", "float32", "--jobs", "2", "--graph-timeout", "5"),
    *("--scheduler", "tcp://host:8786", "--out", "o", "--corpus", "c", "--no-save", "--no-edges"),
    *("--shrink-budget", "9", "--shrink-time-cap", "4.5", "--conventions", "subgradient"),
    *("--reference", "exact", "--no-isolation", "--junit-xml", "j.xml", "--summary-md", "s.md"),
    *("--no-structure", "--print-adapter", "a.py"),
]
PARSED = {
    "command": "run",
    "graphs": 7,
    "seed": 3,
    "engine": "micrograd",
    "ops": ("tanh", "mul"),
    "tensor": True,
    "points": 2,
    "dtype": "float32",
    "jobs": 2,
    "graph_timeout": 5.0,
    "scheduler": "tcp://host:8786",
    "out": Path("o"),
    "corpus": Path("c"),
    "no_save": True,
    "no_edges": True,
    "shrink_budget": 9,
    "shrink_time_cap": 4.5,
    "max_shrink": None,
    "conventions": "subgradient",
    "reference": "exact",
    "no_isolation": True,
    "junit_xml": Path("j.xml"),
    "summary_md": Path("s.md"),
    "no_structure": True,
    "print_adapter": Path("a.py"),
}
DEFAULTS = {
    **dict.fromkeys(("engine", "ops", "scheduler", "corpus", "shrink_budget", "shrink_time_cap"), None),
    **dict.fromkeys(("max_shrink", "junit_xml", "summary_md", "print_adapter"), None),
    **dict.fromkeys(("tensor", "no_save", "no_edges", "no_isolation", "no_structure"), False),
    **{"command": "run", "graphs": 2000, "seed": 0, "points": 4, "dtype": "float64", "jobs": 1},
    **{"graph_timeout": 60.0, "out": Path("out"), "conventions": "torch", "reference": "torch"},
}


def _run_parser() -> argparse.ArgumentParser:
    (commands,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices["run"]


def _help(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "200")
    return _run_parser().format_help()


def _section(text: str, title: str) -> str:
    """The lines of the help section headed `title:`, up to the next heading or blank line."""
    body = text.split(f"\n{title}:\n", 1)[1]
    return body.split("\n\n", 1)[0]


def test_every_visible_option_of_run_sits_in_exactly_one_named_group():
    grouped = [option for options in GROUPS.values() for option in options]
    visible = [
        a.option_strings[-1]
        for a in _run_parser()._actions
        if a.help is not argparse.SUPPRESS and "--help" not in a.option_strings
    ]
    assert sorted(grouped) == sorted(visible) and len(set(grouped)) == len(grouped)


@pytest.mark.parametrize("title", list(GROUPS))
def test_the_help_lists_each_group_under_its_heading_with_its_options(monkeypatch, title):
    section = _section(_help(monkeypatch), title)
    listed = [line.split()[0] for line in section.splitlines() if line.startswith("  --")]
    assert listed == GROUPS[title]


def test_the_plain_options_heading_keeps_only_help(monkeypatch):
    section = _section(_help(monkeypatch), "options")
    assert [line.split()[0] for line in section.splitlines() if line.startswith("  -")] == ["-h,"]


def test_every_option_of_run_parses_to_what_it_did_before_the_groups():
    assert vars(build_parser().parse_args(EVERY_OPTION)) == PARSED


def test_the_defaults_of_run_are_what_they_were_before_the_groups():
    assert vars(build_parser().parse_args(["run"])) == DEFAULTS


def test_the_usage_line_keeps_the_options_in_their_order_before_the_groups():
    usage = " ".join(_run_parser().format_usage().split())
    assert usage.startswith("usage: gradcheck run [-h] [--graphs GRAPHS] [--seed SEED] [--engine ENGINE]")
    assert usage.endswith("[--summary-md FILE] [--no-structure] [--print-adapter FILE]")
