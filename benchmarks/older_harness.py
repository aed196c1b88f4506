"""The harness of an older commit, taken from this clone's git history, to run beside today's."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

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
