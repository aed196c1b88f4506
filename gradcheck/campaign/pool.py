"""Where a campaign's engine code runs, and the tasks it runs there.

A task is `func(state, units, extra)` -> one result per unit, on the `EngineState` of a campaign
(its adapter, checker, shrinker and explainer, made once per process). Every phase that runs engine
code sends its work as tasks: the engine's facts (`describe`), the structural phase, the
isolation cases, the random graphs in chunks, explaining and shrinking the failing graphs
(`campaign.accounting`), settling and the edge cases.
They run on a runner: watched worker processes (`gradcheck.campaign.supervisor.Supervisor`, what
the command line uses at any --jobs), this process (`Inline`: the library's default, with no
watch) or a Dask cluster's workers (`gradcheck.campaign.cluster.Cluster`, `--scheduler`: the
random graphs, explaining and shrinking, each task supervised there; the other phases still run on
the runner).

Graph `i` of a campaign is drawn from an RNG derived from `(seed, i)` alone, and results are
gathered by index, so the figures never depend on how the run was split across processes. The
order of the work is the campaign's (`gradcheck.campaign.phases`); here is only where it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Protocol, TypeVar

from gradcheck.campaign.records import GraphRecord
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.supervisor import OnDeath, Work
from gradcheck.engines import tracing
from gradcheck.engines.adapter import EngineAdapter

# A checker turns a graph index into its record; built once per process by a factory.
Checker = Callable[[int], GraphRecord]
Shrinker = Callable[[GraphRecord, "ShrinkBudget | None"], GraphRecord]  # (record, what it may spend)
Explainer = Callable[[GraphRecord, Any], GraphRecord]  # (record, what it is explained against)
Task = Callable[[Any, Sequence[Any], Any], list[Any]]
T = TypeVar("T")


@dataclass(frozen=True)
class ShrinkBudget:
    """What one graph's shrinking may spend: `checks` candidate checks of the engine (counted
    work, the budget: None, only the shrinker's own cap), and `seconds` (a safety cap, not a
    budget: None, no limit)."""

    checks: int | None = None
    seconds: float | None = None


# Why a failing graph is unexplained when the safety cap in seconds stopped its shrinking.
SHRINK_TIME_CAP_REACHED = "shrinking reached its time cap (a safety cap: the machine was too slow)"


@dataclass(frozen=True)
class Backend:
    """How a campaign checks, shrinks and explains graphs, in whichever process runs the work;
    picklable (module-level factories, called once per process with the settings and the adapter
    that process loaded).

    make_explainer: accounts failing graphs to the findings that explain them, cheaply, before any is
    shrunk (`campaign.explain`; None: every failing graph is shrunk while the budget lasts).
    """

    make_checker: Callable[[Settings, EngineAdapter], Checker]
    make_shrinker: Callable[[Settings, EngineAdapter], Shrinker]
    make_explainer: Callable[[Settings, EngineAdapter], Explainer] | None = None


@dataclass(frozen=True)
class Campaign:
    """What a process needs to run a campaign's tasks (picklable): its state is made from this."""

    backend: Backend | None
    settings: Settings

    def state(self) -> EngineState:
        return EngineState(self.backend, self.settings)

    @property
    def quarantine_key(self) -> Campaign:
        """This campaign whatever ops it left out for the adapter's fault, and whatever the
        structural phase found of its backward: an op that ended a worker before stays
        quarantined after (`supervisor.Supervisor`)."""
        return replace(self, settings=replace(self.settings, left_out=(), accumulation=None, max_paths=None))


class EngineState:
    """A campaign's engine in one process: the adapter, loaded at once (the engine's import runs
    here), and the checker, shrinker and explainer, made on first use."""

    def __init__(self, backend: Backend | None, settings: Settings) -> None:
        from gradcheck.campaign.validation import campaign_adapter

        self.backend, self.settings = backend, settings
        self.adapter = campaign_adapter(settings)

    @cached_property
    def checker(self) -> Checker:
        assert self.backend is not None
        return self.backend.make_checker(self.settings, self.adapter)

    @cached_property
    def shrinker(self) -> Shrinker:
        assert self.backend is not None
        return self.backend.make_shrinker(self.settings, self.adapter)

    @cached_property
    def explainer(self) -> Explainer:
        assert self.backend is not None and self.backend.make_explainer is not None
        return self.backend.make_explainer(self.settings, self.adapter)


class Runner(Protocol):
    """Runs tasks over works (`Supervisor`, `Inline`, `cluster.Cluster`)."""

    def map(
        self, func: Task, engine: Campaign, works: Sequence[Work], on_death: OnDeath
    ) -> Iterator[tuple[int, list[Any]]]: ...

    def call(self, func: Task, engine: Campaign, unit: Any, extra: Any = None) -> Any: ...


class Inline:
    """Tasks in this process, in order, unwatched: an engine that exits or hangs takes this
    process with it. `gradcheck.campaign.run_campaign`'s default (tests, the pytest plugin)."""

    def __init__(self) -> None:
        self.states: dict[Campaign, EngineState] = {}
        self.threads: int | None = None

    def __enter__(self) -> Inline:
        from gradcheck.parity.torch_reference import set_torch_threads

        self.threads = set_torch_threads(1)  # tiny tensors: extra threads only cost CPU
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.threads is not None:
            from gradcheck.parity.torch_reference import set_torch_threads

            set_torch_threads(self.threads)
            self.threads = None
        self.states.clear()

    def state(self, engine: Campaign) -> EngineState:
        if engine not in self.states:
            self.states[engine] = engine.state()
        return self.states[engine]

    def map(
        self, func: Task, engine: Campaign, works: Sequence[Work], on_death: OnDeath
    ) -> Iterator[tuple[int, list[Any]]]:
        state = self.state(engine)
        for work in works:
            yield work.first, list(func(state, work.units, work.extra))

    def call(self, func: Task, engine: Campaign, unit: Any, extra: Any = None) -> Any:
        return func(self.state(engine), (unit,), extra)[0]


def ordered(results: Iterator[tuple[int, list[Any]]]) -> list[Any]:
    """Every unit's result, in the order the units were given (however the work was split)."""
    by_position: dict[int, Any] = {}
    for first, batch in results:
        for k, result in enumerate(batch):
            by_position[first + k] = result
    return [by_position[p] for p in sorted(by_position)]


def marked(units: Sequence[Any]) -> Iterator[Any]:
    """The units in turn, each marked begun on the beacon (its position in the task)."""
    for position, unit in enumerate(units):
        tracing.unit(position)
        yield unit


# --- the tasks ------------------------------------------------------------------------------------


def loading(make: Callable[[], T]) -> T:
    """`make()` (a state's checker, shrinker or explainer, made on first use: a second or more in a
    new worker) marked on the beacon as loading the engine, before the task's first unit: a
    worker's start, not a graph's time (`supervisor.Supervisor`'s graph timeout)."""
    tracing.stage("load")
    return make()


def check_chunk(state: EngineState, indices: Sequence[int], extra: Any = None) -> list[GraphRecord]:
    """The random graphs: check graphs `indices`."""
    checker = loading(lambda: state.checker)
    return [checker(i) for i in marked(indices)]


def shrink_batch(
    state: EngineState, records: Sequence[GraphRecord], budget: ShrinkBudget | None = None
) -> list[GraphRecord]:
    """Shrinking: each failing record shrunk to a small graph with its finding, within `budget`
    (None: no limit but the shrinker's own)."""
    shrinker = loading(lambda: state.shrinker)
    return [shrinker(r, budget) for r in marked(records)]


def explain_batch(state: EngineState, records: Sequence[GraphRecord], known: Any) -> list[GraphRecord]:
    """Explaining: each failing record with the finding that explains it, against what `known`
    holds (`campaign.explain.Explaining`)."""
    explainer = loading(lambda: state.explainer)
    return [explainer(r, known) for r in marked(records)]


def chunks(graphs: int, jobs: int) -> list[range]:
    """Index ranges small enough for a live progress bar and even load, large enough to be cheap."""
    size = max(1, min(100, graphs // max(1, jobs * 16)))
    return [range(start, min(start + size, graphs)) for start in range(0, graphs, size)]


def explain_batches(indices: Sequence[int], jobs: int) -> list[list[int]]:
    """Groups of failing graphs' indices to explain, a few per task."""
    size = max(1, min(20, len(indices) // max(1, jobs * 4)))
    return [list(indices[i : i + size]) for i in range(0, len(indices), size)]
