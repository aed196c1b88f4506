"""Atomic file writes: a temporary file beside the target, flushed, then renamed over it.

A full disk, Ctrl-C or a crash mid-write leaves the previous file (or none), never a truncated
one: the rename is the only step that changes what the target's name points to. The file gets
the permissions an ordinary write would give it (0666 less the umask), not the temporary file's
0600: a CI step running as another user reads the reports. A write that fails raises
`WriteError`, which names the file and the reason in one line (the command line's exit status 2).

`write_files` writes several files as one: every temporary file first, then the renames one
after another with SIGINT and SIGTERM held back, so an interrupt never leaves one file of this
run beside another of the previous run. Temporary files are named `.NAME.<random>.tmp`
(`TEMPORARY`): what a run killed with SIGKILL leaves behind, `stale_temporaries` finds.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from gradcheck.interrupts import signals_held

TEMPORARY = ".{name}.*.tmp"  # the glob of a target's temporary files


class WriteError(OSError):
    """A file that could not be written: its path and the operating system's reason."""

    def __init__(self, path: Path, reason: OSError) -> None:
        super().__init__(reason.errno, reason.strerror or str(reason), str(path))

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def write_text(path: Path, text: str) -> Path:
    """Write `text` (UTF-8) to `path` atomically; the directory must exist. Returns `path`."""
    write_files({Path(path): text})
    return Path(path)


def write_files(texts: Mapping[Path, str]) -> list[Path]:
    """Write each text to its path (UTF-8), all or none: the renames happen together at the end."""
    staged: list[tuple[Path, str]] = []
    try:
        for path, text in texts.items():
            staged.append((Path(path), _staged(Path(path), text)))
        with signals_held():
            for path, temporary in staged:
                try:
                    os.replace(temporary, path)
                except OSError as exc:
                    raise WriteError(path, exc) from None
    finally:
        for _, temporary in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return [path for path, _ in staged]


def _staged(path: Path, text: str) -> str:
    """`text` in a temporary file beside `path`, flushed to disk; its name."""
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(path, exc) from None
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise WriteError(path, exc) from None
        raise
    return temporary


def stale_temporaries(directory: Path, names: tuple[str, ...]) -> list[Path]:
    """Temporary files of `names` in `directory` (left by a run that was killed mid-write)."""
    found: list[Path] = []
    for name in names:
        found += sorted(Path(directory).glob(TEMPORARY.format(name=name)))
    return found


def current_umask() -> int:
    """The process's umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
