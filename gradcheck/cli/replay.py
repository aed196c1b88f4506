"""`gradcheck replay FILE --engine NAME`: re-run one saved graph, numbers side by side.

FILE is a corpus file (a graph JSON) or a campaign's report.json (with `--finding N`, the finding's
minimal graph). The engine, torch and the precise oracle (mpmath for scalar graphs) are shown per
output and per input gradient at the point that fails (or the first point). The graph is rebuilt
and checked `REBUILDS` times (8; the earlier builds kept alive, so object ids change): "fixed" only
when every run agrees, "nondeterministic" with its rate when only some fail. A finding of the
structural phase is replayed by running that phase again. Exit 1 while the engine still fails,
0 once it agrees, 2 when the file or the engine cannot be used.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gradcheck.choices import CONVENTIONS
from gradcheck.cli import arguments
from gradcheck.cli.arguments import (
    conventions_option,
    exit_statuses,
    graph_timeout_option,
    index_int,
    reference_option,
)

if TYPE_CHECKING:  # the checks are imported when a graph is replayed, not to parse the command
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from gradcheck.campaign.pool import Runner
    from gradcheck.campaign.supervisor import Death
    from gradcheck.engines.adapter import EngineAdapter
    from gradcheck.graphs.ir import Graph


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The `replay` subcommand's options."""
    replay = sub.add_parser(
        "replay",
        help="re-run a saved graph: engine, torch and oracle side by side",
        description="Re-run a corpus file, or finding N of a report.json, and print the engine's, "
        "torch's and the oracle's numbers side by side. The engine runs in a watched worker process.",
        epilog=exit_statuses("it still fails (a crash or a timeout too)", "it agrees now (fixed)"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("file", type=Path, help="a corpus graph file or a report.json")
    replay.add_argument("--engine", default=None, help="engine to run (default: the one the file names)")
    replay.add_argument(
        "--finding", type=index_int, default=None, help="which finding of a report.json (default 0)"
    )
    conventions_option(replay)
    reference_option(replay, default=None)
    graph_timeout_option(replay)


def command(args: argparse.Namespace, console: Console) -> int:
    """The `replay` subcommand, the engine in a watched worker process; returns the exit status."""
    from gradcheck.campaign.settings import CampaignError
    from gradcheck.engines.loading import canonical_spec

    saved = load_saved(args.file, args.finding)
    if args.reference is not None:  # the command's judge over the report's
        saved = dataclasses.replace(saved, reference=args.reference)
    if args.conventions not in CONVENTIONS:
        raise CampaignError(f"--conventions must be one of {CONVENTIONS}, got {args.conventions!r}")
    engine = canonical_spec(args.engine or saved.engine or "minigrad")
    looks = (console.width, console.is_terminal, console.color_system)
    with arguments.engine_workers(1, args.graph_timeout) as workers:
        text, status = replay_on(workers, saved, engine, args.conventions, looks)
    sys.stdout.write(text)
    sys.stdout.flush()
    return status


def replay_on(workers: Runner, saved: Saved, engine: str, conventions: str, looks: Looks) -> tuple[str, int]:
    """`saved` replayed with engine spec `engine` where `workers` run engine code, rendered as a
    console of `looks` would show it: (text, exit status); a worker that dies or hangs is a
    failure said in words."""
    from gradcheck.campaign.pool import Campaign
    from gradcheck.campaign.settings import Settings
    from gradcheck.campaign.supervisor import Work
    from gradcheck.parity.wording import printable

    def lost(_: Saved, death: Death) -> tuple[str, int]:
        line = f"replaying {printable(saved.label)}: the engine's worker process {death.describe}"
        return f"{line}\nstill fails: {_KIND_WORDS[death.kind]}\n", 1

    campaign = Campaign(None, Settings(engine=engine))
    work = [Work((saved,), (conventions, looks))]
    ((text, status),) = [o for _, batch in workers.map(replay_task, campaign, work, lost) for o in batch]
    return text, status


_KIND_WORDS = {"crash": "crash", "timeout": "timeout", "raised": "exception"}


Looks = tuple[int, bool, "str | None"]  # a console's width, whether a terminal, its colours


def replay_task(state: Any, units: Sequence[Saved], extra: tuple[str, Looks]) -> list[tuple[str, int]]:
    """In a worker: each saved graph replayed on the campaign's engine, rendered as the main
    process's console would (width, terminal, colours): (text, exit status)."""
    from gradcheck.campaign.pool import marked
    from gradcheck.cli.text_console import text_console

    conventions, (width, terminal, colors) = extra
    out = []
    for saved in marked(units):
        buffer = io.StringIO()
        console = text_console(buffer, width, terminal, colors)
        status = replay(saved, state.adapter, console, conventions)
        out.append((buffer.getvalue(), status))
    return out


@dataclass(frozen=True)
class Saved:
    """A graph to replay and the engine it was found on (None when the file does not say)."""

    graph: Graph
    engine: str | None
    label: str
    structural_cause: str | None = None  # a structural phase's finding: the cause it names
    accumulation: str | None = None  # how the campaign found the engine's backward sums
    reference: str | None = None  # what the campaign judged the engine against (None: torch)


def load_saved(path: Path, finding: int | None = None) -> Saved:
    """The graph in a corpus file, or finding `finding` of a report.json; CampaignError if unusable."""
    from gradcheck.campaign.json_input import read_json
    from gradcheck.campaign.settings import CampaignError
    from gradcheck.graphs import corpus_format
    from gradcheck.graphs.ir import GraphFormatError

    try:
        data = read_json(path, "file to replay")  # size and nesting limited
    except FileNotFoundError:
        raise CampaignError(f"{path}: cannot be read: no such file") from None
    if isinstance(data, dict) and data.get("tool") == "gradcheck":
        return saved_from_report(data, finding, str(path))
    if finding is not None:
        raise CampaignError(f"{path}: --finding needs a report.json; this is a graph file")
    try:
        graph = corpus_format.parse(json.dumps(data))
    except GraphFormatError as e:
        raise CampaignError(f"corpus file {path}: {e}") from None
    return Saved(graph, graph.meta.get("engine"), str(path))


def saved_from_report(report: dict[str, Any], index: int | None, path: str) -> Saved:
    """Finding `index` (default 0) of a report dictionary, read from `path` (in its errors and
    label), as a graph to replay; CampaignError when it has no such finding or graph."""
    from gradcheck.campaign.settings import CampaignError
    from gradcheck.graphs import corpus_format
    from gradcheck.graphs.ir import GraphFormatError

    findings = report.get("findings")
    if not isinstance(findings, list) or not findings:
        raise CampaignError(f"{path}: the report has no findings to replay")
    index = 0 if index is None else index
    if not 0 <= index < len(findings):
        raise CampaignError(
            f"{path}: --finding {index} is out of range; the report has {len(findings)} finding(s)"
        )
    entry = findings[index]
    try:
        graph = corpus_format.parse(json.dumps(entry["graph"]), non_finite=True)
    except (GraphFormatError, KeyError, TypeError) as e:
        raise CampaignError(f"{path}: finding {index}: graph: {e}") from None
    engine = report.get("settings", {}).get("engine")
    label = f"{path}, finding {index} ({entry.get('title', '')})"
    cause = entry.get("extra", {}).get("cause") if entry.get("phase") == "structure" else None
    settings = report.get("settings", {})
    return Saved(graph, engine, label, cause, settings.get("accumulation"), settings.get("reference"))


def replay(
    saved: Saved, engine: str | EngineAdapter | None, console: Console, conventions: str = "torch"
) -> int:
    """Check the saved graph with `engine` (a name or an adapter; the file's by default), print the
    numbers side by side; the exit status. In this process: `command` runs it in a worker."""
    from rich.text import Text

    from gradcheck.campaign.rebuilding import rebuilds, retaining
    from gradcheck.campaign.settings import CampaignError
    from gradcheck.campaign.structure import REBUILDS
    from gradcheck.campaign.validation import load_adapter
    from gradcheck.engines.adapter import EngineAdapter
    from gradcheck.parity.classify import classify_check
    from gradcheck.parity.compare import check_graph
    from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED
    from gradcheck.parity.wording import printable

    if conventions not in CONVENTIONS:
        raise CampaignError(f"--conventions must be one of {CONVENTIONS}, got {conventions!r}")
    if isinstance(engine, EngineAdapter):
        adapter = engine
    else:
        adapter = load_adapter(engine or saved.engine or "minigrad")
    if saved.accumulation is not None or saved.reference is not None:  # judged as the campaign judged it
        adapter = copy.copy(adapter)
        adapter.accumulation = saved.accumulation or adapter.accumulation
        adapter.reference = saved.reference or adapter.reference
    missing = sorted(set(saved.graph.ops()) - set(adapter.ops))
    if missing:
        raise CampaignError(f"engine {adapter.name!r} does not support op(s) {missing} of {saved.label}")
    if saved.graph.is_tensor and not adapter.tensor:
        raise CampaignError(f"engine {adapter.name!r} has no tensors; {saved.label} is a tensor graph")
    if saved.structural_cause is not None:
        return _replay_structure(saved, adapter, console)
    if saved.graph.meta.get("edge"):
        return _replay_edge(saved, adapter, console)
    kink = bool(saved.graph.meta.get("kink"))
    options = {"numeric": not kink, "second_order": not kink}
    twin, kept = retaining(adapter)
    checks = [check_graph(saved.graph, twin, **options) for _ in rebuilds(kept, REBUILDS)]
    kept.clear()
    failed = [c for c in checks if not c.passed]
    check = failed[0] if failed else checks[0]
    point = check.failure if check.failure is not None else saved.graph.instance(0)
    exact = adapter.reference == "exact"
    judged = " against the exact values" if exact else ""
    console.print(
        Text(f"replaying {printable(saved.label)} with engine {adapter.name}, {REBUILDS} rebuilds{judged}"),
        soft_wrap=True,
    )
    torch_off = next((c.torch_off for c in checks if c.torch_off), [])
    if not failed and torch_off and check.torch_off_instance is not None:
        point = check.torch_off_instance
    console.print(numbers_table(point, adapter, exact=exact))
    if not failed:
        for problem in torch_off:
            console.print(Text(f"  {printable(problem)}"))
        agrees = "is within its allowance of the exact values" if exact else "matches torch and the oracle"
        off = "; torch is off here (the engine is right)" if torch_off else " (fixed)"
        console.print(
            Text(f"agrees: the engine {agrees} here on all {REBUILDS} rebuilds{off}", style="green")
        )
        return 0
    if len(failed) < REBUILDS:
        for problem in check.problems:
            console.print(Text(f"  {printable(problem)}"))
        console.print(
            Text(
                f"still fails: nondeterministic (fails {len(failed)} of {REBUILDS} rebuilds)",
                style="red bold",
            )
        )
        return 1
    kind = classify_check(check, adapter).kind
    for problem in check.problems:
        console.print(Text(f"  {printable(problem)}"))
    if conventions == "subgradient" and kind in SUBGRADIENT_TOLERATED:
        console.print(Text(f"{kind}: a valid one-sided choice (note only under --conventions subgradient)"))
        return 0
    console.print(Text(f"still fails: {kind}", style="red bold"))
    return 1


def _replay_structure(saved: Saved, adapter: EngineAdapter, console: Console) -> int:
    """A structural finding is replayed by running the structural phase again: fixed when no
    finding of the same cause comes back (each of its checks rebuilds its graph several times)."""
    from rich.text import Text

    from gradcheck.campaign.phases import structure_phase
    from gradcheck.campaign.structure_reference import reference_named
    from gradcheck.parity.wording import printable

    reference = reference_named(saved.reference or "torch")
    console.print(
        Text(f"replaying {printable(saved.label)} with engine {adapter.name}: the structural phase")
    )
    report = structure_phase(adapter, reference=reference)
    for case in report.cases:
        console.print(
            Text(f"  {case.name}: {case.status}" + (f" ({printable(case.detail)})" if case.detail else ""))
        )
    same = [f for f in report.findings if f.structural_cause == saved.structural_cause]
    if not same:
        judge = "torch" if reference.name == "torch" else "the exact values"
        console.print(
            Text(f"agrees: the structural checks of this cause match {judge} (fixed)", style="green")
        )
        return 0
    console.print(Text(f"still fails: {same[0].kind}: {printable(same[0].where)}", style="red bold"))
    return 1


def _replay_edge(saved: Saved, adapter: EngineAdapter, console: Console) -> int:
    """An edge-value case is judged as the edge phase judged it: against torch alone, nan and inf
    included (central differences say nothing at inf or nan)."""
    import numpy as np
    from rich.text import Text

    from gradcheck.parity.edge_check import check_edge
    from gradcheck.parity.wording import printable

    problems = check_edge(adapter, saved.graph)
    console.print(Text(f"replaying {printable(saved.label)} with engine {adapter.name}"), soft_wrap=True)
    with np.errstate(all="ignore"):
        console.print(numbers_table(saved.graph, adapter, oracle_column=False))
    if not problems:
        console.print(Text("agrees: the engine matches torch at this edge value (fixed)", style="green"))
        return 0
    for problem in problems:
        console.print(Text(f"  {printable(problem.message)}"))
    console.print(Text(f"still fails: {problems[0].kind}", style="red bold"))
    return 1


def numbers_table(
    graph: Graph, adapter: EngineAdapter, oracle_column: bool = True, exact: bool = False
) -> Table:
    """Forward values and cotangent-weighted gradients: engine, torch, precise oracle (left empty
    without `oracle_column`: at an edge value there is none), or with `exact` the exact values
    (forward values and H·v too)."""
    import numpy as np

    from gradcheck.checker.flat import flat_vector
    from gradcheck.cli.console import numbers_table as render_numbers
    from gradcheck.parity.classify import torch_at
    from gradcheck.parity.trust import precise_gradient

    cotangent = list(graph.cotangent) if graph.cotangent is not None else [1.0] * len(graph.outputs)
    values = graph.input_values(0)
    title = "at " + ", ".join(f"{i.name}={_short(v)}" for i, v in zip(graph.inputs, values))
    caption = None
    rows: list[tuple[str, str, str, str]] = []
    reference = torch_at(graph, values, cotangent)
    try:
        forward, grads = adapter.run(graph, values, cotangent)
        fwd_e, grad_e = flat_vector(forward), flat_vector(grads)
    except Exception as e:
        fwd_e = grad_e = None
        caption = f"engine raised {type(e).__name__}: {e}"
    ones = [np.ones_like(v) if isinstance(v, np.ndarray) else 1.0 for v in values]
    oracle = exact_forward = exact_hvp = None
    if exact:
        exact_forward, oracle, exact_hvp = _exact_numbers(
            graph, values, cotangent, ones, adapter.create_graph
        )
    elif oracle_column:
        try:
            oracle, _ = precise_gradient(graph, cotangent)
        except Exception:
            oracle = np.full(reference.grads.shape[0], np.nan)
    for j, o in enumerate(graph.outputs):
        rows.append(
            (
                f"value {graph.name_of(o)}",
                _num(fwd_e, j),
                _num(reference.forward[:, 0], j),
                _num(exact_forward, j) if exact else "",
            )
        )
    labels = [f"{i.name}{list(ix) if i.shape else ''}" for i in graph.inputs for ix in np.ndindex(*i.shape)]
    for k, label in enumerate(labels):
        rows.append((f"grad {label}", _num(grad_e, k), _num(reference.grads[:, 0], k), _num(oracle, k)))
    if adapter.create_graph:
        hvp_t = torch_at(graph, values, cotangent, ones).hvp
        try:
            hvp_e = flat_vector(adapter.run_hvp(graph, values, cotangent, ones))
        except Exception:
            hvp_e = None
        for k, label in enumerate(labels):
            hvp = None if hvp_t is None else hvp_t[:, 0]
            judged = _num(exact_hvp, k) if exact else ""
            rows.append((f"hvp {label} (direction ones)", _num(hvp_e, k), _num(hvp, k), judged))
    return render_numbers(title, rows, caption, judge="exact" if exact else "oracle")


def _exact_numbers(
    graph: Graph, values: list[Any], cotangent: list[Any], direction: list[Any], hvp: bool
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """The exact forward values, gradients and (with `hvp`) H·v along `direction` at one point."""
    import numpy as np

    from gradcheck.parity.exact import run_exact

    batch = [np.asarray(v, dtype=np.float64)[None] for v in values]
    if graph.is_tensor:
        cot: Any = [np.asarray(c, dtype=np.float64)[None] for c in cotangent]
        along: Any = [np.asarray(d, dtype=np.float64)[None] for d in direction] if hvp else None
    else:
        cot = np.asarray(cotangent, dtype=np.float64)[:, None]
        along = np.asarray(direction, dtype=np.float64)[:, None] if hvp else None
    try:
        with np.errstate(all="ignore"):
            exact = run_exact(graph, batch, cot, along)
    except Exception:
        return None, None, None
    return exact.forward[:, 0], exact.grads[:, 0], None if exact.hvp is None else exact.hvp[:, 0]


def _num(values: np.ndarray | None, k: int) -> str:
    if values is None or k >= len(values):
        return "–"
    return repr(float(values[k]))


def _short(v: Any) -> str:
    import numpy as np

    return repr(v.tolist()) if isinstance(v, np.ndarray) else repr(float(v))
