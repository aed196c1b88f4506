"""What the commands show on the console (rich): the campaign's header, progress bars, findings,
per-op table and failing graphs; the gate's verdict table and outcome; replay's numbers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich import box
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from gradcheck.campaign import accounting, tiers
from gradcheck.campaign.mistake_match import local_lines
from gradcheck.campaign.overview import (
    EDGE_HEADING,
    EDGE_REGIONS,
    NOTES_HEADING,
    SHOWN_PROBLEMS,
    Overview,
    Row,
    finding_code,
    finding_text,
    overview,
)
from gradcheck.campaign.phases import Progress as ProgressCallback
from gradcheck.campaign.records import BOUND_METRIC, GRAD_METRICS, CampaignResult
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.verdict import GateResult, OpVerdict, as_figure
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.parity.errors import BOUND_SAFETY
from gradcheck.parity.wording import figure, printable

# --- `run` ------------------------------------------------------------------------------------------


def header(settings: Settings, ops_drawn: Sequence[str], cluster: str | None = None) -> Panel:
    """What the user is looking at: engine, graphs, seed, where it runs (the jobs, or the Dask
    `cluster`: `Cluster.describe`), ops and what is being checked."""
    where = f"random graphs on the Dask cluster at {cluster}" if cluster else f"{settings.jobs} job(s)"
    kind = "tensor" if settings.tensor else "scalar"
    ops = ", ".join(ops_drawn)
    if settings.ops is None:
        ops = f"all {len(ops_drawn)} {kind} ops the engine supports ({ops})"
    text = (
        f"[bold]gradcheck parity campaign[/bold]: engine [cyan]{escape(settings.engine)}[/cyan], "
        f"{settings.graphs} random {kind} graphs ({settings.points} input points each), "
        f"seed {settings.seed}, {escape(where)}\n"
        f"Ops: {escape(ops)}.\n" + checking(settings)
    )
    return Panel(text, expand=False)


def checking(settings: Settings) -> str:
    """What each graph is checked against, in a sentence of the header."""
    if settings.reference != "exact":
        return (
            "Checking each graph's gradients against torch.autograd (float64) and a numerical "
            "oracle (finite differences), and its forward value against torch."
        )
    precision = "float32" if settings.dtype == "float32" else "float64"
    witness = "" if settings.dtype == "float32" else " and against a numerical oracle (finite differences)"
    return (
        "Reference: the exact values (mpmath, rounded once). Checking each graph's forward values, "
        f"gradients and second derivatives against them, each entry allowed the rounding of any correct "
        f"{precision} evaluation{witness}; torch.autograd's answers are judged beside the engine's, so "
        "each difference says who is off: the engine, torch, or both."
    )


# The phases that get a progress bar, and its label (the other phases are quick).
PHASE_BARS = {
    "structure": "checking the graph code (structural phase)",
    "isolate": "checking each op alone",
    "check": "checking graphs",
    "explain": "explaining failures by findings",
    "shrink": "shrinking the unexplained ones",
}


# The phases that run on a Dask cluster when there is one (`campaign.cluster`): their bars name it.
CLUSTER_PHASES = ("check", "explain", "shrink")


@contextmanager
def progress_bars(console: Console, cluster: str | None = None) -> Iterator[ProgressCallback]:
    """A campaign's progress callback that draws a bar per phase of `PHASE_BARS` as it starts (the
    random graphs' always, the others' only when they have work); the bars of the phases on a
    Dask `cluster` (`Cluster.describe`) name it."""
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
                label = PHASE_BARS[phase]
                if cluster is not None and phase in CLUSTER_PHASES:
                    label = f"{label} on {cluster}"
                tasks[phase] = bar.add_task(escape(label), total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield progress


OP_TABLE_NOTE = (
    "Errors are over the evidence about the op: its op-isolation checks and the graphs that used it "
    "where no other op has a finding (not the op's own error): p99 is what 99% of them stay below, "
    "max the single worst graph, which an ill-conditioned graph can make large without any failure. "
    "Failures: the graphs whose minimal failing graph contains the op, and the findings (distinct "
    "problems) whose minimal graph contains it, from any phase (edge values and the op-isolation "
    "pass too), graphs / findings. ×bound: the largest difference from torch in those graphs as a "
    "multiple of its entry's rounding bound (at most; an engine passes up to "
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
    exact = result.settings.reference == "exact"  # the engine's errors are against the exact values
    if exact:
        caption = caption.replace("difference from torch", "difference from the exact value")
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
        against = metric.split("_")[-1]
        against = "exact" if exact and against == "torch" else against
        label = f"{'abs' if '_abs_' in metric else 'rel'} err vs {against}"
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
    return figure(x, places=1)


# The console summary's height: a terminal's first screen (a 40-item campaign's summary fits 40
# lines at 80 columns). What does not fit is collapsed to a line; every detail follows.
SUMMARY_LINES = 40
# The widest the summary's tables grow on a wide terminal (longer titles are cut with "…").
SUMMARY_WIDTH = 120


def print_summary(
    result: CampaignResult, console: Console, unexplained: Mapping[str, Any] | None = None
) -> None:
    """The first screen (`gradcheck.campaign.overview`): the verdict in a line, a table of the
    bugs, graph-code findings and adapter faults (one line each), the adapters' fixes, the edge
    behaviour as one compact table (one line per op), conventions as notes and the unexplained
    graphs in a line; within `SUMMARY_LINES` lines at the console's width."""
    view = overview(result.findings, unexplained)
    width = min(console.width, SUMMARY_WIDTH)
    for part in summary_parts(result, view, width, console):
        console.print(part, width=width)


def any_order_line(result: CampaignResult) -> str:
    """How many points differed from torch beyond torch's rounding yet stayed within the rounding
    of another evaluation order of the exact value: no failure, said in a line ("" when none)."""
    points = sum(r.points_any_order for r in result.records)
    if not points:
        return ""
    return (
        f"{points} point(s) differ from torch beyond torch's rounding, within the rounding of another "
        f"evaluation order of the exact value: not failures (docs/findings.md)"
    )


def summary_parts(
    result: CampaignResult, view: Overview, width: int, console: Console
) -> list[RenderableType]:
    """The summary's parts at `width`, collapsed until they fit `SUMMARY_LINES`: first the edge
    table to a line, then the notes, then the table's rows of the biggest tier, fewest graphs first."""
    head = [Text(""), Text(verdict_line(result, view), style="red bold" if not result.passed else "bold")]
    head += [Text(line) for line in [any_order_line(result)] if line]
    fixes = [Text(f"fix #{r.number}: {r.finding.fix}") for r in view.fixes]
    tail = [Text(view.unexplained_line(), style="red")] if view.unexplained else []
    edges: list[RenderableType] = [Text(""), *edge_table(view, width)] if view.edges else []
    notes: list[RenderableType] = [Text(""), notes_text(view)] if view.notes else []
    rows = list(view.rows)

    def parts() -> list[RenderableType]:
        table = [rows_table(rows, width)] if rows else []
        left = [r for r in view.rows if r not in rows]
        tiers_left = ", ".join(dict.fromkeys(r.tier for r in left))
        numbers = _numbers([r.number for r in left])
        more = f"… and {len(left)} more ({tiers_left}): {numbers}, in the details below"
        cut = [Text(more, style="italic")] if left else []
        return [*head, *table, *cut, *fixes, *tail, *edges, *notes]

    def height(renderables: list[RenderableType]) -> int:
        options = console.options.update(width=width)
        return sum(len(console.render_lines(r, options, pad=False)) for r in renderables)

    if view.edges and height(parts()) > SUMMARY_LINES:
        numbers = [n for row in view.edges for n in row.numbers]
        ops = ", ".join(row.op for row in view.edges)
        edges = [Text(f"Edge behaviour of {len(view.edges)} op(s) ({ops}): {_numbers(numbers)}, below.")]
    if view.notes and height(parts()) > SUMMARY_LINES:
        numbers = _numbers([r.number for r in view.notes])
        notes = [Text(f"{len(view.notes)} convention(s) at kinks or ties: {numbers}.")]
    while len(rows) > 1 and height(parts()) > SUMMARY_LINES:
        rows.remove(_least(rows))
    return parts()


def _least(rows: list[Row]) -> Row:
    """The row to leave out first: the last of the tier with the most rows (the bugs showing in the
    fewest graphs, before any graph-code finding or adapter fault); where torch is off, last of all
    (the screen leads with those)."""
    kept = [r for r in rows if r.tier != tiers.TORCH_OFF] or rows
    counts = {tier: sum(r.tier == tier for r in kept) for tier in dict.fromkeys(r.tier for r in kept)}
    most = max(counts, key=lambda tier: counts[tier])
    return [r for r in kept if r.tier == most][-1]


def verdict_line(result: CampaignResult, view: Overview) -> str:
    """The campaign's verdict in a line (`Overview.verdict`)."""
    return view.verdict(result.passed, len(result.failures), len(result.records))


def rows_table(rows: Sequence[Row], width: int) -> Table:
    """One line per finding: its number, tier, what it is about, what happened, its cases (the
    graphs, checks and edge-value cases of every phase that show it); titles too long for `width`
    are cut with "…" (in full in the details)."""
    number_w = max(1, *(len(str(r.number)) for r in rows))
    tier_w = max(len("tier"), *(len(r.tier) for r in rows))
    cases_w = max(len("cases"), *(len(str(r.graphs)) for r in rows))
    free = width - number_w - tier_w - cases_w - _GAP * 4
    # what a finding is about first: the outcome gets what is left, at least `_OUTCOME_WIDTH`
    outcome_natural = max(len("what happened"), *(len(r.outcome) for r in rows))
    cause_w = max(10, min(max(len(r.cause) for r in rows), free - min(outcome_natural, _OUTCOME_WIDTH)))
    outcome_w = max(10, free - cause_w)
    table = Table(
        box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True, header_style="bold"
    )
    table.add_column("#", justify="right", width=number_w, no_wrap=True)
    table.add_column("tier", width=tier_w, no_wrap=True)
    table.add_column("finding", max_width=cause_w, no_wrap=True, overflow="ellipsis")
    table.add_column("what happened", max_width=outcome_w, no_wrap=True, overflow="ellipsis")
    table.add_column("cases", justify="right", width=cases_w, no_wrap=True)
    for r in rows:
        style = _TIER_STYLES.get(r.tier, "")
        outcome = _shortened(r.outcome, outcome_w)
        table.add_row(str(r.number), Text(r.tier, style=style), Text(r.cause), Text(outcome), str(r.graphs))
    return table


# Between two columns of a summary table: the padding (collapsed) and the (blank) rule.
_GAP = 2
# The least the summary table's "what happened" gets when titles are long ("raised Overflow/Zer…").
_OUTCOME_WIDTH = 18
_TIER_STYLES = {
    tiers.TORCH_OFF: "blue bold",
    tiers.BUG: "red bold",
    tiers.GRAPH_CODE: "red",
    tiers.ADAPTER: "magenta",
}


def edge_table(view: Overview, width: int) -> list[RenderableType]:
    """The edge behaviour in a heading and a table: one line per op, a column per region, what
    the engine did there in each cell ("raises" for "raises ZeroDivision/Overflow", then cut
    with "…", when the columns must share too few)."""
    regions = view.regions
    op_w = min(16, max(len("op"), *(len(r.op) for r in view.edges)))
    cases_w = max(len("cases"), *(len(str(r.graphs)) for r in view.edges))
    natural = [
        max(len(EDGE_REGIONS[region]), *(len(r.cells.get(region, "")) for r in view.edges))
        for region in regions
    ]
    widths = _shared(natural, width - op_w - cases_w - _GAP * (len(regions) + 1))
    table = Table(
        box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True, header_style="bold"
    )
    table.add_column("op", max_width=op_w, no_wrap=True, overflow="ellipsis")
    for region, cell_w in zip(regions, widths):
        table.add_column(EDGE_REGIONS[region], max_width=cell_w, no_wrap=True, overflow="ellipsis")
    table.add_column("cases", justify="right", width=cases_w, no_wrap=True)
    for row in view.edges:
        cells = (_fitted(row.cells.get(region, ""), w) for region, w in zip(regions, widths))
        table.add_row(row.op, *cells, str(row.graphs))
    numbers = [n for row in view.edges for n in row.numbers]
    heading = Text(f"{EDGE_HEADING}; {_numbers(numbers)}:", style="yellow")
    return [heading, table]


def _shared(natural: Sequence[int], budget: int, least: int = 6) -> list[int]:
    """Column widths within `budget`: each its natural width while they fit, else the widest
    narrowed first (none below `least`)."""
    widths = list(natural)
    while sum(widths) > budget and max(widths) > least:
        widths[widths.index(max(widths))] -= 1
    return widths


def _fitted(cell: str, width: int) -> Text:
    """An edge cell in `width`: "raises ZeroDivisionError/OverflowError" becomes "raises
    ZeroDivision/Overflow", then "raises", while too long."""
    cell = _shortened(cell, width)
    if len(cell) > width:
        cell = re.sub(r"raises [\w/]+", "raises", cell)
    return Text(cell)


def _shortened(text: str, width: int) -> str:
    """Exception names without "Error" when `text` is wider than `width` ("raised Overflow")."""
    return re.sub(r"(\w)Error\b", r"\1", text) if len(text) > width else text


def notes_text(view: Overview) -> Text:
    return Text(f"{NOTES_HEADING}: {view.notes_line()}.", style="yellow")


def _numbers(numbers: Sequence[int]) -> str:
    """Findings by number, runs as ranges: "finding 3", "findings 3-9", "findings 4-5, 7, 9-11"."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    spans = [str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs]
    return ("finding " if len(numbers) == 1 else "findings ") + ", ".join(spans)


def print_findings(result: CampaignResult, console: Console) -> None:
    """Each finding in detail, after the summary and in its numbering (`print_finding`)."""
    for i in range(len(result.findings)):
        print_finding(result, i, console)


def print_finding(result: CampaignResult, i: int, console: Console) -> None:
    """Finding `i` in detail: title, tier, kind and check, what it covers, its first problems, the
    fix (an adapter's fault), the replay command (never wrapped: a pasted command must stay one
    command) and, for what the engine's author fixes (a bug, its graph code), the code that
    reproduces it. A heading is not wrapped either."""
    f = result.findings[i]
    failing = f.is_failure(result.settings.conventions)
    label = "finding" if failing or f.tier == tiers.TORCH_OFF else "note"
    style = _TIER_STYLES.get(f.tier, "yellow bold" if failing else "yellow")
    heading = Text(f"\n{label} {i} · {f.tier} · {f.title} [{f.kind}, {f.check}]", style=style)
    console.print(heading, soft_wrap=True)  # whole, as logs are searched for a title
    console.print(Text(f"  {f.covers}"))
    if f.fix:
        console.print(Text(f"  fix: {f.fix}"))
    for problem in f.problems[:SHOWN_PROBLEMS]:
        console.print(Text(f"  {printable(problem)}"))
    for line in local_lines(f, SHOWN_PROBLEMS):
        console.print(Text(f"  {line}"))
    console.print(Text(f"  replay: {f.repro}"), soft_wrap=True)
    if f.tier in (tiers.TORCH_OFF, tiers.BUG, tiers.GRAPH_CODE):
        print_code(finding_code(f), console)


def print_code(code: str, console: Console) -> None:
    """Python as it is, highlighted, never wrapped (a wrapped line is not the same program)."""
    text = Syntax("", "python", theme="ansi_dark").highlight(code)
    text.rstrip()
    console.print(text, soft_wrap=True)


def print_unexplained(result: CampaignResult, console: Console) -> None:
    """The unexplained graphs as one entry, after the findings: how many and why, their indices,
    the smallest in full (nothing when every failing graph has its finding)."""
    left = accounting.unexplained(result.records)
    if left is None:
        return
    why = "; ".join(f"{n}: {reason}" for reason, n in left.reasons.items())
    shown = ", ".join(map(str, left.indices[:20])) + (" ..." if left.graphs > 20 else "")
    console.print(
        Text(
            f"\nunexplained graphs: {left.graphs} failing graph(s) that no finding explains", style="red bold"
        )
    )
    console.print(Text(f"  {why}; graphs {shown}"), soft_wrap=True)
    smallest = left.smallest
    console.print(Text(f"  the smallest, graph {smallest.index} (ops: {', '.join(smallest.ops)}):"))
    for problem in smallest.problems[:3]:
        console.print(Text(f"  {printable(problem)}"))
    if smallest.failure is not None:
        print_code(graph_snippet(Graph.from_dict(smallest.failure.graph), "torch"), console)


def print_graphs(result: CampaignResult, console: Console) -> None:
    """The individual failing graphs, after the findings, folded: each finding's first shrunk graph
    in full, its other graphs one line each, the graphs explained without shrinking listed by
    index (the unexplained ones have their own entry: `print_unexplained`)."""
    finding_of = {i: k for k, f in enumerate(result.findings) for i in f.graph_indices}
    shown_in_full: set[int | None] = set()
    unshrunk = []
    for record in result.failures:
        f = record.failure
        if f is None or f.shrunk_snippet is None:
            if record.index in finding_of:
                unshrunk.append(record.index)
            continue
        k = finding_of.get(record.index)
        saved = f", saved to {f.corpus_file}" if f.corpus_file else ""
        if k in shown_in_full and k is not None:
            ops = ", ".join(f.shrunk_ops or ())
            line = f"graph #{record.index} fails: finding {k}; shrunk to (ops: {ops}){saved}"
            console.print(Text(line), soft_wrap=True)
            continue
        shown_in_full.add(k)
        console.print(f"\n[red bold]graph #{record.index} fails:[/red bold]")
        for problem in record.problems:
            console.print(Text(f"  {printable(problem)}"))
        console.print(f"shrunk to (ops: {', '.join(f.shrunk_ops or ())}):")
        print_code(f.shrunk_snippet, console)
        if f.corpus_file:
            console.print(Text(f"saved to {f.corpus_file}"), soft_wrap=True)
    if unshrunk:
        shown = ", ".join(map(str, unshrunk[:20])) + (" ..." if len(unshrunk) > 20 else "")
        console.print(
            f"\n{len(unshrunk)} more failing graph(s), each explained by its finding above without "
            f"shrinking: {shown}"
        )


def print_verdict(
    result: CampaignResult, console: Console, unexplained: Mapping[str, Any] | None = None
) -> None:
    """The run's last line: the verdict with each tier's count (the summary above has the table)."""
    view = overview(result.findings, unexplained)
    colour = "green" if result.passed else "red"
    console.print(Text(f"\n{verdict_line(result, view)}; {result.seconds:.1f} s.", style=colour))


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
    # a long op name (binary_cross_entropy_with_logits) is cut, never the figures
    table.add_column("op", style="bold", no_wrap=True, overflow="ellipsis", max_width=18)
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
    """The gate's console report, the verdict first (`GateResult.verdict_lines`: each new finding,
    failing op row and gate-wide problem in a line), then the per-op tables, the new findings in
    full (problems and repro), the findings still accepted or gone, new coverage, the summary."""
    for line in outcome.verdict_lines():
        console.print(Text(line, style="red bold" if line.startswith("new finding") else "red"))
    for part in dict.fromkeys(v.part for v in outcome.verdicts):
        console.print(verdict_table(part, [v for v in outcome.verdicts if v.part == part]))
    for fv in outcome.new_findings:
        console.print(Text(f"\nnew finding ({fv.part}):", style="red bold"))
        text, _, code = finding_text(fv.finding).partition("\n\n")
        for line in text.splitlines():  # the replay command whole, the rest in the log's width
            console.print(Text(line), soft_wrap=line.startswith("reproduce: "))
        print_code(code, console)
    accepted = [f for f in outcome.findings if not f.failed]
    if accepted:
        titles = "; ".join(f.finding.title for f in accepted)
        console.print(Text(f"{len(accepted)} finding(s) in the baseline, still present: {titles}"))
    for title in outcome.gone:
        console.print(Text(f"gone since the baseline (fixed? --update-baseline records it): {title}"))
    for line in outcome.new_coverage:
        console.print(Text(line))
    console.print(Text(outcome.summary(), style="green" if outcome.passed else "red"))


# --- `replay` ---------------------------------------------------------------------------------------


def numbers_table(
    title: str, rows: Sequence[tuple[str, str, str, str]], caption: str | None = None, judge: str = "oracle"
) -> Table:
    """Rows of (quantity, engine, torch, oracle), the numbers side by side; `judge` heads the last
    column ("exact" when it holds the exact values)."""
    table = Table(title=title, caption=caption)
    for column in ("quantity", "engine", "torch", judge):
        table.add_column(column, justify="left" if column == "quantity" else "right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table
