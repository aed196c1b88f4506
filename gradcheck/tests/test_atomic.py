"""Reports and corpus files are written atomically: a failed write leaves the previous file, and
the command line says which file and why in one line (exit status 2)."""

import errno
import json
import os
import subprocess
import sys

import pytest

from gradcheck import atomic
from gradcheck.campaign.report_json import write_report
from gradcheck.cli import main
from gradcheck.graphs import corpus_format
from gradcheck.graphs.ir import Graph, Input, OpNode


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
        corpus_format.write({"format": "minigrad-graph", "version": 1}, tmp_path / "corpus" / "g.json")
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


def test_several_files_are_swapped_in_together_or_not_at_all(tmp_path, monkeypatch):
    first, second = tmp_path / "report.json", tmp_path / "report.html"
    first.write_text("old json")
    second.write_text("old html")
    real_replace = os.replace

    def replace(source, target):
        if str(target).endswith(".html"):
            raise OSError(errno.EACCES, "Permission denied")
        real_replace(source, target)

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(atomic.WriteError, match=f"cannot write {second}: Permission denied"):
        atomic.write_files({first: "new json", second: "new html"})
    assert second.read_text() == "old html"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.json"], "no temporary"


# --- the command line on a full disk: exit 2 and one line naming the file ------------------------


def error_lines(capsys) -> list[str]:
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return err.strip().splitlines()


def test_a_full_disk_when_the_reports_are_written_is_exit_2_in_one_line(tmp_path, full_disk, capsys):
    assert main(["run", "--graphs", "3", "--no-save", "--no-edges", "--out", str(tmp_path)]) == 2
    assert error_lines(capsys) == [
        f"gradcheck: error: cannot write {tmp_path / 'report.json'}: No space left on device"
    ]
    assert not list(tmp_path.glob("report.*")) and not list(tmp_path.glob(".report.*"))


def test_recording_a_baseline_on_a_full_disk_is_exit_2_in_one_line(tmp_path, full_disk, capsys):
    baseline = tmp_path / "baseline.json"
    record = ["gate", "--engine", "minigrad", "--graphs", "30", "--update-baseline", "--baseline"]
    assert main([*record, str(baseline)]) == 2
    assert error_lines(capsys)[-1] == f"gradcheck: error: cannot write {baseline}: No space left on device"


def test_adding_to_a_corpus_on_a_full_disk_is_exit_2_in_one_line(tmp_path, full_disk, capsys):
    graph = tmp_path / "g.json"
    graph.write_text(Graph([Input("x", 0.5)], [OpNode("relu", (0,), ())], [1]).to_json())
    (tmp_path / "corpus").mkdir()
    assert main(["corpus", "add", str(graph), "--to", str(tmp_path / "corpus")]) == 2
    (line,) = error_lines(capsys)
    assert line.startswith(f"gradcheck: error: cannot write {tmp_path / 'corpus'}/")
    assert line.endswith(": No space left on device")


def test_a_file_size_limit_of_the_operating_system_is_exit_2_in_one_line(tmp_path):
    """Not a simulated failure: the kernel refuses the write (RLIMIT_FSIZE, as a quota would)."""
    resource = pytest.importorskip("resource")
    graph = Graph([Input(f"x{i}", 0.5) for i in range(300)], [OpNode("relu", (0,), ())], [300])
    (tmp_path / "g.json").write_text(graph.to_json())
    (tmp_path / "corpus").mkdir()
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck", "corpus", "add", "g.json", "--to", "corpus"],
        cwd=tmp_path,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("gradcheck: error: cannot write corpus/") and line.endswith("File too large")
