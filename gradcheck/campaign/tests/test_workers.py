"""--jobs is capped at the CPUs this process may use, and no more workers start than work items."""

from __future__ import annotations

import pytest

from gradcheck.campaign import workers
from gradcheck.cli import main


@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def test_the_available_cpus_follow_the_affinity_mask(two_cpus):
    assert workers.available_cpus() == 2


def test_without_an_affinity_mask_the_cpu_count_is_used(monkeypatch):
    monkeypatch.delattr(workers.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 3)
    assert workers.available_cpus() == 3
    monkeypatch.setattr(workers.os, "cpu_count", lambda: None)
    assert workers.available_cpus() == 1


@pytest.mark.parametrize(("asked", "used"), [(1, 1), (2, 2)])
def test_jobs_up_to_the_cpus_are_kept_without_a_note(two_cpus, asked, used):
    assert workers.capped_jobs(asked) == (used, None)


def test_more_jobs_than_cpus_are_lowered_with_a_note(two_cpus):
    jobs, note = workers.capped_jobs(1000)
    assert jobs == 2
    assert note == "note: --jobs 1000 lowered to 2, the number of CPUs this process may use"


@pytest.mark.parametrize(("jobs", "items", "started"), [(2, 6, 2), (1000, 6, 2), (2, 1, 1), (8, 0, 1)])
def test_never_more_workers_than_jobs_cpus_or_items(two_cpus, jobs, items, started):
    assert workers.worker_count(jobs, items) == started


def test_the_cli_lowers_jobs_to_the_cpus_and_says_so(two_cpus, tmp_path, capsys):
    argv = ["run", "--graphs", "3", "--jobs", "1000", "--no-save", "--out", str(tmp_path)]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "gradcheck: note: --jobs 1000 lowered to 2" in err
    assert "seed 0, 2 job(s)" in " ".join(out.replace("│", " ").split())
