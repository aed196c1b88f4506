"""A bad flag of `gradcheck run` is answered with `run`'s usage, not the top-level one."""

from __future__ import annotations

import pytest

from gradcheck.cli import main


def test_an_unknown_flag_of_run_shows_runs_usage_and_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--bogusflag"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: gradcheck run [-h] [--graphs GRAPHS]")
    assert "gradcheck run: error: unrecognized arguments: --bogusflag" in err
    assert "(see `gradcheck run --help`)" in err


def test_an_unknown_flag_before_the_subcommand_still_gets_the_top_level_usage(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--bogusflag", "run"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("usage: gradcheck [-h]")


@pytest.mark.parametrize("command", [["run"], ["gate"], ["replay"], ["corpus", "add"]])
def test_each_commands_help_gives_every_exit_status(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for status in ("Exit status: 0 ", "; 1 ", "; 2 bad input", "130 interrupted", "143 terminated"):
        assert status in text


def test_max_shrink_is_refused_with_what_replaced_it(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--max-shrink", "10"])
    assert exit_info.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--max-shrink was replaced by --shrink-budget CHECKS" in err


@pytest.mark.parametrize("budget", ["-1", "soon", "inf", "10.5"])
def test_a_shrink_budget_is_a_whole_number_of_candidate_checks(capsys, budget):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--shrink-budget", budget])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --shrink-budget: expected a whole number of candidate checks" in err
    if budget == "10.5":  # it counted seconds before: the message says what it counts now
        assert "not in seconds" in err


@pytest.mark.parametrize("command", ["gate", "run"])
def test_help_names_every_way_to_name_an_engine(capsys, monkeypatch, command):
    monkeypatch.setenv("COLUMNS", "200")  # no name split at a hyphen
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    engine = text.split("options:", 1)[1].split("--engine ENGINE ", 1)[1].split(" --", 1)[0]
    for name in ("module:Adapter", "path/engine.py:Class", "micrograd-style value class"):
        assert name in engine
