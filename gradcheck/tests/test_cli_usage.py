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
