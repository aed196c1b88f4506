"""--scheduler: a campaign on a Dask cluster is the local campaign. Its report is `--jobs 1`'s for
the same seed (the run section aside), for a correct engine, an engine with an op bug and each
engine that attacks the harness; an engine that exits, crashes or hangs on the workers is a
finding there as locally, and leaves the workers as they were; every ending cancels the
campaign's tasks; the cluster's own faults (a worker lost, the scheduler gone, a worker without
the engine) are retried or one line with exit status 2. A scheduler and two single-threaded
workers run on 127.0.0.1, started by the tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcheck.campaign import cluster
from gradcheck.campaign.report_json import figures_only
from gradcheck.cli import main

pytestmark = pytest.mark.slow  # a cluster to start, and most campaigns run twice
distributed = pytest.importorskip("distributed", reason="--scheduler needs distributed (the cluster extra)")

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = "gradcheck.testing.hostile_engines:"
SMALL = ["--graphs", "6", "--seed", "3", "--points", "2", "--no-save"]
OP_BUG = "gradcheck.testing.kind_engines:ReluTimesTwo"  # relu's derivative is 2
NO_ISOLATION = ["--no-isolation"]
ON_THE_CLUSTER_ALONE = ["--no-isolation", "--no-structure", "--no-edges"]  # relu reaches the cluster


@pytest.fixture(scope="module")
def local_cluster():
    """A scheduler and two single-threaded worker processes (each under its nanny, as `dask
    worker` runs them) on this machine, and a client of the test's own to look at them."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as running,
        distributed.Client(running, set_as_default=False) as client,
    ):
        client.wait_for_workers(2, timeout=120)  # both registered: the tests compare the list
        yield running.scheduler_address, client


def workers(client) -> list[str]:
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


def busy_tasks(client) -> list:
    """The keys of the tasks any worker's threads are running (or still finishing, cancelled)."""
    return [key for keys in client.run(cluster.running_keys).values() for key in keys]


def report(out: Path) -> dict:
    """report.json but its run section, its own path (in the replay commands) as OUT."""
    return figures_only(json.loads((out / "report.json").read_text().replace(str(out), "OUT")))


def both(address, tmp_path, *argv) -> tuple[dict, dict]:
    """The reports of one campaign on the cluster and at --jobs 1 (each must end with exit 0 or 1)."""
    on_cluster = main(["run", *argv, "--scheduler", address, "--out", str(tmp_path / "cluster")])
    alone = main(["run", *argv, "--jobs", "1", "--out", str(tmp_path / "alone")])
    assert on_cluster == alone and on_cluster in (0, 1)
    return report(tmp_path / "cluster"), report(tmp_path / "alone")


@pytest.mark.supervised
@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--engine", "minigrad"], id="clean"),  # every phase
        pytest.param(  # shrinking and explaining on the cluster: isolation would find relu first
            ["--engine", OP_BUG, "--ops", "relu,add,mul", *NO_ISOLATION],
            id="op-bug",
        ),
    ],
)
def test_a_campaign_on_the_cluster_reports_what_jobs_1_reports(local_cluster, tmp_path, capsys, argv):
    address, client = local_cluster
    before = workers(client)
    on_cluster, alone = both(address, tmp_path, *argv, *SMALL)
    assert on_cluster == alone
    assert on_cluster["ops"] and (on_cluster["findings"] or on_cluster["passed"])
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())  # the header's panel, unwrapped
    assert f"random graphs on the Dask cluster at {address} (2 workers, 2 threads)" in out
    assert workers(client) == before


@pytest.mark.supervised
@pytest.mark.parametrize(
    ("engine", "timeout"),
    [
        ("ExitsInRelu", 60),
        ("EndsProcessInRelu", 60),
        ("SegfaultsInRelu", 60),
        ("HangsInRelu", 5),
        ("UnreadableRelu", 60),
    ],
)
def test_a_hostile_engine_gives_its_local_report_and_leaves_the_workers_as_they_were(
    local_cluster, tmp_path, engine, timeout
):
    """relu ends or hangs the engine's process, first in the op-isolation pass here (then it is
    quarantined on the cluster too), and the report is --jobs 1's."""
    address, client = local_cluster
    before = workers(client)
    argv = ["--engine", HOSTILE + engine, *SMALL, "--no-edges", "--no-structure"]
    argv += ["--graph-timeout", str(timeout)]
    on_cluster, alone = both(address, tmp_path, *argv)
    assert on_cluster == alone
    assert not on_cluster["passed"] and any("relu" in f["ops"] for f in on_cluster["findings"])
    assert workers(client) == before, "a Dask worker was restarted"
    assert busy_tasks(client) == []


def _deaths(findings: list[dict]) -> list[tuple]:
    return [(f["title"], f["kind"], f["tier"], f["graph_indices"]) for f in findings]


@pytest.mark.supervised
@pytest.mark.parametrize(
    ("engine", "timeout", "title"),
    [
        ("EndsProcessInRelu", 60, r"relu — ended the engine's process: ended the process \(os\._exit\(3\)"),
        ("HangsInRelu", 5, r"relu — timeout: gave no answer within 5 s \(--graph-timeout\)"),
    ],
)
def test_an_engine_that_ends_or_hangs_its_process_on_a_worker_is_a_finding_and_the_worker_lives_on(
    local_cluster, tmp_path, engine, timeout, title
):
    """Only the random graphs, on the cluster: relu ends the supervised child there, never the Dask
    worker; the finding is --jobs 1's (whether a graph with relu ran or was skipped depends on which
    worker met relu first, as at --jobs 2); a correct campaign right after runs as ever."""
    address, client = local_cluster
    before = workers(client)
    argv = ["--engine", HOSTILE + engine, *SMALL, *ON_THE_CLUSTER_ALONE, "--graph-timeout", str(timeout)]
    on_cluster, alone = both(address, tmp_path, *argv)
    assert _deaths(on_cluster["findings"]) == _deaths(alone["findings"])
    assert re.match(title, on_cluster["findings"][0]["title"]), on_cluster["findings"][0]["title"]
    assert on_cluster["totals"] == alone["totals"]
    assert workers(client) == before, "a Dask worker was restarted"
    argv = ["run", "--engine", HOSTILE + "Benign", *SMALL, *ON_THE_CLUSTER_ALONE, "--scheduler", address]
    assert main([*argv, "--out", str(tmp_path / "after")]) == 0
    assert busy_tasks(client) == []


def _gradcheck(tmp_path: Path, *argv: str) -> subprocess.Popen:
    """`gradcheck run` started with Ctrl-C at its default, as a terminal's foreground job has it:
    a shell's background job (`cmd &` without job control) inherits SIGINT ignored, and a Python
    started so keeps ignoring it. A handler of ours becomes the default in the child (exec)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "gradcheck", "run", *argv, "--out", str(tmp_path / "signalled")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous)


def _when_running_on(client, proc: subprocess.Popen, seconds: float = 120) -> None:
    """Wait until `proc`'s campaign has tasks running on the workers."""
    deadline = time.monotonic() + seconds
    while not any(str(k).startswith("gradcheck-") for k in busy_tasks(client)):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the campaign never reached the cluster"
        time.sleep(0.2)


@pytest.mark.supervised
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_cancels_every_task_of_the_campaign_on_the_cluster(local_cluster, tmp_path, signum, status):
    """A campaign stopped while its tasks hang on the workers (no timeout before 10 minutes) ends
    at the first signal, and leaves no task running there."""
    address, client = local_cluster
    before = workers(client)
    argv = ["--engine", HOSTILE + "HangsInRelu", "--graphs", "40", *ON_THE_CLUSTER_ALONE, "--no-save"]
    proc = _gradcheck(tmp_path, *argv, "--graph-timeout", "600", "--scheduler", address)
    _when_running_on(client, proc)
    time.sleep(1.0)  # relu reached: the children hang
    if signum == signal.SIGINT:  # Ctrl-C: to the whole process group, as a terminal sends it
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err
    assert busy_tasks(client) == []
    assert workers(client) == before


@pytest.mark.supervised
def test_a_worker_lost_by_its_own_fault_is_retried_elsewhere_and_the_report_is_unchanged(
    local_cluster, tmp_path
):
    """The machine of a worker stops (its process killed): Dask sends its tasks to the other worker."""
    address, client = local_cluster
    argv = ["--engine", HOSTILE + "Benign", "--graphs", "60", "--seed", "3", *ON_THE_CLUSTER_ALONE]
    argv += ["--points", "2", "--no-save"]
    proc = _gradcheck(tmp_path, *argv, "--scheduler", address)
    _when_running_on(client, proc)
    busy = [worker for worker, keys in client.run(cluster.running_keys).items() if keys]
    victim = client.run(os.getpid, workers=busy[:1])[busy[0]]
    os.kill(victim, signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert main(["run", *argv, "--jobs", "1", "--out", str(tmp_path / "alone")]) == 0
    assert report(tmp_path / "signalled") == report(tmp_path / "alone")
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the tests after


def test_workers_without_the_engines_module_are_bad_input_naming_module_and_worker(
    local_cluster, tmp_path, monkeypatch, capsys
):
    """An engine this machine imports from a folder the workers do not have on their path."""
    address, client = local_cluster
    (tmp_path / "only_here.py").write_text("from gradcheck.engines.minigrad_value import MinigradValue\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["run", "--engine", "only_here:MinigradValue", *SMALL, "--scheduler", address]
    status = main([*argv, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2
    worker = re.escape(workers(client)[0])
    assert re.fullmatch(
        rf"gradcheck: error: engine 'only_here:MinigradValue': the Dask worker {worker} cannot find "
        r"'only_here' .*\n",
        err,
    ), err
    assert not (tmp_path / "o" / "report.json").exists(), "refused before any graph"


def _dask(tmp_path: Path, *argv: str) -> subprocess.Popen:
    """`dask ARGV` in a session of its own, quiet."""
    return subprocess.Popen(
        [sys.executable, "-m", "dask", *argv],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.mark.supervised
def test_a_scheduler_gone_mid_run_ends_with_one_line_and_a_report_marked_incomplete(tmp_path):
    """A cluster of its own (`dask scheduler`, `dask worker`), whose scheduler is killed while the
    campaign's tasks run."""
    file = tmp_path / "scheduler.json"
    at = ["--scheduler-file", str(file), "--no-dashboard"]  # the client waits for the file
    scheduler = _dask(tmp_path, "scheduler", "--host", "127.0.0.1", "--port", "0", *at)
    worker = _dask(tmp_path, "worker", "--nthreads", "1", *at)
    try:
        with distributed.Client(scheduler_file=str(file), timeout="60s", set_as_default=False) as client:
            client.wait_for_workers(1, timeout=120)
            address = client.scheduler.address
            argv = ["--engine", HOSTILE + "Benign", "--graphs", "4000", *ON_THE_CLUSTER_ALONE, "--no-save"]
            proc = _gradcheck(tmp_path, *argv, "--scheduler", address)
            _when_running_on(client, proc)
        scheduler.kill()
        _, err = proc.communicate(timeout=120)
    finally:
        for started in (scheduler, worker):  # the test's own clean-up, by process group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(started.pid, signal.SIGKILL)
            started.wait()
    assert proc.returncode == 2, err
    (line,) = err.strip().splitlines()
    assert re.fullmatch(
        rf"gradcheck: error: lost the Dask scheduler at {re.escape(address)} mid-run, after \d+ of 4000 "
        r"graphs; partial reports, marked incomplete: .*report\.json",
        line,
    ), line
    written = json.loads((tmp_path / "signalled" / "report.json").read_text())
    assert written["incomplete"].startswith(f"lost the Dask scheduler at {address} mid-run")
    assert written["passed"] is False and written["totals"]["graphs"] < 4000
    assert "INCOMPLETE" in (tmp_path / "signalled" / "report.html").read_text()


def test_an_unreachable_scheduler_is_bad_input_naming_the_address(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    argv = ["run", "--engine", "minigrad", *SMALL, "--scheduler", "tcp://127.0.0.1:9"]
    status = main([*argv, "--out", str(tmp_path)])
    assert status == 2
    assert "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in capsys.readouterr().err
