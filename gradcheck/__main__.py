"""`python -m gradcheck run`: the parity campaign from the command line (also the `gradcheck` script).

Exit status: 0 when every graph agrees, 1 when some graph disagrees, 2 on bad input (an unknown
engine or op, a malformed corpus file, an engine adapter that raises).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

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
from gradcheck.campaign.edges import edge_findings
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.report_html import write_html
from gradcheck.campaign.report_json import build_report, write_report
from gradcheck.campaign.workers import capped_jobs
from gradcheck.printable import printable

DEFAULT_CORPUS = Path("parity_tests/corpus")

DESCRIPTION = """\
Run a parity campaign: N random expression graphs, each evaluated by an autograd engine, by
torch.autograd (float64) and by a numerical oracle (finite differences). Prints, per op, how many
graphs used it and the largest gradient errors against torch and against the oracle; shrinks each
failing graph, prints it as a runnable snippet and saves it to the regression corpus. Writes
report.json and report.html to --out.
"""

EPILOG = """\
Graph i is drawn from (seed, i) alone: the figures are the same for any --jobs.

Exit status: 0 all graphs agree; 1 some graph disagrees; 2 bad input (unknown engine or op,
malformed corpus file, an engine adapter that raises).

Outgrowing one machine: --jobs uses the cores of this machine. Beyond it, run the pytest parity
suite with pytest-xdist, which spreads its test cases over local or remote workers:
  pytest parity_tests -n auto                  # every local core
  pytest parity_tests --dist load \\
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
        help="minigrad | minigrad-tensor | micrograd | module:Adapter "
        "(default minigrad, or minigrad-tensor with --tensor)",
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
        "--out", type=Path, default=Path("out"), help="directory for report.json/.html (default out)"
    )
    run.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help=f"regression corpus (default {DEFAULT_CORPUS})"
    )
    run.add_argument("--no-save", action="store_true", help="do not add shrunk failures to the corpus")
    run.add_argument(
        "--no-edges",
        action="store_true",
        help="leave out the edge-value phase (each op at +-0, subnormals, +-1e300, inf, nan, overflows)",
    )
    run.add_argument(
        "--max-shrink",
        type=_positive,
        default=10,
        help="shrink and show at most this many failures (default 10)",
    )
    return parser


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


def op_table(result: CampaignResult) -> Table:
    table = Table(title="Per op: graphs that used it, their largest errors, failures")
    table.add_column("op", style="bold", no_wrap=True)
    table.add_column("graphs", justify="right")
    for label in ("abs err\nvs torch", "rel err\nvs torch", "abs err\nvs numeric", "rel err\nvs numeric"):
        table.add_column(label, justify="right")
    table.add_column("failures", justify="right")
    for op, st in result.ops.items():
        figures = [_fmt(st.maxima[m]) for m in campaign.GRAD_METRICS]
        failures = f"[red]{st.failures}[/red]" if st.failures else "0"
        table.add_row(op, str(st.graphs), *figures, failures)
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
        engine=args.engine or ("minigrad-tensor" if args.tensor else "minigrad"),
        graphs=args.graphs,
        seed=args.seed,
        ops=args.ops,
        tensor=args.tensor,
        jobs=jobs,
        max_shrink=args.max_shrink,
        points=args.points,
        dtype=args.dtype,
    )
    ops = campaign.validate(settings)
    corpus = None if args.no_save else campaign.open_corpus(args.corpus)
    _check_writable(args.out)
    console.print(header(settings, ops))
    backend = campaign.real_backend()
    result = run_with_progress(settings, backend, console)
    console.print(op_table(result))
    failures = result.failures
    saved = campaign.save_failures(result, corpus) if corpus is not None else result
    unshrunk = []
    for record in saved.failures:
        f = record.failure
        if f is None or f.shrunk_snippet is None:
            unshrunk.append(record.index)
            continue
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
            f"\n{len(unshrunk)} more failing graph(s) not shrunk (raise --max-shrink to see them): {shown}"
        )
    report = write_reports(saved, args.out, ["python", "-m", "gradcheck", *argv])
    edges = [] if args.no_edges else run_edges(settings, ops, args.out, console)
    verdict = (
        f"[green]all {len(result.records)} graphs agree[/green]"
        if not failures
        else f"[red]{len(failures)} of {len(result.records)} graphs disagree[/red]"
    )
    if not args.no_edges:
        verdict += f"; {len(edges)} edge-value finding(s)" if edges else "; every edge value agrees"
    console.print(f"\n{verdict}; {result.seconds:.1f} s. Reports: {report[0]}, {report[1]}")
    return 0 if not failures and not edges else 1


def run_edges(settings: Settings, ops: Sequence[str], out: Path, console: Console) -> list[Finding]:
    """The edge-value phase: findings printed and written to `out/edges.json`."""
    started = time.perf_counter()
    findings = edge_findings(campaign.load_adapter(settings.engine), ops)
    for f in findings:
        console.print(Text(f"\nedge values: {printable(f.title)} ({f.graphs} case(s))", style="red bold"))
        for problem in f.problems:
            console.print(Text(f"  {printable(problem)}"))
    (out / "edges.json").write_text(json.dumps([f.to_dict() for f in findings], indent=1, default=str))
    console.print(f"edge-value phase: {len(findings)} finding(s); {time.perf_counter() - started:.1f} s")
    return findings


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
                if phase == "shrink" and total == 0:
                    return
                tasks[phase] = bar.add_task(
                    "checking graphs" if phase == "check" else "shrinking failures", total=total
                )
            bar.update(tasks[phase], completed=done, total=total)

        return campaign.run_campaign(settings, backend, progress)


def write_reports(result: CampaignResult, out: Path, command: list[str]) -> tuple[Path, Path]:
    report = build_report(result, command=command)
    return write_report(report, out / "report.json"), write_html(report, out / "report.html")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
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
