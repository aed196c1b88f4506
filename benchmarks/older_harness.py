"""The harness of an older commit, taken from this clone's git history, to run beside today's;
and a campaign of any tree's harness in a process of its own."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def tree_of(commit: str, into: Path) -> Path | None:
    """The tree of `commit`, extracted from this clone's git history into `into`; None (with the
    reason printed) when git or the commit is not there."""
    try:
        archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"  (no side-by-side run: cannot get {commit} from git: {error})")
        return None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def gradcheck_in(
    tree: Path, argv: Sequence[str], out: Path, env: Mapping[str, str] | None = None
) -> tuple[float, dict[str, Any]]:
    """`python -m gradcheck ARGV --out OUT` with `tree`'s harness (on PYTHONPATH, from `tree`) in a
    fresh process, `env` added to this one's: its wall seconds and the report.json it wrote. A
    run that exits otherwise than 0 or 1, or writes no report, raises with the end of its stderr."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck", *argv, "--out", str(out)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    report = out / "report.json"
    if done.returncode not in (0, 1) or not report.exists():
        raise RuntimeError(
            f"gradcheck {' '.join(argv)} on {tree} exited {done.returncode}: {done.stderr[-2000:]}"
        )
    return wall, json.loads(report.read_text())
