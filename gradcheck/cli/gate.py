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
from typing import TYPE_CHECKING

from gradcheck.choices import DEFAULT_TIMEOUT
from gradcheck.cli import arguments
from gradcheck.cli.arguments import (
    ENGINE_HELP,
    check_output_files,
    ci_output_options,
    exit_statuses,
    graph_timeout_option,
    positive_int,
    seed_int,
)

if TYPE_CHECKING:  # the gate's campaign is imported when the command runs, not to parse it
    from rich.console import Console

    from gradcheck.campaign.regression_gate import Part

DESCRIPTION = """\
Gate an engine's gradients in CI: run a fixed, deterministic campaign (random graphs with fixed
seeds, and the edge-value phase) and compare it with a baseline recorded once for this engine.
Fails when a finding appears that the baseline did not record (the first lines of the verdict),
an op has failing graphs no recorded finding explains, a figure of an op (over the evidence
about that op) gets more than 10x worse above its noise floor, or an op stops being covered.
Ops and attribute variants the baseline did not cover (a newer gradcheck, an engine that gained
an op) are left out and named as new coverage: --update-baseline includes them.
"""

EPILOG = (
    exit_statuses(
        "worse: a figure, an op's coverage or failing graphs, or a new finding (an engine that "
        "crashes or hangs is one); or --update-baseline refused"
    )
    + """
(A missing or malformed baseline, or one recorded for another engine or other options, is
status 2, found before any campaign runs.) The engine runs in watched worker processes, as for
`gradcheck run`.

Record the baseline once with --update-baseline (the engine's known findings are recorded as
accepted), review and commit it; regenerate it the same way after an intended change.
"""
)


def add_parser(sub: argparse._SubParsersAction) -> None:
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
        help=ENGINE_HELP,
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
    graph_timeout_option(gate)
    gate.add_argument(
        "--refuse-findings",
        action="store_true",
        help="with --update-baseline: refuse to record while any finding fails (a clean engine's gate)",
    )
    ci_output_options(gate)


def command(args: argparse.Namespace, console: Console) -> int:
    """The `gate` subcommand; returns the exit status."""
    arguments.refuse_unknown_engine(args.engine)  # before the campaign's modules (and torch) load
    from gradcheck.campaign.regression_gate import part_for

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
        graph_timeout=args.graph_timeout,
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
    graph_timeout: float | None = DEFAULT_TIMEOUT,
) -> int:
    """Gate `parts` against `baseline`, print the verdict and write the CI files; or, with
    `update`, record the baseline (no CI files: nothing is compared). The engines run in watched
    worker processes (`gradcheck.campaign.supervisor`)."""
    from rich.text import Text

    from gradcheck.campaign.regression_gate import run_gate, update_baseline
    from gradcheck.campaign.report_session import CiFiles, report_gate
    from gradcheck.campaign.workers import capped_jobs
    from gradcheck.cli.console import print_outcome

    jobs, note = capped_jobs(jobs)
    if note:
        print(f"gate: {note}", file=sys.stderr)
    announce = lambda text: print(text, file=sys.stderr, flush=True)
    check_output_files(junit_xml, summary_md, baseline if update else None)
    with arguments.engine_workers(jobs, graph_timeout) as workers:
        if update:
            done = update_baseline(parts, baseline, jobs, accept_findings, announce, runner=workers)
        else:
            outcome = run_gate(parts, baseline, jobs, announce, runner=workers)
    if update:
        for finding in done.accepted if done.written else ():
            console.print(Text(f"accepted finding: {finding.title} ({finding.count_text})"))
        console.print(Text(f"gate: {done.message}"))
        return 0 if done.written else 1
    report_gate(outcome, CiFiles(junit_xml, summary_md))
    print_outcome(outcome, console)
    return 0 if outcome.passed else 1
