"""Work runs in watched worker processes: results come back in order however it was split, a unit
that ends its worker or hangs is reported as that unit's death while the rest of its work runs on a
fresh worker, and no worker outlives its supervisor."""

from __future__ import annotations

import multiprocessing
from dataclasses import replace
from unittest.mock import ANY

import pytest

from gradcheck.campaign.crashes import death_finding
from gradcheck.campaign.overview import finding_code
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.pool import Backend, Campaign, check_chunk, ordered
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.supervisor import Death, Supervisor, Work, works_of
from gradcheck.testing.hostile_engines import NoEngine, SlowToLoad, echo, ends_on, hangs_on, slow_checker

HOSTILE = "gradcheck.testing.hostile_engines:"


def never(unit, death: Death):
    raise AssertionError(f"unit {unit} died: {death}")


def dead(unit, death: Death):
    return ("dead", unit, death.kind, death.reason)


def test_results_come_back_in_unit_order_from_every_worker_and_none_outlives_the_supervisor():
    with Supervisor(jobs=2, timeout=60) as workers:
        results = ordered(workers.map(echo, NoEngine(), works_of(list(range(10)), 3), never))
        started = len(workers.workers)
    assert [unit for unit, _ in results] == list(range(10))
    assert started == 2 and len({pid for _, pid in results}) <= 2
    assert multiprocessing.active_children() == []


def test_no_more_workers_start_than_there_is_work():
    with Supervisor(jobs=2, timeout=60) as workers:
        assert ordered(workers.map(echo, NoEngine(), [Work((7,))], never))[0][0] == 7
        assert len(workers.workers) == 1


def test_a_unit_that_ends_its_worker_is_its_death_and_the_rest_runs_on_a_fresh_worker():
    with Supervisor(jobs=1, timeout=60) as workers:
        results = ordered(workers.map(ends_on, NoEngine(), [Work((0, 1, 2, 3), extra=2)], dead))
        assert workers.deaths == 1
    assert results == [0, 1, ("dead", 2, "crash", "ended the process (os._exit(3) or exit status 3)"), 3]


def test_a_unit_that_hangs_is_a_timeout_and_its_worker_is_killed():
    with Supervisor(jobs=1, timeout=1.0) as workers:
        results = ordered(workers.map(hangs_on, NoEngine(), [Work((0, 1, 2), extra=1)], dead))
    assert results[1] == ("dead", 1, "timeout", "gave no answer within 1 s (--graph-timeout)")
    assert results[0] == 0 and results[2] == 2
    assert multiprocessing.active_children() == []


def test_loading_the_engine_and_making_the_checker_are_not_a_graphs_time():
    """A new worker loads the engine (and torch) and makes its checker before the first graph: on a
    busy machine that may take longer than --graph-timeout, which is each graph's."""
    with Supervisor(jobs=1, timeout=1.0) as workers:
        assert ordered(workers.map(echo, SlowToLoad(), [Work((1, 2))], never)) == [(1, ANY), (2, ANY)]
        engine = Campaign(Backend(slow_checker, slow_checker), Settings(engine="minigrad"))
        assert ordered(workers.map(check_chunk, engine, [Work((0, 1, 2))], never)) == [0, 1, 2]
        assert workers.deaths == 0


def test_a_death_in_a_call_is_bad_input_naming_what_happened():
    with Supervisor(jobs=1, timeout=60) as workers, pytest.raises(CampaignError) as caught:
        workers.call(ends_on, NoEngine(), "x", extra="x")
    assert "its worker process ended the process (os._exit(3) or exit status 3)" in str(caught.value)


def test_an_op_that_ended_a_worker_stays_quarantined_once_an_adapter_fault_leaves_another_op_out():
    # the isolation pass meets both: sigmoid's adapter fault leaves it out of the rest of the run
    # (new settings, a new engine state in the workers), relu's exit must not cost a second worker
    from gradcheck.campaign import real_backend

    settings = Settings(
        engine=HOSTILE + "EndsProcessInReluMisspellsSigmoid", graphs=8, seed=3, points=2, structure=False
    )
    with Supervisor(jobs=1, timeout=60) as workers:
        result = run_campaign(settings, real_backend(), runner=workers)
        assert workers.deaths == 1
    assert result.settings.left_out == ("sigmoid",)
    tiers = {f.title.split(":")[0]: f.tier for f in result.findings}
    assert tiers == {
        "relu — ended the engine's process": "bug",
        "sigmoid — adapter fault (AttributeError)": "adapter",
    }
    # the restart after the adapter fault keeps the isolation's one-op evidence, but for the op
    # left out and the op whose case died
    evidence = {op for record in result.isolated for op in record.ops}
    assert evidence and not evidence & {"relu", "sigmoid"}


def test_accounting_and_the_isolations_evidence_run_on_two_workers_as_they_do_in_process():
    # abs alone is right, so the failing graphs are shrunk (one) and explained by its culprits
    # (the others): both go out as tasks, as do the isolation's one-op graphs, the op's evidence;
    # two graphs shrunk at once are taken in turn, so two workers make the same one finding
    from gradcheck.campaign import real_backend
    from gradcheck.campaign.accounting import unexplained

    engine = "gradcheck.testing.fragment_engines:InplaceAbsAdapter"
    settings = Settings(engine=engine, graphs=60, seed=1, edges=False)
    here = run_campaign(settings, real_backend())
    with Supervisor(jobs=2, timeout=60) as workers:
        there = run_campaign(replace(settings, jobs=2), real_backend(), runner=workers)
        assert workers.deaths == 0
    assert [(f.title, f.graph_indices) for f in there.findings] == [
        (f.title, f.graph_indices) for f in here.findings
    ]
    assert there.findings[0].culprits == ("abs",) and unexplained(there.records) is None
    assert [(r.index, r.ops, r.passed) for r in there.isolated] == [
        (r.index, r.ops, r.passed) for r in here.isolated
    ]
    assert there.isolated and {op: s.graphs for op, s in there.ops.items()} == {
        op: s.graphs for op, s in here.ops.items()
    }
    assert "explain" in there.timings and "shrink" in there.timings


def test_a_death_outside_any_graph_is_a_finding_whose_code_says_there_is_none_to_run():
    """Settling or the structural phase lost with its worker: the finding has no graph, and its
    reports print no program for it (they printed a traceback)."""
    death = Death("timeout", "gave no answer within 3 s (--graph-timeout)", "", "forward")
    finding = death_finding(death, None, "random", where="settling")
    assert finding.graph == {}
    assert finding_code(finding) == (
        "# no graph reproduces it: the engine's worker process gave no answer within 3 s "
        "(--graph-timeout) during forward"
    )
