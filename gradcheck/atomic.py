"""Atomic file writes: a temporary file beside the target, flushed, then renamed over it.

A full disk, Ctrl-C or a crash mid-write leaves the previous file (or none), never a truncated
one: the rename is the only step that changes what the target's name points to. The file gets
the permissions an ordinary write would give it (0666 less the umask), not the temporary file's
0600: a CI step running as another user reads the reports.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_text(path: Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically; the directory must exist. Returns `path`."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
