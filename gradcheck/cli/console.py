"""What the commands show on the console (rich): the campaign's header, progress bars, findings,
per-op table and failing graphs; the gate's verdict table and outcome; replay's numbers."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from gradcheck.campaign.findings import summary
from gradcheck.campaign.gate import FLOORS, GateResult, OpVerdict, as_figure
from gradcheck.campaign.phases import Progress as ProgressCallback
from gradcheck.campaign.records import BOUND_METRIC, GRAD_METRICS
from gradcheck.campaign.repro import finding_text
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.statistics import CampaignResult
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.parity.errors import BOUND_SAFETY
from gradcheck.printable import printable

# --- `run` ------------------------------------------------------------------------------------------


def header(settings: Settings, ops_drawn: Sequence[str]) -> Panel:
    """What the user is looking at: engine, graphs, seed, ops and what is being checked."""
    kind = "tensor" if settings.tensor else "scalar"
    ops = ", ".join(ops_drawn)
    if settings.ops is None:
        ops = f"all {len(ops_drawn)} {kind} ops the engine supports ({ops})"
    text = (
        f"[bold]gradcheck parity campaign[/bold]: engine [cyan]{escape(settings.engine)}[/cyan], "
        f"{settings.graphs} random {kind} graphs ({settings.points} input points each), "
        f"seed {settings.seed}, {settings.jobs} job(s)\n"
        f"Ops: {escape(ops)}.\n"
        "Checking each graph's gradients against torch.autograd (float64) and a numerical "
        "oracle (finite differences), and its forward value against torch."
    )
    return Panel(text, expand=False)


# The phases that get a progress bar, and its label (the other phases are quick).
PHASE_BARS = {
    "structure": "checking the graph code (structural phase)",
    "isolate": "checking each op alone",
    "check": "checking graphs",
    "shrink": "shrinking failures",
    "blame": "blaming the other failures",
}


@contextmanager
def progress_bars(console: Console) -> Iterator[ProgressCallback]:
    """A campaign's progress callback that draws a bar per phase of `PHASE_BARS` as it starts (the
    random graphs' always, the others' only when they have work)."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        tasks: dict[str, int] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in PHASE_BARS:
                return
            if phase not in tasks:
                if phase != "check" and total == 0:
                    return
                tasks[phase] = bar.add_task(PHASE_BARS[phase], total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield progress


OP_TABLE_NOTE = (
    "Errors are over the graphs that used the op (not the op's own error): p99 is what 99% of "
    "them stay below, max the single worst graph, which an ill-conditioned graph can make large "
    "without any failure. Failures: the graphs whose minimal failing graph contains the op, and the "
    "findings (distinct problems) whose minimal graph contains it, from any phase (edge values and "
    "the op-isolation pass too), graphs / findings. ×bound: the largest difference from torch in "
    "those graphs as a multiple of its entry's rounding bound (at most; an engine passes up to "
    f"{BOUND_SAFETY:g}): how much margin the op has."
)


# Below this console width the per-op table leaves out the absolute errors (in the reports).
WIDE_TABLE = 110


def op_table(result: CampaignResult, width: int = 80) -> Table:
    """One line per op: graphs, p99 / max of each error, failures. In fewer than WIDE_TABLE columns
    (a CI log is 80) only the relative errors are shown; the absolute ones are in the reports."""
    wide = width >= WIDE_TABLE
    metrics = GRAD_METRICS if wide else ("max_rel_err_torch", "max_rel_err_numeric")
    caption = OP_TABLE_NOTE if wide else OP_TABLE_NOTE + " Absolute errors: in report.json and report.html."
    table = Table(
        title="Per op: graphs that used it, their errors (p99 / max), failures",
        caption=caption,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("op", style="bold", no_wrap=True)
    table.add_column("graphs", justify="right", no_wrap=True)
    for metric in metrics:
        label = f"{'abs' if '_abs_' in metric else 'rel'} err vs {metric.split('_')[-1]}"
        table.add_column(f"{label}\np99 / max", justify="right", no_wrap=True)
    table.add_column("×bound\nmax", justify="right", no_wrap=True)
    table.add_column("failures\ngr./find.", justify="right", no_wrap=True)
    conventions = result.settings.conventions
    for op, st in result.ops.items():
        figures = [f"{_fmt(st.quantile(m, 0.99))} / {_fmt(st.maxima[m])}" for m in metrics]
        figures.append(_multiple(st.maxima.get(BOUND_METRIC)))
        found = sum(1 for f in result.findings if op in f.ops and f.is_failure(conventions))
        failures = f"{st.failures} / {found}"
        colour = "red" if st.failures or found else "default"
        table.add_row(op, str(st.graphs), *figures, f"[{colour}]{failures}[/{colour}]")
    return table


def _multiple(x: float | None) -> str:
    """A multiple of the rounding bound: 0.31, 412, inf."""
    if x is None:
        return "–"
    return f"{x:.2g}" if x < 100 else f"{x:.3g}"


def _fmt(x: float | None) -> str:
    if x is None:
        return "–"
    return "0" if x == 0 else f"{x:.1e}"


def print_findings(result: CampaignResult, console: Console) -> None:
    """The distinct problems first: title, kind, how many graphs, which, and how to reproduce."""
    conventions = result.settings.conventions
    if not result.findings:
        return
    console.print(Text(f"\n{summary(result.findings, conventions)}", style="bold"))
    for i, f in enumerate(result.findings):
        style = "red bold" if f.is_failure(conventions) else "yellow bold"
        label = "finding" if f.is_failure(conventions) else "note"
        console.print(Text(f"\n{label} {i}: {f.title} [{f.kind}, {f.check}]", style=style))
        console.print(Text(f"  {f.covers}"))
        for problem in f.problems[:3]:
            console.print(Text(f"  {printable(problem)}"))
        console.print(Text(f"  replay: {f.repro}"))
        graph = Graph.from_dict(f.graph)
        code = f.snippet or graph_snippet(graph, "torch", second_order=f.check == "second-derivative")
        console.print(Syntax(code, "python", theme="ansi_dark", word_wrap=True))


def print_graphs(result: CampaignResult, console: Console) -> None:
    """The individual failing graphs, after the findings, folded: each finding's first shrunk graph
    in full, its other graphs one line each, the unshrunk ones listed by index."""
    finding_of = {i: k for k, f in enumerate(result.findings) for i in f.graph_indices}
    shown_in_full: set[int | None] = set()
    unshrunk = []
    for record in result.failures:
        f = record.failure
        if f is None or f.shrunk_snippet is None:
            unshrunk.append(record.index)
            continue
        k = finding_of.get(record.index)
        saved = f", saved to {f.corpus_file}" if f.corpus_file else ""
        if k in shown_in_full and k is not None:
            ops = ", ".join(f.shrunk_ops or ())
            console.print(Text(f"graph #{record.index} fails: finding {k}; shrunk to (ops: {ops}){saved}"))
            continue
        shown_in_full.add(k)
        console.print(f"\n[red bold]graph #{record.index} fails:[/red bold]")
        for problem in record.problems:
            console.print(Text(f"  {printable(problem)}"))
        console.print(f"shrunk to (ops: {', '.join(f.shrunk_ops or ())}):")
        console.print(Syntax(f.shrunk_snippet, "python", theme="ansi_dark", word_wrap=True))
        if f.corpus_file:
            console.print(Text(f"saved to {f.corpus_file}"))
    if unshrunk:
        shown = ", ".join(map(str, unshrunk[:20])) + (" ..." if len(unshrunk) > 20 else "")
        console.print(
            f"\n{len(unshrunk)} more failing graph(s) not shrunk (raise --max-shrink to see them; each is "
            f"counted in its finding above): {shown}"
        )


def print_verdict(result: CampaignResult, console: Console) -> None:
    """The run's last lines' first: how many graphs disagree, the distinct problems, the time."""
    failures = result.failures
    if not failures:
        verdict = f"[green]all {len(result.records)} graphs agree[/green]"
    else:
        colour = "red" if not result.passed else "yellow"
        verdict = f"[{colour}]{len(failures)} of {len(result.records)} graphs disagree[/{colour}]"
    problems = escape(summary(result.findings, result.settings.conventions))
    console.print(f"\n{verdict}; {problems}; {result.seconds:.1f} s.")


# --- `gate` -----------------------------------------------------------------------------------------


def _status(v: OpVerdict) -> str:
    if v.failed:
        return "[red]FAIL[/red]"
    if v.before is None:
        return "new"
    if v.improved:
        return "improved"
    return "changed" if v.changed else "ok"


def verdict_table(part: str, verdicts: Sequence[OpVerdict]) -> Table:
    """One line per op of a part, in 80 columns: p99 relative errors before → after, the verdict."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title=f"{part}: p99 relative error, baseline → now")
    table.add_column("op", style="bold", no_wrap=True)
    table.add_column("graphs", justify="right", no_wrap=True)
    table.add_column("vs torch", justify="right", no_wrap=True)
    table.add_column("vs numeric", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for v in verdicts:
        cells = []
        for metric in ("p99_rel_err_torch", "p99_rel_err_numeric"):
            before = _fmt(as_figure(v.before.get(metric))) if v.before else "–"
            after = _fmt(as_figure(v.after.get(metric))) if v.after else "–"
            cells.append(f"{before} → {after}")
        table.add_row(v.op, str(v.after["graphs"] if v.after else 0), *cells, _status(v))
    return table


def print_outcome(outcome: GateResult, console: Console) -> None:
    """The gate's console report: the table, then what failed and why, then the verdict."""
    for part in dict.fromkeys(v.part for v in outcome.verdicts):
        console.print(verdict_table(part, [v for v in outcome.verdicts if v.part == part]))
    for v in outcome.verdicts:
        if v.failed:
            console.print(Text(f"FAIL {v.part} {v.op}: " + "; ".join(v.reasons), style="red"))
    for problem in outcome.problems:
        console.print(Text(f"FAIL: {problem}", style="red"))
    for fv in outcome.new_findings:
        console.print(Text(f"\nnew finding ({fv.part}):", style="red bold"))
        console.print(Text(finding_text(fv.finding)))
    accepted = [f for f in outcome.findings if not f.failed]
    if accepted:
        titles = "; ".join(f.finding.title for f in accepted)
        console.print(Text(f"{len(accepted)} finding(s) in the baseline, still present: {titles}"))
    for title in outcome.gone:
        console.print(Text(f"gone since the baseline (fixed? --update-baseline records it): {title}"))
    failed = sum(v.failed for v in outcome.verdicts)
    changed = sum(1 for v in outcome.verdicts if not v.failed and v.changed)
    verdict = "[green]PASS[/green]" if outcome.passed else "[red]FAIL[/red]"
    seconds = f"; {outcome.seconds:.1f} s" if outcome.seconds is not None else ""
    console.print(
        f"gate: {verdict}: {len(outcome.verdicts)} op rows, {failed} failed, {changed} changed within "
        f"limits (floors {', '.join(f'{f:g}' for f in sorted(set(FLOORS.values())))}); "
        f"{len(outcome.new_findings)} new finding(s){seconds}"
    )


# --- `replay` ---------------------------------------------------------------------------------------


def numbers_table(title: str, rows: Sequence[tuple[str, str, str, str]], caption: str | None = None) -> Table:
    """Rows of (quantity, engine, torch, oracle), the numbers side by side."""
    table = Table(title=title, caption=caption)
    for column in ("quantity", "engine", "torch", "oracle"):
        table.add_column(column, justify="left" if column == "quantity" else "right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table
