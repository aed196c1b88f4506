"""What a run reads and writes: unusable paths are refused before the campaign in one line (exit 2),
an --out another live run uses is refused, a killed run's temporary files are cleaned, and the two
reports of one run carry its run id."""

from __future__ import annotations

import fcntl
import json
import os

import pytest

from gradcheck.cli import main

QUICK = ["run", "--graphs", "3", "--no-save", "--no-edges", "--no-structure", "--no-isolation"]


def one_error(capsys) -> str:
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "checking graphs" not in out, "refused before the campaign"
    (line,) = err.strip().splitlines()
    return line


@pytest.mark.parametrize("option", ["--junit-xml", "--summary-md"])
def test_a_directory_where_a_report_file_is_wanted_is_refused_before_the_campaign(option, tmp_path, capsys):
    assert main([*QUICK, "--out", str(tmp_path / "o"), option, str(tmp_path)]) == 2
    assert one_error(capsys) == f"gradcheck: error: cannot write {tmp_path}: it is a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere: no path is read-only to it")
def test_a_read_only_directory_is_refused_before_the_campaign(tmp_path, capsys):
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o555)
    assert main([*QUICK, "--out", str(tmp_path / "o"), "--junit-xml", str(locked / "j.xml")]) == 2
    assert one_error(capsys).endswith(f"its directory {locked} is not writable")


def test_an_out_directory_in_use_by_a_live_run_is_refused(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    held = os.open(out, os.O_RDONLY)  # what a running `gradcheck run --out o` holds
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main([*QUICK, "--out", str(out)]) == 2
    finally:
        os.close(held)
    assert one_error(capsys) == (
        f"gradcheck: error: --out {out} is in use by another gradcheck run, still running; wait for "
        "it to finish or give another --out"
    )
    assert main([*QUICK, "--out", str(out)]) == 0, "free again once that run is gone"


def test_a_killed_runs_temporary_files_are_cleaned_and_both_reports_carry_the_run_id(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    stale = [out / ".report.json.k1ll3d.tmp", out / ".report.html.k1ll3d.tmp"]
    for path in stale:
        path.write_text("half a report")
    assert main([*QUICK, "--out", str(out)]) == 0
    assert not any(path.exists() for path in stale)
    run_id = json.loads((out / "report.json").read_text())["run"]["run_id"]
    assert run_id and f'<code id="run-id">{run_id}</code>' in (out / "report.html").read_text()
    assert main([*QUICK, "--out", str(out)]) == 0
    assert json.loads((out / "report.json").read_text())["run"]["run_id"] != run_id, "one id per run"


def test_a_baseline_nested_100000_levels_deep_is_one_line(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    baseline.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["gate", "--engine", "minigrad", "--baseline", str(baseline)]) == 2
    assert one_error(capsys) == f"gradcheck: error: {baseline}: the baseline is nested deeper than 64 levels"


def test_the_gate_names_an_unknown_engine_before_comparing_settings(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    gate = ["gate", "--graphs", "30", "--baseline", str(baseline), "--engine"]
    assert main([*gate, "minigrad", "--update-baseline"]) == 0
    capsys.readouterr()
    assert main([*gate, "nosuch"]) == 2
    assert one_error(capsys).startswith("gradcheck: error: unknown engine 'nosuch'")


def test_replay_takes_a_finding_index_from_0(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["replay", str(tmp_path / "report.json"), "--finding", "-1"])
    assert exited.value.code == 2
    assert "expected an index from 0 (0 is the first), got -1" in capsys.readouterr().err


def test_a_full_filesystem_is_refused_before_the_campaign(tmp_path, monkeypatch, capsys):
    real = os.statvfs
    full = lambda path: os.statvfs_result((*real(path)[:4], 0, *real(path)[5:]))  # no block free
    monkeypatch.setattr(os, "statvfs", full)
    assert main([*QUICK, "--out", str(tmp_path / "o")]) == 2
    assert (
        one_error(capsys)
        == f"gradcheck: error: cannot write to --out {tmp_path / 'o'}: its filesystem is full (0 bytes free)"
    )
