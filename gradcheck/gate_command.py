"""`gradcheck gate`: the gradient-regression gate for any engine, from the command line.

    gradcheck gate --engine NAME --update-baseline --baseline FILE   # record once, review, commit
    gradcheck gate --engine NAME --baseline FILE                     # on every build

Exit status: 0 pass, 1 worse (a gradient worse, an op losing coverage, a new finding; or
--update-baseline refused), 2 bad input (a missing or malformed baseline, an unknown engine, a
baseline recorded for another engine or other options), checked before any campaign runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gradcheck.arguments import positive_int, seed_int
from gradcheck.campaign.gate import (
    FLOORS,
    GateResult,
    OpVerdict,
    Part,
    as_figure,
    part_for,
    run_gate,
    update_baseline,
)
from gradcheck.campaign.report_junit import gate_suites, write_junit
from gradcheck.campaign.report_markdown import gate_markdown
from gradcheck.campaign.repro import finding_text
from gradcheck.campaign.settings import CampaignError
from gradcheck.campaign.workers import capped_jobs

DESCRIPTION = """\
Gate an engine's gradients in CI: run a fixed, deterministic campaign (random graphs with fixed
seeds, and the edge-value phase) and compare it with a baseline recorded once for this engine.
Fails when a figure of an op gets more than 10x worse above its noise floor, an op stops being
covered, an op has more failing graphs, or a finding appears that the baseline did not record.
"""

EPILOG = """\
Exit status: 0 pass; 1 worse (or --update-baseline refused); 2 bad input (missing or malformed
baseline, unknown engine, a baseline recorded for another engine or other options).

Record the baseline once with --update-baseline (the engine's known findings are recorded as
accepted), review and commit it; regenerate it the same way after an intended change.
"""


def add_gate_parser(sub: argparse._SubParsersAction) -> None:
    """The `gate` subcommand's options."""
    gate = sub.add_parser(
        "gate",
        help="gate an engine's gradients against a recorded baseline (for CI)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gate.add_argument(
        "--engine",
        required=True,
        help="minigrad | minigrad-tensor | micrograd | jax | jax-tensor | autograd | autograd-tensor "
        "| module:Adapter",
    )
    gate.add_argument("--baseline", type=Path, required=True, help="the baseline file (JSON)")
    gate.add_argument("--update-baseline", action="store_true", help="run and (re)write the baseline")
    gate.add_argument("--tensor", action="store_true", help="tensor graphs (a tensor engine)")
    gate.add_argument(
        "--dtype", choices=("float64", "float32"), default="float64", help="float32: with --tensor"
    )
    gate.add_argument(
        "--graphs",
        type=positive_int,
        default=None,
        help="graphs instead of the fixed count (3000 scalar, 600 tensor, 300 tensor float32)",
    )
    gate.add_argument("--seed", type=seed_int, default=None, help="campaign seed instead of the fixed one")
    gate.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default 1)")
    gate.add_argument(
        "--refuse-findings",
        action="store_true",
        help="with --update-baseline: refuse to record while any finding fails (a clean engine's gate)",
    )
    ci_output_options(gate)


def ci_output_options(parser: argparse.ArgumentParser) -> None:
    """--junit-xml and --summary-md, shared by `run` and `gate`."""
    parser.add_argument(
        "--junit-xml", type=Path, default=None, metavar="FILE", help="write a JUnit XML report here"
    )
    parser.add_argument(
        "--summary-md",
        type=Path,
        default=None,
        metavar="FILE",
        help="write a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)",
    )


def check_output_files(*paths: Path | None) -> None:
    """Fail before the campaign, not after it, when an output file's directory does not exist."""
    for path in paths:
        if path is not None and not path.parent.is_dir():
            raise CampaignError(f"cannot write {path}: its directory {path.parent} does not exist")


def gate_command(args: argparse.Namespace, console: Console) -> int:
    """The `gate` subcommand; returns the exit status."""
    part = part_for(args.engine, args.tensor, args.dtype, args.graphs, args.seed)
    return run_parts_gate(
        [part],
        args.baseline,
        args.update_baseline,
        args.jobs,
        console,
        accept_findings=not args.refuse_findings,
        junit_xml=args.junit_xml,
        summary_md=args.summary_md,
    )


def run_parts_gate(
    parts: Sequence[Part],
    baseline: Path,
    update: bool,
    jobs: int,
    console: Console,
    *,
    accept_findings: bool = True,
    junit_xml: Path | None = None,
    summary_md: Path | None = None,
) -> int:
    """Gate `parts` against `baseline`, print the verdict and write the CI files; or, with
    `update`, record the baseline (no CI files: nothing is compared)."""
    jobs, note = capped_jobs(jobs)
    if note:
        print(f"gate: {note}", file=sys.stderr)
    announce = lambda text: print(text, file=sys.stderr, flush=True)
    check_output_files(junit_xml, summary_md, baseline if update else None)
    if update:
        done = update_baseline(parts, baseline, jobs, accept_findings, announce)
        for finding in done.accepted if done.written else ():
            console.print(Text(f"accepted finding: {finding.title} ({finding.count_text})"))
        console.print(Text(f"gate: {done.message}"))
        return 0 if done.written else 1
    outcome = run_gate(parts, baseline, jobs, announce)
    print_outcome(outcome, console)
    if summary_md is not None:
        summary_md.write_text(gate_markdown(outcome), encoding="utf-8")
    if junit_xml is not None:
        write_junit(gate_suites(outcome), junit_xml)
    return 0 if outcome.passed else 1


def _short(x: float | None) -> str:
    if x is None:
        return "–"
    return "0" if x == 0 else f"{x:.1e}"


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
            before = _short(as_figure(v.before.get(metric))) if v.before else "–"
            after = _short(as_figure(v.after.get(metric))) if v.after else "–"
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
