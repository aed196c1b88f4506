"""bench_commands times whole commands and prints them as a table beside the floor and a baseline
revision (run once here, cheaply, for the table's shape: no timed asserts)."""

from __future__ import annotations

import subprocess

from bench_scripts import script

bench_commands = script("bench_commands")


def rows(lines: list[str]) -> dict[str, list[str]]:
    return {
        cells[0]: cells for line in lines[2:] if (cells := [c.strip() for c in line.strip("|").split("|")])
    }


def test_the_table_has_each_command_with_its_cpu_and_wall_seconds_and_ratios_to_the_floor(capsys):
    lines = bench_commands.main(
        ["--quick", "--repeats", "1", "--baseline", "none", "--only", "floor,help,one-graph"]
    )
    assert lines[0] == "| command | CPU s | wall s | CPU / floor | wall / floor |"
    table = rows(lines)
    assert list(table) == ["floor", "help", "one-graph"]
    assert table["floor"][3:] == ["1.00x", "1.00x"]
    for cells in table.values():
        assert len(cells) == 5 and float(cells[1]) > 0 and float(cells[2]) > 0
    assert "load average after" in capsys.readouterr().out


def test_a_baseline_revision_runs_from_a_worktree_that_is_removed_afterwards():
    before = subprocess.run(
        ["git", "worktree", "list"], cwd=bench_commands.ROOT, capture_output=True, text=True
    )
    lines = bench_commands.main(["--quick", "--repeats", "1", "--baseline", "HEAD", "--only", "help"])
    assert lines[0].endswith("| HEAD CPU s | HEAD wall s | CPU vs base | wall vs base |")
    (cells,) = rows(lines).values()
    assert cells[0] == "help" and len(cells) == 9 and cells[3] == ""  # no floor asked for
    after = subprocess.run(
        ["git", "worktree", "list"], cwd=bench_commands.ROOT, capture_output=True, text=True
    )
    assert after.stdout == before.stdout
