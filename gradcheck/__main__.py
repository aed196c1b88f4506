"""`python -m gradcheck run | replay | corpus add`: the parity campaign from the command line.

Exit status: 0 when nothing fails, 1 when some finding fails (or a replayed graph still fails),
2 on bad input (an unknown engine or op, a malformed corpus file, an unusable --out or --corpus,
an engine adapter that raises).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from gradcheck import campaign
from gradcheck.arguments import positive_int as _positive
from gradcheck.arguments import seed_int as _seed
from gradcheck.campaign import CampaignError, CampaignResult, Settings
from gradcheck.campaign.corpus import add_to_corpus, check_corpus_directory, save_findings
from gradcheck.campaign.edges import with_edge_findings as joined_with_edges
from gradcheck.campaign.findings import CONVENTIONS, replay_command, summary
from gradcheck.campaign.report_html import write_html
from gradcheck.campaign.report_json import build_report, write_report
from gradcheck.campaign.report_junit import run_suite, write_junit
from gradcheck.campaign.report_markdown import run_markdown
from gradcheck.campaign.workers import capped_jobs
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import canonical_spec, import_root
from gradcheck.engines.snippets import graph_snippet
from gradcheck.engines.value_class import ValueClassAdapter, adapter_source
from gradcheck.gate_command import add_gate_parser, check_output_files, ci_output_options, gate_command
from gradcheck.graphs.ir import Graph
from gradcheck.printable import printable
from gradcheck.replay import load_saved, replay

# `corpus add` copies findings into the regression corpus the parity suite replays.
SUITE_CORPUS = Path("parity_tests/corpus")

DESCRIPTION = """\
Run a parity campaign: N random expression graphs, each evaluated by an autograd engine, by
torch.autograd (float64) and by a numerical oracle (finite differences). Prints, per op, how many
graphs used it and the largest gradient errors against torch and against the oracle; shrinks each
failing graph and groups the failures into findings (one per distinct problem, with its kind,
its ops, a minimal repro and the graphs it covers). An op-isolation pass checks each op alone
first. Writes report.json and report.html to --out, and each finding's graph to --out/corpus
(or --corpus DIR); `gradcheck corpus add FILE` puts one into the regression corpus on purpose.
"""

EPILOG = """\
Graph i is drawn from (seed, i) alone: the figures are the same for any --jobs.

Exit status: 0 nothing fails (under --conventions subgradient a convention at a kink is only a
note); 1 some finding fails; 2 bad input (unknown engine or op, malformed corpus file, an unusable
--out or --corpus, an engine adapter that raises).

Outgrowing one machine: --jobs uses the cores of this machine; --scheduler ADDRESS runs the
campaign on the workers of a Dask cluster (pip install 'minigrad[cluster]'; dask scheduler,
dask worker ADDRESS on each machine). The pytest parity suite spreads with pytest-xdist:
  pytest --pyargs gradcheck.suite -n auto      # every local core
  pytest --pyargs gradcheck.suite --dist load \\
      --tx 4*ssh=user@host//python=/path/to/.venv/bin/python//chdir=/path/to/checkout
Remote hosts need the same checkout (same commit) and the same numpy and torch versions; see
docs/campaign.md.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too; say what to do next
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


class _Subparser(_Parser):
    """A subcommand's parser: it rejects unknown flags itself, so the error shows its own usage."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def _ops(text: str) -> tuple[str, ...]:
    ops = tuple(op.strip() for op in text.split(",") if op.strip())
    if not ops:
        raise argparse.ArgumentTypeError("expected a comma-separated list of op names, e.g. tanh,mul")
    return ops


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gradcheck", description="gradcheck: prove an autograd engine's gradients.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Subparser)
    run = sub.add_parser(
        "run",
        help="run a parity campaign over random graphs",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("--graphs", type=_positive, default=2000, help="random graphs to check (default 2000)")
    run.add_argument("--seed", type=_seed, default=0, help="campaign seed (default 0)")
    run.add_argument(
        "--engine",
        default=None,
        help="minigrad | minigrad-tensor | micrograd | jax | jax-tensor | autograd | autograd-tensor "
        "| module:Class | path/to/file.py:Class, where Class is an adapter or a micrograd-style value "
        "class, inspected to build its adapter (default minigrad, or minigrad-tensor with --tensor)",
    )
    run.add_argument("--ops", type=_ops, default=None, help="comma-separated ops to draw from (default all)")
    run.add_argument("--tensor", action="store_true", help="draw tensor graphs instead of scalar ones")
    run.add_argument(
        "--points", type=_positive, default=4, help="input points each graph is checked at (default 4)"
    )
    run.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="float32: the tensor engine computes in float32, judged by torch's float32 accuracy (--tensor)",
    )
    run.add_argument("--jobs", type=_positive, default=1, help="worker processes (default 1)")
    run.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on a Dask cluster: its scheduler's address, e.g. tcp://10.0.0.5:8786 (docs/campaign.md)",
    )
    run.add_argument(
        "--out", type=Path, default=Path("out"), help="directory for report.json/.html (default out)"
    )
    run.add_argument(
        "--corpus", type=Path, default=None, help="where findings are saved (default OUT/corpus)"
    )
    run.add_argument("--no-save", action="store_true", help="do not save findings' graphs")
    run.add_argument(
        "--no-edges",
        action="store_true",
        help="leave out the edge-value phase (each op at +-0, subnormals, +-1e300, inf, nan, overflows)",
    )
    run.add_argument(
        "--max-shrink",
        type=_positive,
        default=10,
        help="fully shrink at most this many failing graphs; the others are blamed cheaply (default 10)",
    )
    _conventions_option(run)
    run.add_argument("--no-isolation", action="store_true", help="skip the op-isolation pass")
    ci_output_options(run)
    run.add_argument(
        "--no-structure",
        action="store_true",
        help="leave out the structural phase (shared nodes, diamonds, backward twice, zero_grad, "
        "interior gradients, deep chains, rebuilds: the engine's graph code, not its ops)",
    )
    run.add_argument(
        "--print-adapter",
        type=Path,
        default=None,
        metavar="FILE",
        help="for an --engine that names a micrograd-style value class (no adapter): write the adapter "
        "built by inspecting it to FILE, as Python to edit and pass as --engine FILE:CLASS, and stop",
    )

    replay = sub.add_parser(
        "replay",
        help="re-run a saved graph: engine, torch and oracle side by side",
        description="Re-run a corpus file, or finding N of a report.json, and print the engine's, "
        "torch's and the oracle's numbers side by side. Exit 1 while it still fails, 0 once fixed.",
    )
    replay.add_argument("file", type=Path, help="a corpus graph file or a report.json")
    replay.add_argument("--engine", default=None, help="engine to run (default: the one the file names)")
    replay.add_argument(
        "--finding", type=_seed, default=None, help="which finding of a report.json (default 0)"
    )
    _conventions_option(replay)

    corpus_cmd = sub.add_parser("corpus", help="manage the regression corpus the parity suite replays")
    corpus_sub = corpus_cmd.add_subparsers(dest="corpus_command", required=True, parser_class=_Subparser)
    add = corpus_sub.add_parser(
        "add",
        help="add graph files (e.g. out/corpus/*.json) to the regression corpus, validated",
        description="Validate each graph file and copy it into the regression corpus (one file per "
        "distinct graph). Nothing is written if any file is malformed.",
    )
    add.add_argument("files", type=Path, nargs="+", help="graph JSON files")
    add.add_argument(
        "--to", type=Path, default=SUITE_CORPUS, help=f"corpus directory (default {SUITE_CORPUS})"
    )
    add_gate_parser(sub)
    return parser


def _conventions_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--conventions",
        choices=CONVENTIONS,
        default="torch",
        help="torch (default): a slope at a kink that is not torch's choice fails; subgradient: "
        "it is a note when it lies between the one-sided derivatives",
    )


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


OP_TABLE_NOTE = (
    "Errors are over the graphs that used the op (not the op's own error): p99 is what 99% of "
    "them stay below, max the single worst graph, which an ill-conditioned graph can make large "
    "without any failure. Failures: the graphs whose minimal failing graph contains the op, and the "
    "findings (distinct problems) whose minimal graph contains it, from any phase (edge values and "
    "the op-isolation pass too)."
)


# Below this console width the per-op table leaves out the absolute errors (in the reports).
WIDE_TABLE = 110


def op_table(result: CampaignResult, width: int = 80) -> Table:
    """One line per op: graphs, p99 / max of each error, failures. In fewer than WIDE_TABLE columns
    (a CI log is 80) only the relative errors are shown; the absolute ones are in the reports."""
    wide = width >= WIDE_TABLE
    metrics = campaign.GRAD_METRICS if wide else ("max_rel_err_torch", "max_rel_err_numeric")
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
    table.add_column("failures\ngraphs/findings", justify="right", no_wrap=True)
    conventions = result.settings.conventions
    for op, st in result.ops.items():
        figures = [f"{_fmt(st.quantile(m, 0.99))} / {_fmt(st.maxima[m])}" for m in metrics]
        found = sum(1 for f in result.findings if op in f.ops and f.is_failure(conventions))
        failures = f"{st.failures} / {found}"
        colour = "red" if st.failures or found else "default"
        table.add_row(op, str(st.graphs), *figures, f"[{colour}]{failures}[/{colour}]")
    return table


def _fmt(x: float | None) -> str:
    if x is None:
        return "–"
    return "0" if x == 0 else f"{x:.1e}"


def run_command(args: argparse.Namespace, argv: Sequence[str], console: Console) -> int:
    """The `run` subcommand; returns the exit status."""
    jobs, note = capped_jobs(args.jobs)
    if note:
        print(f"gradcheck: {note}", file=sys.stderr)
    settings = Settings(
        engine=canonical_spec(args.engine or ("minigrad-tensor" if args.tensor else "minigrad")),
        graphs=args.graphs,
        seed=args.seed,
        ops=args.ops,
        tensor=args.tensor,
        jobs=jobs,
        max_shrink=args.max_shrink,
        points=args.points,
        conventions=args.conventions,
        isolation=not args.no_isolation,
        structure=not args.no_structure,
        scheduler=args.scheduler,
        dtype=args.dtype,
    )
    adapter = campaign.load_adapter(settings.engine)
    if isinstance(adapter, ValueClassAdapter):
        console.print(Text(adapter.report()))
    if args.print_adapter is not None:
        return print_adapter(adapter, args.print_adapter, console)
    ops = campaign.validate(settings)
    corpus_dir = args.corpus if args.corpus is not None else args.out / "corpus"
    corpus = None if args.no_save else campaign.open_corpus(corpus_dir)
    _check_writable(args.out)
    check_output_files(args.junit_xml, args.summary_md)
    if corpus is not None:
        check_corpus_directory(corpus_dir)
    console.print(header(settings, ops))
    if not campaign.load_adapter(settings.engine).create_graph:
        console.print("Second derivatives: not checked (the adapter has create_graph = False).")
    backend = campaign.real_backend()
    result = run_with_progress(settings, backend, console)
    if result.structure is not None:
        console.print(Text(result.structure.summary()))
    if not args.no_edges:
        result = with_edge_findings(result, ops, console)
    saved = campaign.save_failures(result, corpus) if corpus is not None else result
    if corpus is not None:
        save_findings(saved, corpus)
    report_path = args.out / "report.json"
    saved = with_repros(saved, report_path)
    print_findings(saved, console)
    console.print(op_table(saved, console.width))
    print_graphs(saved, console)
    report = write_reports(saved, args.out, ["python", "-m", "gradcheck", *argv])
    if args.junit_xml is not None:
        write_junit([run_suite(saved)], args.junit_xml)
    if args.summary_md is not None:
        args.summary_md.write_text(run_markdown(saved), encoding="utf-8")
    failures = saved.failures
    if not failures:
        verdict = f"[green]all {len(saved.records)} graphs agree[/green]"
    else:
        colour = "red" if not saved.passed else "yellow"
        verdict = f"[{colour}]{len(failures)} of {len(saved.records)} graphs disagree[/{colour}]"
    console.print(
        f"\n{verdict}; {escape(summary(saved.findings, settings.conventions))}; {saved.seconds:.1f} s."
    )
    console.print(Text(f"Reports: {report[0]}, {report[1]}"))
    return 0 if saved.passed else 1


def print_adapter(adapter: EngineAdapter, path: Path, console: Console) -> int:
    """`run --print-adapter FILE`: write the adapter built for a value class as an editable file."""
    if not isinstance(adapter, ValueClassAdapter):
        raise CampaignError(
            f"--print-adapter writes the adapter built for a micrograd-style value class; engine "
            f"{adapter.spec or adapter.name!r} is an adapter already ({type(adapter).__name__})"
        )
    class_name = f"{adapter.value_class.__name__}Adapter"
    try:
        path.write_text(adapter_source(adapter, class_name), encoding="utf-8")
    except OSError as exc:
        raise CampaignError(f"--print-adapter: cannot write {path}: {exc}") from None
    console.print(
        Text(f"wrote {path}; edit it, then run: python -m gradcheck run --engine {path}:{class_name}")
    )
    return 0


def with_edge_findings(result: CampaignResult, ops: Sequence[str], console: Console) -> CampaignResult:
    """The edge-value phase: the engine at each op's edge values; its findings join the campaign's."""
    started = time.perf_counter()
    settings = result.settings
    joined = joined_with_edges(result, campaign.load_adapter(settings.engine), ops, settings.dtype)
    console.print(
        f"edge-value phase: {len(joined.findings) - len(result.findings)} new finding(s) over the ops' "
        f"edge values; {time.perf_counter() - started:.1f} s"
    )
    return joined


def with_repros(result: CampaignResult, report_path: Path) -> CampaignResult:
    """Each finding with its replay command (finding i of the report.json about to be written),
    with the PYTHONPATH the engine's module needs in a fresh process (a file spec is absolute)."""
    engine = result.settings.engine
    root = import_root(engine)
    findings = [
        dataclasses.replace(f, repro=replay_command(str(report_path), engine, i, root))
        for i, f in enumerate(result.findings)
    ]
    return dataclasses.replace(result, findings=findings)


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


def replay_cmd(args: argparse.Namespace, console: Console) -> int:
    saved = load_saved(args.file, args.finding)
    return replay(saved, args.engine, console, args.conventions)


def corpus_add_command(args: argparse.Namespace, console: Console) -> int:
    for target, new in add_to_corpus(list(args.files), args.to):
        console.print(Text(f"{'added' if new else 'already in the corpus'}: {target}"))
    return 0


def _check_writable(out: Path) -> None:
    """Fail before the campaign, not after it, when the reports cannot be written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CampaignError(f"cannot create the report directory --out {out}: {exc}") from None
    if not os.access(out, os.W_OK):
        raise CampaignError(f"cannot write reports to --out {out}: not writable")


def run_with_progress(settings: Settings, backend: campaign.Backend, console: Console) -> CampaignResult:
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
            if phase not in tasks:
                if phase != "check" and total == 0:
                    return
                tasks[phase] = bar.add_task(PHASES.get(phase, phase), total=total)
            bar.update(tasks[phase], completed=done, total=total)

        return campaign.run_campaign(settings, backend, progress)


PHASES = {
    "structure": "checking the graph code (structural phase)",
    "isolate": "checking each op alone",
    "check": "checking graphs",
    "shrink": "shrinking failures",
    "blame": "blaming the other failures",
}


def write_reports(result: CampaignResult, out: Path, command: list[str]) -> tuple[Path, Path]:
    report = build_report(result, command=command)
    return write_report(report, out / "report.json"), write_html(report, out / "report.html")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        if args.command == "replay":
            return replay_cmd(args, console)
        if args.command == "corpus":
            return corpus_add_command(args, console)
        if args.command == "gate":
            return gate_command(args, console)
        return run_command(args, argv, console)
    except CampaignError as exc:
        # unwrapped: logs and tests grep it
        print(f"gradcheck: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gradcheck: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["build_parser", "header", "main", "op_table"]
