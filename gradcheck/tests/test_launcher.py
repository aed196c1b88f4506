"""Printed commands start gradcheck the way that works here: the console
script by the name or path that ran, else this very interpreter, never a bare `python` that may
be another one."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from gradcheck.launcher import command_line, launcher


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A system python on PATH, a project with a virtual environment whose python links to it."""
    system = executable(tmp_path / "usr" / "bin" / "python")
    project = tmp_path / "project"
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(system)
    executable(venv / "gradcheck")
    monkeypatch.setenv("PATH", str(system.parent))
    return project


def test_the_console_script_is_named_when_path_finds_that_very_script(machine, monkeypatch):
    monkeypatch.setenv("PATH", str(machine / ".venv" / "bin"))
    script = str(machine / ".venv" / "bin" / "gradcheck")
    assert launcher(script, "/unused", str(machine)) == ["gradcheck"]


def test_the_console_script_run_by_its_path_is_printed_by_that_path(machine):
    assert launcher(".venv/bin/gradcheck", "/unused", str(machine)) == [".venv/bin/gradcheck"]
    elsewhere = str(machine.parent / "elsewhere")
    assert launcher(str(machine / ".venv/bin/gradcheck"), "/unused", elsewhere) == [
        str(machine / ".venv" / "bin" / "gradcheck")
    ]


def test_a_virtual_environments_python_is_named_by_its_path_even_when_it_links_to_paths_python(machine):
    venv_python = str(machine / ".venv" / "bin" / "python")
    module = str(machine / "src" / "gradcheck" / "__main__.py")
    assert launcher(module, venv_python, str(machine)) == [".venv/bin/python", "-m", "gradcheck"]
    elsewhere = str(machine.parent / "elsewhere")
    assert launcher(module, venv_python, elsewhere) == [venv_python, "-m", "gradcheck"]


def test_python_is_printed_only_when_path_finds_this_interpreter(machine, tmp_path):
    system = str(tmp_path / "usr" / "bin" / "python")
    assert launcher("-c", system, str(machine)) == ["python", "-m", "gradcheck"]


def test_a_command_line_is_quoted_to_paste_as_one_command(monkeypatch):
    monkeypatch.setattr("gradcheck.launcher.launcher", lambda: [".venv/bin/python", "-m", "gradcheck"])
    line = command_line("replay", "my out/report.json", "--finding", "0", pythonpath="/engines dir")
    assert (
        line
        == "PYTHONPATH='/engines dir' .venv/bin/python -m gradcheck replay 'my out/report.json' --finding 0"
    )
    assert shlex.split(line)[1:] == [
        ".venv/bin/python",
        "-m",
        "gradcheck",
        "replay",
        "my out/report.json",
        "--finding",
        "0",
    ]
