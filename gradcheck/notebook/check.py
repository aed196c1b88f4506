"""`check_engine`: the campaign `gradcheck run` runs, called from Python on the engine itself (a
value class typed into a notebook's cell, an adapter, or a spec string as the command line takes).

Where the engine runs, as the command line's watched workers wherever they can reach it:
- a spec any fresh process loads (a module's class, a built-in name, a file): workers started by
  spawn, as `gradcheck run` starts them;
- a class of `__main__` (a notebook's cells) or an object only this process holds
  (`loading.spec_of`): workers forked from this process on Linux, where forking is the platform's
  own way (a copy of the kernel has the class); elsewhere this process, unwatched, said in a line;
- with GRADCHECK_UNSUPERVISED=1, this process, as for the command line.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from gradcheck.choices import CONVENTIONS, DEFAULT_TIMEOUT, REFERENCES
from gradcheck.notebook.result import TEXT_WIDTH, EngineCheck, EngineFinding, Replayed

UNSUPERVISED = "GRADCHECK_UNSUPERVISED"  # as `gradcheck.cli.arguments.engine_workers` reads it
IN_PROCESS = (
    "gradcheck: the engine ran in this process, not in watched worker processes ({why}): "
    "an engine that crashes or hangs stops this process too"
)
NO_FORK = (
    "a class defined here reaches workers only as a fork of this process, which gradcheck uses on Linux only"
)


def check_engine(
    engine: object,
    graphs: int = 2000,
    *,
    seed: int = 0,
    ops: Sequence[str] | str | None = None,
    points: int = 4,
    jobs: int = 1,
    out: str | Path | None = None,
    tensor: bool | None = None,
    structure: bool = True,
    isolation: bool = True,
    edges: bool = True,
    conventions: str = "torch",
    reference: str = "torch",
    graph_timeout: float | None = DEFAULT_TIMEOUT,
    shrink_budget: int | None = None,
    progress: bool = True,
) -> EngineCheck:
    """Run `gradcheck run`'s campaign on `engine`: a micrograd-style value class (`Value`, as
    defined in a notebook's cell), an `EngineAdapter` subclass or instance, or a spec string
    ('micrograd', 'module:Class', 'path/to/file.py:Class'). The same phases, tiers and findings;
    with `out`, the same report.json, report.html and corpus (`out/corpus`). `tensor`: None
    follows the engine. Returns the result, which Jupyter shows as the triage's first screen."""
    from gradcheck import campaign
    from gradcheck.campaign.outputs import ReportDirectory
    from gradcheck.campaign.pool import Campaign
    from gradcheck.campaign.report_session import CiFiles, report_run, report_unwritten
    from gradcheck.campaign.settings import Settings
    from gradcheck.campaign.tasks import describe
    from gradcheck.campaign.workers import capped_jobs
    from gradcheck.notebook.progress import campaign_progress

    spec = engine_spec(engine)
    _check_arguments(graphs, seed, points, jobs, conventions, reference, graph_timeout, shrink_budget)
    jobs, lowered = capped_jobs(jobs)
    settings = Settings(
        engine=spec,
        graphs=graphs,
        seed=seed,
        ops=_ops(ops),
        tensor=bool(tensor),
        jobs=jobs,
        shrink_budget=shrink_budget,
        points=points,
        conventions=conventions,
        isolation=isolation,
        structure=structure,
        edges=edges,
        reference=reference,
    )
    runner, where = engine_runner(spec, jobs, graph_timeout)
    lowered = lowered and lowered.replace("--jobs", "jobs")  # the keyword, not the option
    notes = tuple(f"gradcheck: {n}" if n.startswith("note") else n for n in (lowered, where) if n)
    for note in notes:  # before the campaign, while it runs
        print(note, file=sys.stderr)
    backend = campaign.real_backend()
    with runner as workers:
        facts = workers.call(describe, Campaign(backend, settings), None)
        if tensor is None and facts.tensor:  # the engine's kind of graph, unless asked for the other
            settings = dataclasses.replace(settings, tensor=True)
            facts = workers.call(describe, Campaign(backend, settings), None)
        facts.checked()
        written: tuple[Path, ...] = ()
        with ExitStack() as stack:
            directory = stack.enter_context(ReportDirectory(Path(out))) if out is not None else None
            corpus = campaign.open_corpus(Path(out) / "corpus") if out is not None else None
            with campaign_progress(progress) as bars:
                result = campaign.run_campaign(settings, backend, bars, corpus, workers)
            workers.close()
            command = [_call_text(engine, spec, graphs, seed)]
            if directory is not None:  # a file's replay: the command line's, where a fresh process can
                in_files = None if not _needs_this_process(spec) else python_repro
                written = report_run(result, directory, command, CiFiles(), in_files).written
    shown = report_unwritten(result, command, python_repro)
    replayer = _Replayer(shown.report, spec, conventions, graph_timeout)
    findings = tuple(EngineFinding(i, f, replayer) for i, f in enumerate(shown.result.findings))
    return EngineCheck(
        passed=shown.result.passed,
        findings=findings,
        result=shown.result,
        report=shown.report,
        reports=tuple(written),
        notes=notes,
        inspection=facts.inspection,
    )


def python_repro(number: int) -> str:
    """How finding `number` of a check is replayed where the check ran (a notebook's cell)."""
    return f"result.findings[{number}].replay()  # result: what check_engine returned"


def engine_spec(engine: object) -> str:
    """The spec that loads `engine` in the workers (`loading.spec_of`); TypeError naming what was
    given when it is neither a class, an adapter nor a spec string."""
    from gradcheck.engines.adapter import EngineAdapter
    from gradcheck.engines.loading import canonical_spec, spec_of

    if isinstance(engine, str):
        return canonical_spec(engine)
    if isinstance(engine, (type, EngineAdapter)):
        return spec_of(engine)
    given = f"an instance of {type(engine).__name__} ({_short_repr(engine)})"
    hint = (
        f" (pass the class {type(engine).__name__} itself, not one of its values)"
        if _is_value(engine)
        else ""
    )
    raise TypeError(
        f"check_engine: engine must be a micrograd-style value class, an EngineAdapter subclass or "
        f"instance, or an engine spec string ('micrograd', 'module:Class', 'path/to/file.py:Class'); "
        f"got {given}{hint}"
    )


def engine_runner(spec: str, jobs: int, timeout: float | None) -> tuple[object, str | None]:
    """Where engine `spec` runs (see the module docstring), and the line that says so when it is
    this process."""
    from gradcheck.campaign.pool import Inline
    from gradcheck.campaign.supervisor import Supervisor

    if os.environ.get(UNSUPERVISED) == "1":
        return Inline(), IN_PROCESS.format(why=f"{UNSUPERVISED}=1")
    if not _needs_this_process(spec):
        return Supervisor(jobs, timeout), None
    if fork_is_safe():
        from gradcheck.campaign.workers import warm_up

        warm_up()  # torch and the checks imported here once, not again in each forked worker
        return Supervisor(jobs, timeout, start_method="fork"), None
    return Inline(), IN_PROCESS.format(why=NO_FORK)


def fork_is_safe() -> bool:
    """Whether workers may be forked from this process: on Linux (elsewhere a fork of a process
    with threads and system frameworks, as macOS's, can crash or hang; Python spawns there)."""
    import multiprocessing

    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


class _Replayer:
    """Replays a check's findings on its engine spec as it loads now, where a check would run it."""

    def __init__(self, report: dict, spec: str, conventions: str, timeout: float | None) -> None:
        self.report, self.spec, self.conventions, self.timeout = report, spec, conventions, timeout
        self.name = spec.rpartition(":")[2].split("#")[0] or spec  # the class's name, as written

    def __call__(self, number: int) -> Replayed:
        from gradcheck.cli.replay import replay_on, saved_from_report

        saved = saved_from_report(self.report, number, f"the check of {self.name}")
        runner, _ = engine_runner(self.spec, 1, self.timeout)
        with runner as workers:
            text, status = replay_on(workers, saved, self.spec, self.conventions, (TEXT_WIDTH, False, None))
        title = self.report["findings"][number].get("title", "")
        return Replayed(number, title, status == 0, text)


def _needs_this_process(spec: str) -> bool:
    from gradcheck.engines.loading import needs_this_process

    return needs_this_process(spec)


def _check_arguments(
    graphs: int,
    seed: int,
    points: int,
    jobs: int,
    conventions: str,
    reference: str,
    timeout: float | None,
    shrink_budget: int | None,
) -> None:
    """ValueError naming the argument and what it must be, before any work."""
    for name, value, least in (
        ("graphs", graphs, 1),
        ("seed", seed, 0),
        ("points", points, 1),
        ("jobs", jobs, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"check_engine: {name} must be an integer of at least {least}, got {value!r}")
    if shrink_budget is not None and (not isinstance(shrink_budget, int) or shrink_budget < 0):
        raise ValueError(
            f"check_engine: shrink_budget must be None or a count of checks from 0, got {shrink_budget!r}"
        )
    if conventions not in CONVENTIONS:
        raise ValueError(f"check_engine: conventions must be one of {CONVENTIONS}, got {conventions!r}")
    if reference not in REFERENCES:
        raise ValueError(f"check_engine: reference must be one of {REFERENCES}, got {reference!r}")
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):
        raise ValueError(
            f"check_engine: graph_timeout must be None or a positive number of seconds, got {timeout!r}"
        )


def _ops(ops: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """The ops to draw: a list of names or one comma-separated string ('tanh,mul'); None: all."""
    if ops is None:
        return None
    names = [op.strip() for op in ops.split(",")] if isinstance(ops, str) else list(ops)
    if not names or not all(isinstance(op, str) and op for op in names):
        raise ValueError(
            f"check_engine: ops must be op names, e.g. ['tanh', 'mul'] or 'tanh,mul'; got {ops!r}"
        )
    return tuple(names)


def _call_text(engine: object, spec: str, graphs: int, seed: int) -> str:
    """The call as report.json's `run.command` keeps it."""
    name = engine.__name__ if isinstance(engine, type) else repr(spec)
    return f"gradcheck.check_engine({name}, graphs={graphs}, seed={seed})"


def _is_value(obj: object) -> bool:
    return hasattr(obj, "grad") and callable(getattr(obj, "backward", None))


def _short_repr(obj: object) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."
