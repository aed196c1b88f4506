"""Atomic file writes: a temporary file beside the target, flushed, then renamed over it.

A full disk, Ctrl-C or a crash mid-write leaves the previous file (or none), never a truncated
one: the rename is the only step that changes what the target's name points to.
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
