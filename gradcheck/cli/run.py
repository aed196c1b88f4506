"""`gradcheck run`: a parity campaign from the command line, its console report and report files."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gradcheck.cli import arguments
from gradcheck.cli.arguments import (
    ENGINE_HELP,
    check_count,
    check_output_files,
    ci_output_options,
    conventions_option,
    exit_statuses,
    graph_timeout_option,
    op_list,
    positive_int,
    positive_seconds,
    reference_option,
    seed_int,
)

if TYPE_CHECKING:  # the campaign is imported when the command runs, not to parse it (--help)
    from rich.console import Console

    from gradcheck.campaign.tasks import EngineFacts

DESCRIPTION = """\
Run a parity campaign: N random expression graphs, each evaluated by an autograd engine, by
torch.autograd (float64) and by a numerical oracle (finite differences). Prints, per op, how many
graphs used it and the largest gradient errors against torch and against the oracle; shrinks each
failing graph and groups the failures into findings (one per distinct problem, with its kind,
its ops, a minimal repro and the graphs it covers). An op-isolation pass checks each op alone
first. Writes report.json and report.html to --out, and each finding's graph to --out/corpus
(or --corpus DIR); `gradcheck corpus add FILE` puts one into the regression corpus on purpose.
"""

EPILOG = (
    """\
The engine runs in worker processes gradcheck watches, at any --jobs: an op that calls sys.exit,
ends or crashes its process is a finding (kind crash), one that runs past --graph-timeout a
finding (kind timeout), and the campaign goes on with a fresh worker.

Graph i is drawn from (seed, i) alone: for an engine that computes the same numbers every time,
report.json is the same for any --jobs, any rerun and any load, its "run" section aside (run id, times).
An engine whose results depend on object addresses, threads or randomness (a set of nodes summed
in address order) changes the last bits of figures from run to run; micrograd's order is fixed.

"""
    + exit_statuses(
        "some finding fails or some failing graph is unexplained (a convention at a kink is a note "
        "under --conventions subgradient)"
    )
    + """
Outgrowing one machine: --jobs uses the cores of this machine; --scheduler ADDRESS runs the
campaign on the workers of a Dask cluster (pip install 'minigrad[cluster]'; dask scheduler,
dask worker ADDRESS on each machine). The pytest parity suite spreads with pytest-xdist:
  pytest --pyargs gradcheck.suite -n auto      # every local core
  pytest --pyargs gradcheck.suite --dist load \\
      --tx 4*ssh=user@host//python=/path/to/.venv/bin/python//chdir=/path/to/checkout
Remote hosts need the same checkout (same commit) and the same numpy and torch versions; see
docs/campaign.md.
"""
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The `run` subcommand's options."""
    run = sub.add_parser(
        "run",
        help="run a parity campaign over random graphs",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # the groups of --help; options are added in their order of old, which the usage line keeps
    what = run.add_argument_group("what to check")
    phases = run.add_argument_group("phases to leave out")
    judged = run.add_argument_group("how it is judged")
    how_long = run.add_argument_group("how long")
    where = run.add_argument_group("where it runs")
    outputs = run.add_argument_group("outputs")
    how_long.add_argument(
        "--graphs", type=positive_int, default=2000, help="random graphs to check (default 2000)"
    )
    what.add_argument("--seed", type=seed_int, default=0, help="campaign seed (default 0)")
    what.add_argument(
        "--engine",
        default=None,
        help=f"{ENGINE_HELP} (default minigrad, or minigrad-tensor with --tensor)",
    )
    what.add_argument(
        "--ops", type=op_list, default=None, help="comma-separated ops to draw from (default all)"
    )
    what.add_argument("--tensor", action="store_true", help="draw tensor graphs instead of scalar ones")
    what.add_argument(
        "--points", type=positive_int, default=4, help="input points each graph is checked at (default 4)"
    )
    what.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="float32: the tensor engine computes in float32, judged by torch's float32 accuracy (--tensor)",
    )
    where.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default 1)")
    graph_timeout_option(how_long)
    where.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run on a Dask cluster: its scheduler's address, e.g. tcp://10.0.0.5:8786 (docs/campaign.md)",
    )
    outputs.add_argument(
        "--out", type=Path, default=Path("out"), help="directory for report.json/.html (default out)"
    )
    outputs.add_argument(
        "--corpus", type=Path, default=None, help="where findings are saved (default OUT/corpus)"
    )
    outputs.add_argument("--no-save", action="store_true", help="do not save findings' graphs")
    phases.add_argument(
        "--no-edges",
        action="store_true",
        help="leave out the edge-value phase (each op at +-0, subnormals, +-1e300, inf, nan, overflows)",
    )
    how_long.add_argument(
        "--shrink-budget",
        type=check_count,
        default=None,
        metavar="CHECKS",
        help="candidate checks of the engine for shrinking the failing graphs that no finding "
        "explains, counted so the report is the same at any load; those left when it is spent are "
        "reported together as unexplained graphs (default 1000 + 2 per graph: 5000 for 2000 graphs; "
        "it counted seconds before, and a fraction is refused)",
    )
    how_long.add_argument(
        "--shrink-time-cap",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="a safety cap on shrinking's time, not a budget (default 600); a campaign that reaches "
        "it says in its report which graphs it cut short, and the gate leaves their findings undecided",
    )
    how_long.add_argument("--max-shrink", action=MaxShrinkReplaced, help=argparse.SUPPRESS)
    conventions_option(judged)
    reference_option(judged)
    phases.add_argument("--no-isolation", action="store_true", help="skip the op-isolation pass")
    ci_output_options(outputs)
    phases.add_argument(
        "--no-structure",
        action="store_true",
        help="leave out the structural phase (shared nodes, diamonds, backward twice, zero_grad, "
        "interior gradients, deep chains, rebuilds: the engine's graph code, not its ops)",
    )
    outputs.add_argument(
        "--print-adapter",
        type=Path,
        default=None,
        metavar="FILE",
        help="for an --engine that names a micrograd-style value class (no adapter): write the adapter "
        "built by inspecting it to FILE, as Python to edit and pass as --engine FILE:CLASS, and stop",
    )


class MaxShrinkReplaced(argparse.Action):
    """--max-shrink N, which counted the graphs to shrink, refused with what replaced it."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        parser.error(
            "--max-shrink was replaced by --shrink-budget CHECKS: every failing graph is now "
            "explained by a finding or shrunk while a budget of candidate checks lasts (default 1000 "
            "+ 2 per graph); drop --max-shrink, or give --shrink-budget"
        )


def command(args: argparse.Namespace, argv: Sequence[str], console: Console) -> int:
    """The `run` subcommand; returns the exit status."""
    from rich.text import Text

    arguments.refuse_unknown_engine(args.engine)  # before the campaign's modules (and torch) load
    from gradcheck import campaign
    from gradcheck.campaign import CampaignError, Settings
    from gradcheck.campaign.outputs import ReportDirectory
    from gradcheck.campaign.pool import Campaign
    from gradcheck.campaign.regression_corpus import check_corpus_directory
    from gradcheck.campaign.report_session import CiFiles, report_run
    from gradcheck.campaign.tasks import describe
    from gradcheck.campaign.workers import capped_jobs
    from gradcheck.cli.console import (
        header,
        op_table,
        print_findings,
        print_graphs,
        print_summary,
        print_unexplained,
        print_verdict,
        progress_bars,
    )
    from gradcheck.engines.loading import canonical_spec
    from gradcheck.launcher import launcher

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
        shrink_budget=args.shrink_budget,
        shrink_time_cap=args.shrink_time_cap,
        points=args.points,
        conventions=args.conventions,
        isolation=not args.no_isolation,
        structure=not args.no_structure,
        edges=not args.no_edges,
        scheduler=args.scheduler,
        dtype=args.dtype,
        reference=args.reference,
    )
    backend = campaign.real_backend()
    with arguments.engine_workers(jobs, args.graph_timeout) as workers:
        facts: EngineFacts = workers.call(describe, Campaign(backend, settings), None)
        if facts.inspection is not None:
            console.print(Text(facts.inspection))
        if args.print_adapter is not None:
            return print_adapter(facts, args.print_adapter, console)
        ops = facts.checked()
        corpus_dir = args.corpus if args.corpus is not None else args.out / "corpus"
        corpus = None if args.no_save else campaign.open_corpus(corpus_dir)
        with (
            ReportDirectory(args.out) as out,
            arguments.engine_cluster(args.scheduler, settings.engine, workers, args.graph_timeout) as cluster,
        ):
            check_output_files(args.junit_xml, args.summary_md)
            if corpus is not None:
                check_corpus_directory(corpus_dir)
            where = cluster.describe() if cluster is not None else None
            console.print(header(settings, ops, where))
            if not facts.create_graph:
                console.print("Second derivatives: not checked (the adapter has create_graph = False).")
            if facts.forward_mode:
                console.print("Forward mode: checked too (each graph's J·v against the exact values).")
            if facts.transforms:
                names = ", ".join(facts.transforms)
                console.print(f"Transforms: {names} checked too (beside each graph's reverse-mode gradient).")
            if facts.hvp_transforms and facts.create_graph:
                names = ", ".join(facts.hvp_transforms)
                console.print(f"H·v also by {names}.")
            if facts.surface_note is not None:
                console.print(Text(facts.surface_note))
            with progress_bars(console, where) as progress:
                result = campaign.run_campaign(settings, backend, progress, corpus, workers, cluster)
            workers.close()  # nothing runs the engine any more: free its memory now
            for phase in (result.structure, result.edges):
                if phase is not None:
                    console.print(Text(phase.summary()))
            ci = CiFiles(args.junit_xml, args.summary_md)
            reported = report_run(result, out, [*launcher(), *argv], ci)
            saved, unexplained = reported.result, reported.unexplained
            print_summary(saved, console, unexplained)
            print_findings(saved, console)
            print_unexplained(saved, console)
            console.print(op_table(saved, console.width))
            print_graphs(saved, console)
            if saved.incomplete is not None:  # cut short (its cluster lost): the reports say so
                raise CampaignError(
                    f"{saved.incomplete}; partial reports, marked incomplete: {reported.written[0]}"
                )
    print_verdict(saved, console, unexplained)
    written = reported.written
    console.print(Text(f"Reports: {written[0]}, {written[1]}"), soft_wrap=True)
    return 0 if saved.passed else 1


def print_adapter(facts: EngineFacts, path: Path, console: Console) -> int:
    """`run --print-adapter FILE`: write the adapter built for a value class as an editable file."""
    from rich.text import Text

    from gradcheck.atomic import write_text
    from gradcheck.campaign import CampaignError
    from gradcheck.launcher import command_line

    if facts.adapter_source is None:
        raise CampaignError(
            f"--print-adapter writes the adapter built for a micrograd-style value class; engine "
            f"{facts.spec or facts.name!r} is an adapter already"
        )
    write_text(path, facts.adapter_source)
    command = command_line("run", "--engine", f"{path}:{facts.adapter_class}")
    console.print(Text(f"wrote {path}; edit it, then run: {command}"), soft_wrap=True)
    return 0
