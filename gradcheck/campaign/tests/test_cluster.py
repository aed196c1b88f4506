"""--scheduler: a campaign on a Dask cluster gives the figures of a one-process run of the same seed."""

from __future__ import annotations

import json

import pytest

from gradcheck.campaign import cluster
from gradcheck.campaign.report_json import figures_only
from gradcheck.cli import main

distributed = pytest.importorskip("distributed")

RUN = ["run", "--engine", "minigrad", "--graphs", "24", "--seed", "5", "--points", "2", "--no-save"]


@pytest.fixture(scope="module")
def local_cluster():
    """A scheduler and two single-threaded worker processes on this machine (127.0.0.1 only)."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as running:
        yield running.scheduler_address


def _figures(out):
    return figures_only(json.loads((out / "report.json").read_text()))


def test_a_campaign_on_a_dask_cluster_reports_the_figures_of_jobs_1(local_cluster, tmp_path):
    assert main([*RUN, "--scheduler", local_cluster, "--out", str(tmp_path / "dask")]) == 0
    assert main([*RUN, "--jobs", "1", "--out", str(tmp_path / "one")]) == 0
    on_cluster, alone = _figures(tmp_path / "dask"), _figures(tmp_path / "one")
    assert on_cluster == alone
    assert on_cluster["ops"], "the report has per-op figures to compare"


def test_an_unreachable_scheduler_is_bad_input_naming_the_address(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    status = main([*RUN, "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)])
    assert status == 2
    assert "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in capsys.readouterr().err
