"""A run's report directory (`gradcheck run --out`): checked before the campaign, refused while
another live run writes there, cleaned of what a killed run left, and the run id its reports carry.

- Two runs on one `--out` would leave report.json of one beside report.html of the other: the
  directory is locked (`fcntl.flock` on the directory itself, released by the kernel when the run
  ends, however it ends), and a second run is refused with exit status 2 while the first lives.
- A run killed mid-write (SIGKILL) leaves `.report.json.<random>.tmp`: the next run holding the
  lock removes such files, which no live run can be writing.
- report.json and report.html carry the run's id (`run.run_id`; the page shows it) and are
  swapped in together (`gradcheck.atomic.write_files`), so a pair always belongs to one run.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gradcheck.atomic import stale_temporaries, write_files
from gradcheck.campaign.report_html import render_html
from gradcheck.campaign.report_json import report_text
from gradcheck.campaign.settings import CampaignError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, the rest holds
    fcntl = None  # type: ignore[assignment]

MIN_FREE = 2**20  # bytes: a filesystem with less is full (a report.html alone takes a few hundred KB)
REPORTS = ("report.json", "report.html")


def new_run_id() -> str:
    """A run's id: when it started (UTC) and 6 random hex digits, e.g. 20261126T101500Z-3fa2c1."""
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


class ReportDirectory:
    """`--out` for the length of a run: made if missing, checked writable, locked, cleaned."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.run_id = new_run_id()
        self._lock: int | None = None

    def __enter__(self) -> ReportDirectory:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CampaignError(
                f"cannot create the report directory --out {self.path}: {exc.strerror or exc}"
            ) from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise CampaignError(f"cannot write reports to --out {self.path}: permission denied")
        check_free_space(self.path, "--out")
        self._lock = _lock(self.path)
        for stale in stale_temporaries(self.path, REPORTS):
            with contextlib.suppress(OSError):
                stale.unlink()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            os.close(self._lock)  # the lock goes with the descriptor
            self._lock = None


def check_free_space(directory: Path, what: str) -> None:
    """CampaignError when `directory`'s filesystem is full (under `MIN_FREE` bytes free): found
    before the campaign, not when its reports are written."""
    try:
        stats = os.statvfs(directory)
    except (AttributeError, OSError):  # no statvfs (Windows): the writes will tell
        return
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE:
        raise CampaignError(f"cannot write to {what} {directory}: its filesystem is full ({free} bytes free)")


def _lock(directory: Path) -> int | None:
    """Hold `directory`'s lock (flock on the directory itself: no file left in it) for this
    process; CampaignError when another live process holds it."""
    if fcntl is None or not hasattr(os, "O_DIRECTORY"):  # pragma: no cover
        return None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise CampaignError(f"cannot open the report directory {directory}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise CampaignError(
            f"--out {directory} is in use by another gradcheck run, still running; wait for it to "
            "finish or give another --out"
        ) from None
    return fd


def write_report_pair(report: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """report.json and report.html of `report` into `directory`, swapped in together."""
    json_path, html_path = directory / REPORTS[0], directory / REPORTS[1]
    write_files({json_path: report_text(report), html_path: render_html(report)})
    return json_path, html_path
