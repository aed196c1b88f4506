"""The parity campaign: check N random graphs against torch and the numerical oracle, per op.

Graph `i` of a campaign is drawn from an RNG derived from `(seed, i)` alone, and results are
gathered by index, so the figures never depend on how the run was split across processes.
Failures are shrunk (in the pool too) and saved to the regression corpus by the caller.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from gradcheck.workers import worker_count

# The four gradient figures every graph check yields, and the forward error; names as GraphCheck's.
GRAD_METRICS = ("max_abs_err_torch", "max_rel_err_torch", "max_abs_err_numeric", "max_rel_err_numeric")
METRICS = (*GRAD_METRICS, "max_forward_err")

# Quantiles reported per op (robust to one ill-conditioned graph, unlike the maxima).
QUANTILES = {"p50": 0.5, "p99": 0.99}

# Error distributions are histograms over decades: bin k holds errors in [10**(k+LO), 10**(k+LO+1)).
HIST_LO, HIST_HI = -18, 2


class CampaignError(Exception):
    """Bad input to a campaign (unknown engine or op, an engine that raises): exit status 2."""


@dataclass(frozen=True)
class Settings:
    """Everything that determines a campaign's figures (jobs and chunking do not)."""

    engine: str = "minigrad"
    graphs: int = 1000
    seed: int = 0
    ops: tuple[str, ...] | None = None
    tensor: bool = False
    jobs: int = 1
    max_shrink: int = 10
    points: int = 4

    def describe(self) -> str:
        kind = "tensor" if self.tensor else "scalar"
        ops = ", ".join(self.ops) if self.ops else "all the engine supports"
        return (
            f"{self.graphs} random {kind} graphs ({self.points} input points each), seed {self.seed}, "
            f"engine {self.engine}, ops: {ops}"
        )


@dataclass(frozen=True)
class Failure:
    """What a failing graph looks like, as found and after shrinking."""

    problems: tuple[str, ...]
    snippet: str
    graph: dict[str, Any]
    shrunk_snippet: str | None = None
    shrunk_graph: dict[str, Any] | None = None
    shrunk_ops: tuple[str, ...] | None = None
    corpus_file: str | None = None


@dataclass(frozen=True)
class GraphRecord:
    """One graph's outcome: which ops it used, whether it passed, and its error figures."""

    index: int
    ops: tuple[str, ...]
    passed: bool
    figures: dict[str, float | None]
    problems: tuple[str, ...] = ()
    failure: Failure | None = None
    points_checked: int = 1
    points_skipped: int = 0


@dataclass
class OpStats:
    """Per-op aggregate: graphs that used the op, their largest errors, error quantiles, failures."""

    graphs: int = 0
    failures: int = 0
    maxima: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(METRICS))
    histograms: dict[str, list[int]] = field(default_factory=dict)
    failing_graphs: list[int] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=dict)

    def quantile(self, metric: str, q: float) -> float | None:
        """The nearest-rank q-quantile of the graphs' `metric` (nan ranks above every number)."""
        values = sorted(self.values.get(metric, ()), key=lambda v: math.inf if math.isnan(v) else v)
        if not values:
            return None
        return values[max(0, math.ceil(q * len(values)) - 1)]


@dataclass
class CampaignResult:
    settings: Settings
    records: list[GraphRecord]
    ops: dict[str, OpStats]
    seconds: float
    check_seconds: float

    @property
    def failures(self) -> list[GraphRecord]:
        return [r for r in self.records if not r.passed]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.records)


# --- per-graph seeding -------------------------------------------------------------------------


def graph_seed(seed: int, index: int) -> int:
    """A 64-bit seed for graph `index` of a campaign seeded `seed`: a pure function of the pair."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])


# --- aggregation -------------------------------------------------------------------------------


def _bigger(current: float | None, new: float | None) -> float | None:
    """The larger of two figures; nan beats every number (it marks a broken comparison)."""
    if new is None:
        return current
    if current is None or math.isnan(new):
        return new
    if math.isnan(current):
        return current
    return max(current, new)


def histogram_bin(value: float | None) -> int | None:
    """The bin of an error in a decade histogram: 0 holds exact zeros, -1 non-finite errors."""
    if value is None:
        return None
    if not math.isfinite(value):
        return -1
    if value == 0.0:
        return 0
    decade = math.floor(math.log10(value))
    return 1 + min(max(decade, HIST_LO), HIST_HI - 1) - HIST_LO


HIST_BINS = 1 + (HIST_HI - HIST_LO) + 1  # zeros, the decades, non-finite (the last, index -1)


def aggregate(records: Iterable[GraphRecord]) -> dict[str, OpStats]:
    """Per-op figures over graphs, in index order, ops sorted by name: independent of job split."""
    stats: dict[str, OpStats] = {}
    for record in sorted(records, key=lambda r: r.index):
        for op in record.ops:
            s = stats.setdefault(op, OpStats())
            s.graphs += 1
            if not record.passed:
                s.failures += 1
                s.failing_graphs.append(record.index)
            for metric in METRICS:
                value = record.figures.get(metric)
                s.maxima[metric] = _bigger(s.maxima[metric], value)
                b = histogram_bin(value)
                if b is not None:
                    s.histograms.setdefault(metric, [0] * HIST_BINS)[b] += 1
                    s.values.setdefault(metric, []).append(value)
    return {op: stats[op] for op in sorted(stats)}


# --- running -----------------------------------------------------------------------------------

# A checker turns a graph index into its record; built once per process by a factory.
Checker = Callable[[int], GraphRecord]
Shrinker = Callable[[GraphRecord], GraphRecord]


@dataclass(frozen=True)
class Backend:
    """How a campaign checks and shrinks graphs; picklable (a module-level factory and settings)."""

    make_checker: Callable[[Settings], Checker]
    make_shrinker: Callable[[Settings], Shrinker]


_worker_state: dict[str, Any] = {}


def _worker_init(backend: Backend, settings: Settings, worker: bool = True) -> None:
    if worker:
        _set_torch_threads(1)  # the pool already uses every core
    _worker_state["checker"] = backend.make_checker(settings)
    _worker_state["shrinker"] = backend.make_shrinker(settings)


def _set_torch_threads(n: int) -> int | None:
    """Set torch's intra-op threads to `n`; returns the previous count (None without torch).

    A campaign's tensors are tiny: a second thread only adds synchronisation (measured: 35% more
    CPU per graph with torch's default two threads than with one).
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a test dependency
        return None
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    return previous


def _check_chunk(indices: Sequence[int]) -> list[GraphRecord]:
    checker = _worker_state["checker"]
    return [checker(i) for i in indices]


def _shrink_one(record: GraphRecord) -> GraphRecord:
    return _worker_state["shrinker"](record)


def chunks(graphs: int, jobs: int) -> list[range]:
    """Index ranges small enough for a live progress bar and even load, large enough to be cheap."""
    size = max(1, min(100, graphs // max(1, jobs * 16)))
    return [range(start, min(start + size, graphs)) for start in range(0, graphs, size)]


Progress = Callable[[str, int, int], None]  # (phase, done, total)


def run_campaign(settings: Settings, backend: Backend, progress: Progress | None = None) -> CampaignResult:
    """Check `settings.graphs` graphs over `settings.jobs` processes; shrink the first failures."""
    report = progress or (lambda phase, done, total: None)
    start = time.perf_counter()
    parts = chunks(settings.graphs, settings.jobs)
    records: dict[int, GraphRecord] = {}
    with _Pool(backend, settings, len(parts)) as run:
        done = 0
        report("check", 0, settings.graphs)
        for batch in run(_check_chunk, parts):
            for record in batch:
                records[record.index] = record
            done += len(batch)
            report("check", done, settings.graphs)
        check_seconds = time.perf_counter() - start
        failing = sorted(i for i, r in records.items() if not r.passed)[: settings.max_shrink]
        report("shrink", 0, len(failing))
        shrunk = 0
        for batch in run(_shrink_batch, [[records[i]] for i in failing]):
            for record in batch:
                records[record.index] = record
            shrunk += len(batch)
            report("shrink", shrunk, len(failing))
    ordered = [records[i] for i in sorted(records)]
    return CampaignResult(
        settings=settings,
        records=ordered,
        ops=aggregate(ordered),
        seconds=time.perf_counter() - start,
        check_seconds=check_seconds,
    )


def _shrink_batch(records: Sequence[GraphRecord]) -> list[GraphRecord]:
    return [_shrink_one(r) for r in records]


class _Pool:
    """Run work items in this process (jobs == 1) or a spawned process pool, yielding as done."""

    def __init__(self, backend: Backend, settings: Settings, items: int) -> None:
        self.backend, self.settings = backend, settings
        self.workers = worker_count(settings.jobs, items)
        self.executor: ProcessPoolExecutor | None = None
        self.threads: int | None = None

    def __enter__(self) -> Callable[[Callable[[Any], list[GraphRecord]], Sequence[Any]], Iterator]:
        if self.workers <= 1:
            _worker_init(self.backend, self.settings, worker=False)
            self.threads = _set_torch_threads(1)  # tiny tensors: extra threads only cost CPU
            return self._serial
        self.executor = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=get_context("spawn"),
            initializer=_worker_init,
            initargs=(self.backend, self.settings),
        )
        return self._parallel

    def __exit__(self, *exc: object) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
        if self.threads is not None:
            _set_torch_threads(self.threads)
        _worker_state.clear()

    @staticmethod
    def _serial(func: Callable[[Any], list[GraphRecord]], items: Sequence[Any]) -> Iterator:
        for item in items:
            yield func(item)

    def _parallel(self, func: Callable[[Any], list[GraphRecord]], items: Sequence[Any]) -> Iterator:
        assert self.executor is not None
        pending: set[Future] = {self.executor.submit(func, item) for item in items}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    yield future.result()
                except BrokenProcessPool as exc:
                    raise CampaignError(
                        f"a worker process died ({exc}); rerun with --jobs 1 to see the engine's error"
                    ) from exc


# --- the real thing: generate.py's graphs, parity.py's three-way check ------------------------


def scalar_ops() -> tuple[str, ...]:
    """The registry's scalar ops (a scalar campaign draws from these)."""
    from gradcheck import registry

    return tuple(registry.SCALAR_OPS)


def tensor_ops() -> tuple[str, ...]:
    """The registry's tensor ops (empty until the registry has any)."""
    from gradcheck import registry

    return tuple(getattr(registry, "TENSOR_OPS", ()))


def load_adapter(name: str) -> Any:
    """The engine adapter for `name`; CampaignError when it is unknown or its constructor raises."""
    from gradcheck.backends import UnknownEngineError, load_engine

    try:
        return load_engine(name)
    except UnknownEngineError as exc:
        raise CampaignError(str(exc)) from None
    except Exception as exc:
        raise CampaignError(
            f"engine {name!r}: loading its adapter raised {type(exc).__name__}: {exc}"
        ) from exc


def campaign_ops(settings: Settings, adapter: Any) -> tuple[str, ...]:
    """The ops a campaign draws from, in registry order: --ops, or all the engine supports."""
    pool = tensor_ops() if settings.tensor else scalar_ops()
    if settings.tensor and not pool:
        raise CampaignError("the registry has no tensor ops yet: tensor campaigns cannot run")
    if settings.ops is None:
        ops = tuple(op for op in pool if op in adapter.ops)
        if not ops:
            kind = "tensor" if settings.tensor else "scalar"
            raise CampaignError(f"engine {settings.engine!r} supports none of the registry's {kind} ops")
        return ops
    from gradcheck import registry

    unknown = [op for op in settings.ops if op not in registry.REGISTRY]
    if unknown:
        raise CampaignError(f"unknown op(s) {unknown}; the registry has {sorted(registry.REGISTRY)}")
    wrong_kind = [op for op in settings.ops if op not in pool]
    if wrong_kind:
        kind = "tensor" if settings.tensor else "scalar"
        other = "drop --tensor" if settings.tensor else "add --tensor"
        raise CampaignError(f"op(s) {wrong_kind} are not {kind} ops ({other}?); {kind} ops: {list(pool)}")
    unsupported = [op for op in settings.ops if op not in adapter.ops]
    if unsupported:
        supported = sorted(adapter.ops)
        raise CampaignError(
            f"engine {settings.engine!r} does not support op(s) {unsupported}; it supports {supported}"
        )
    return tuple(dict.fromkeys(settings.ops))


def validate(settings: Settings) -> tuple[str, ...]:
    """Check engine, ops and graph kind before any work; return the ops. Raises CampaignError.

    The adapter must also evaluate a one-op graph of each op: an adapter that raises there is
    broken (bad input), not an engine finding.
    """
    adapter = load_adapter(settings.engine)
    if settings.tensor and not getattr(adapter, "tensor", False):
        raise CampaignError(
            f"engine {settings.engine!r} evaluates scalar graphs only; drop --tensor "
            "(minigrad's tensor engine is --engine minigrad-tensor)"
        )
    if not settings.tensor and getattr(adapter, "tensor", False):
        raise CampaignError(f"engine {settings.engine!r} evaluates tensor graphs only: add --tensor")
    ops = campaign_ops(settings, adapter)
    _smoke_test(settings, adapter, ops)
    return ops


def _smoke_test(settings: Settings, adapter: Any, ops: Sequence[str]) -> None:
    from gradcheck.generate import Sizes, random_graph
    from gradcheck.registry import REGISTRY

    one_op = Sizes(inputs=(2, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)
    for op in ops:
        rng = np.random.default_rng([settings.seed, 0])
        graph = random_graph(rng, ops=[op], tensor=settings.tensor, sizes=one_op)
        if not graph.nodes:
            continue
        values = graph.input_values(0)
        try:
            leaves, outputs = adapter.build(graph, values)
            forward = [np.asarray(adapter.value(o), dtype=np.float64) for o in outputs]
            adapter.gradients(outputs, leaves, [np.ones_like(v) if v.ndim else 1.0 for v in forward])
        except Exception as exc:
            node = graph.nodes[0]
            code = REGISTRY[op].snippet([graph.name_of(a) for a in node.args], node.attr, "minigrad")
            at = ", ".join(f"{inp.name}={v!r}" for inp, v in zip(graph.inputs, values))
            raise CampaignError(
                f"engine {settings.engine!r}: its adapter raised {type(exc).__name__}: {exc} "
                f"evaluating `{code}` at {at}; fix the adapter (or leave {op!r} out of its `ops`)"
            ) from exc


class GraphChecker:
    """Graph `index` of the campaign: generated from (seed, index), checked three ways."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.adapter = load_adapter(settings.engine)
        self.ops = campaign_ops(settings, self.adapter)

    def graph(self, index: int) -> Any:
        from gradcheck.generate import random_graph

        rng = np.random.default_rng(graph_seed(self.settings.seed, index))
        return random_graph(rng, ops=self.ops, tensor=self.settings.tensor, points=self.settings.points)

    def __call__(self, index: int) -> GraphRecord:
        from gradcheck.parity import check_graph

        check = check_graph(self.graph(index), self.adapter, seed=graph_seed(self.settings.seed, index))
        return record_of(index, check)


def record_of(index: int, check: Any) -> GraphRecord:
    """A GraphRecord from parity's GraphCheck."""
    checked = check.points_checked > 0
    figures = {m: (float(getattr(check, m)) if checked else None) for m in METRICS}
    failure = None
    if not check.passed and check.failure is not None:
        failure = Failure(
            problems=tuple(check.problems),
            snippet=check.failure.to_python("minigrad"),
            graph=check.failure.to_dict(),
        )
    return GraphRecord(
        index=index,
        ops=tuple(sorted(set(check.ops))),
        passed=bool(check.passed),
        figures=figures,
        problems=tuple(check.problems),
        failure=failure,
        points_checked=check.points_checked,
        points_skipped=check.points_skipped,
    )


class FailureShrinker:
    """Shrinks a failing graph (its failing instance) with `gradcheck.shrink` to one that still fails.

    "Still fails" means: the engine disagrees with torch or the oracle at a checkable point, for
    a reason other than torch and the oracle disagreeing with each other.
    """

    def __init__(self, settings: Settings, max_checks: int = 400) -> None:
        self.settings = settings
        self.adapter = load_adapter(settings.engine)
        self.max_checks = max_checks

    def __call__(self, record: GraphRecord) -> GraphRecord:
        from gradcheck.graph import Graph
        from gradcheck.shrink import shrink_graph

        f = record.failure
        if f is None:
            return record
        graph = Graph.from_dict(f.graph)
        problems = self.problems(graph)
        if problems is None:  # the failing instance alone passes: keep it as found
            problems = list(f.problems)
        else:
            graph = shrink_graph(graph, lambda g: self.problems(g) is not None, max_checks=self.max_checks)
            problems = self.problems(graph) or problems
        shrunk = dataclasses.replace(
            f,
            shrunk_graph=graph.to_dict(),
            shrunk_snippet=graph.to_python("minigrad"),
            shrunk_ops=tuple(graph.ops()),
        )
        return dataclasses.replace(record, failure=shrunk, problems=tuple(problems))

    def problems(self, graph: Any) -> list[str] | None:
        """The engine's problems on `graph` if it fails at a checkable point, else None."""
        from gradcheck.parity import check_graph

        try:
            check = check_graph(graph, self.adapter)
        except Exception:
            return None
        if check.passed or check.points_checked == 0:
            return None
        if all("reference disagreement" in p for p in check.problems):
            return None  # torch and the oracle disagree: the candidate left the checkable domain
        return list(check.problems)


# --- the regression corpus: one graph JSON file (graph.py's format) per failure ------------------


@dataclass
class Corpus:
    """A directory of graph JSON files, every one of which parsed (see `open_corpus`)."""

    directory: Path
    files: dict[str, Any]  # file name -> Graph


def open_corpus(directory: Path) -> Corpus:
    """Read and validate every *.json graph in `directory` (missing: empty corpus).

    A malformed file is bad input: CampaignError names each such file and its problem, and
    nothing is written, so no entry is lost or skipped silently.
    """
    from gradcheck.graph import Graph, GraphFormatError

    directory = Path(directory)
    files: dict[str, Any] = {}
    problems: list[str] = []
    if directory.exists() and not directory.is_dir():
        raise CampaignError(f"corpus {directory}: not a directory")
    for path in sorted(directory.glob("*.json")) if directory.exists() else []:
        try:
            files[path.name] = Graph.from_json(path.read_text(encoding="utf-8"))
        except (GraphFormatError, OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: {exc}")
    if problems:
        raise CampaignError(
            f"the regression corpus has {len(problems)} malformed file(s); fix or remove them "
            "(nothing was run or written):\n  " + "\n  ".join(problems)
        )
    return Corpus(directory, files)


def corpus_name(graph: dict[str, Any], engine: str) -> str:
    """A file name fixed by the graph's content and engine, so saving a failure twice writes one file.

    The same scheme as the parity suite's `parity_tests/regression.py`: both write one corpus.
    """
    core = {k: graph[k] for k in ("inputs", "nodes", "outputs", "cotangent") if k in graph}
    digest = hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]
    slug = "".join(c if c.isalnum() else "-" for c in engine).strip("-").lower()
    return f"failure-{slug}-{digest}.json"


def save_failures(result: CampaignResult, corpus: Corpus) -> CampaignResult:
    """Write each shrunk failure to the corpus (one file per distinct graph); note the file on its record."""
    records = []
    for record in result.records:
        f = record.failure
        if record.passed or f is None or f.shrunk_graph is None:
            records.append(record)  # failures past --max-shrink are listed in the report, not saved
            continue
        graph = dict(f.shrunk_graph)
        graph["meta"] = {
            **graph.get("meta", {}),
            "engine": result.settings.engine,
            "found_by": f"gradcheck run --seed {result.settings.seed}, graph {record.index}",
            "problems": list(record.problems),
        }
        name = corpus_name(graph, result.settings.engine)
        path = corpus.directory / name
        if name not in corpus.files:
            corpus.directory.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(graph, indent=1) + "\n", encoding="utf-8")
            corpus.files[name] = graph
        records.append(dataclasses.replace(record, failure=dataclasses.replace(f, corpus_file=str(path))))
    return dataclasses.replace(result, records=records)


def make_checker(settings: Settings) -> Checker:
    return GraphChecker(settings)


def make_shrinker(settings: Settings) -> Shrinker:
    return FailureShrinker(settings)


def real_backend() -> Backend:
    """The campaign backend of `gradcheck run` and the gate."""
    return Backend(make_checker, make_shrinker)


__all__ = [
    "GRAD_METRICS",
    "HIST_BINS",
    "METRICS",
    "Backend",
    "CampaignError",
    "CampaignResult",
    "Failure",
    "GraphRecord",
    "OpStats",
    "Settings",
    "aggregate",
    "chunks",
    "graph_seed",
    "histogram_bin",
    "run_campaign",
]
