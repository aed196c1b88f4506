"""Reports and corpus files are written atomically: a failed write leaves the previous file."""

import errno
import json
import os

import pytest

from gradcheck import atomic
from gradcheck.campaign.report_json import write_report
from gradcheck.graphs import corpus


@pytest.fixture
def full_disk(monkeypatch):
    """Every write fails halfway, as on a full disk (ENOSPC) after part of the text is out."""

    real_fdopen = os.fdopen

    class HalfWriter:
        def __init__(self, handle):
            self.handle = handle

        def write(self, text):
            self.handle.write(text[: len(text) // 2])
            self.handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.handle, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    monkeypatch.setattr(atomic.os, "fdopen", lambda *a, **k: HalfWriter(real_fdopen(*a, **k)))


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path, full_disk):
    path = tmp_path / "report.json"
    path.write_text("previous\n")
    with pytest.raises(OSError, match="No space left"):
        atomic.write_text(path, "new and longer text\n" * 1000)
    assert path.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_failed_report_write_leaves_no_truncated_report(tmp_path, full_disk):
    with pytest.raises(OSError):
        write_report({"tool": "gradcheck", "big": list(range(10_000))}, tmp_path / "report.json")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_corpus_write_leaves_no_empty_corpus_file(tmp_path, full_disk):
    with pytest.raises(OSError):
        corpus.write({"format": "minigrad-graph", "version": 1}, tmp_path / "corpus" / "g.json")
    assert list((tmp_path / "corpus").iterdir()) == []


def test_a_successful_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    atomic.write_text(path, json.dumps({"new": True}))
    assert json.loads(path.read_text()) == {"new": True}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_written_file_follows_the_umask_like_an_ordinary_write(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        path = atomic.write_text(tmp_path / "report.json", "{}\n")
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == mode
