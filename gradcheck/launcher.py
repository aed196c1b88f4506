"""How to start gradcheck again, as this process was started: every command the harness prints
(replay a finding, repeat a run, add to the corpus) must work when it is pasted into a shell.

`gradcheck ...` when this process is the console script that PATH finds, the script's path when
it was started by its path, otherwise `PYTHON -m gradcheck ...` with the interpreter running now,
named as a shell reaches it: `python` (or `python3`) when that is this interpreter on PATH, its
path under the current directory (`.venv/bin/python`), else its absolute path. A bare `python`
is never printed for another interpreter: it may lack gradcheck, torch or the engine.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

# The console script's name (pyproject.toml's [project.scripts]).
SCRIPT = "gradcheck"


def launcher(argv0: str | None = None, executable: str | None = None, cwd: str | None = None) -> list[str]:
    """The words that start gradcheck the way this process was started (the arguments default to
    `sys.argv[0]`, `sys.executable` and the current directory)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable
    cwd = os.getcwd() if cwd is None else cwd
    if _is_console_script(argv0):
        return [_as_typed(argv0, SCRIPT, cwd)]
    if not executable:
        return ["python", "-m", "gradcheck"]
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found is not None and _same_path(found, executable, cwd):
            return [name, "-m", "gradcheck"]
    return [_short_path(executable, cwd), "-m", "gradcheck"]


def command_line(*args: str, pythonpath: str | None = None) -> str:
    """A shell command running gradcheck with `args`, quoted to paste as one line; `pythonpath`:
    a folder the engine's module imports from, put in front as `PYTHONPATH=... `."""
    prefix = f"PYTHONPATH={shlex.quote(pythonpath)} " if pythonpath else ""
    return prefix + shlex.join([*launcher(), *args])


def _is_console_script(argv0: str) -> bool:
    name = os.path.basename(argv0).lower()
    return name in (SCRIPT, f"{SCRIPT}.exe", f"{SCRIPT}-script.py")


def _as_typed(path: str, name: str, cwd: str) -> str:
    """The console script as a shell reaches it: its name when PATH finds this very file."""
    found = shutil.which(name)
    if found is not None and _same_path(found, path, cwd):
        return name
    return _short_path(path, cwd)


def _same_path(a: str, b: str, cwd: str) -> bool:
    """Whether two paths name the same file, without following symlinks: a virtual environment's
    `python` links to the system's, which has other packages."""
    return os.path.normpath(os.path.join(cwd, a)) == os.path.normpath(os.path.join(cwd, b))


def _short_path(path: str, cwd: str) -> str:
    """`path` relative to `cwd` when it lies under it (`.venv/bin/python`), else absolute."""
    absolute = os.path.normpath(os.path.join(cwd, path))
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive (Windows)
        return absolute
    if relative.startswith(os.pardir):
        return absolute
    return relative if os.sep in relative else os.path.join(os.curdir, relative)


__all__ = ["command_line", "launcher"]
