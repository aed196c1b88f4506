"""Follow one finding from the graph that shows it to the report, and count the modules it crosses.

One random graph of an engine with one planted bug (broken_engines' WrongDerivative, its broken op
only) is checked by a campaign in this process (no structural, isolation or edge phase: the random
graph's finding alone), and its result reported as `gradcheck run` reports it (report.json and
report.html, markdown, JUnit, the console). Every call into a module of the library (gradcheck/,
its test engines in gradcheck/testing/ left out) that is handed the finding's data (an argument
that is one of the records it travels in: the check's result, its problems, the graph's record and
failure, the diagnosis, the finding, the campaign's result, or a list of them; or, where problems
are words, an argument `problem(s)`, `message` or `text(s)` holding strings) is traced; the walk
is the sequence of modules entered, one entry per change of module. Printed: the modules crossed,
and how many times the walk enters a module it had already left (a return to a file already
left). `--all` traces every call instead, whatever its arguments.

    python scripts/finding_walk.py [--list]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

from rich.console import Console

LIBRARY = Path(__file__).resolve().parents[1] / "gradcheck"


def _module(filename: str) -> str | None:
    path = Path(filename)
    try:
        relative = path.resolve().relative_to(LIBRARY.resolve())
    except ValueError:
        return None
    if relative.parts[0] in ("testing", "tests"):
        return None
    return str(relative)


# The types the finding's data travels in, by name (so that the script runs on any commit).
CARRIERS = frozenset(
    {
        "GraphCheck",
        "Problem",
        "EdgeProblem",
        "Difference",
        "Diagnosed",
        "GraphRecord",
        "Failure",
        "Finding",
        "CampaignResult",
        "RunReport",
    }
)


def _carries(frame) -> bool:
    code = frame.f_code
    for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
        value = frame.f_locals.get(name)
        items = value if isinstance(value, (list, tuple)) else (value,)
        if any(type(item).__name__ in CARRIERS for item in items[:3]):
            return True
        # a problem in words (before problems were records): an argument named for it
        words = name in ("problem", "problems", "message", "text", "texts")
        if words and items and all(isinstance(item, str) for item in items[:3]):
            return True
    return False


def walk(every_call: bool = False) -> list[str]:
    """The modules entered, in order, one entry per change of module."""
    from gradcheck.campaign import Settings, real_backend, run_campaign
    from gradcheck.cli import console as printing

    settings = Settings(
        engine="gradcheck.testing.broken_engines:WrongDerivative",
        graphs=1,
        seed=0,
        ops=("cos",),
        isolation=False,
        structure=False,
        edges=False,
    )
    backend = real_backend()
    sequence: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            module = _module(frame.f_code.co_filename)
            if module is None or (sequence and sequence[-1] == module):
                return
            if every_call or _carries(frame):
                sequence.append(module)

    out = Console(file=io.StringIO(), width=100)
    with tempfile.TemporaryDirectory() as scratch:
        sys.setprofile(profile)
        try:
            result = run_campaign(settings, backend)
            saved, unexplained = _report(result, Path(scratch))
            printing.print_summary(saved, out, unexplained)
            printing.print_findings(saved, out)
            printing.print_verdict(saved, out, unexplained)
        finally:
            sys.setprofile(None)
    assert result.findings, "the planted bug must give a finding"
    return sequence


def _report(result, directory: Path):
    """report.json, report.html, markdown and JUnit, as `gradcheck run` writes them."""
    from gradcheck.campaign.outputs import ReportDirectory

    ci_junit, ci_markdown = directory / "junit.xml", directory / "summary.md"
    try:
        from gradcheck.campaign.report_session import CiFiles, report_run
    except ImportError:  # before the report session: the steps `gradcheck run` took
        from gradcheck.atomic import write_text
        from gradcheck.campaign.outputs import write_report_pair
        from gradcheck.campaign.report_json import build_report
        from gradcheck.campaign.report_junit import run_suite, write_junit
        from gradcheck.campaign.report_markdown import run_markdown
        from gradcheck.cli.run import with_repros

        with ReportDirectory(directory / "out") as out:
            saved = with_repros(result, out.path / "report.json")
            report = build_report(saved, command=["gradcheck", "run"], run_id=out.run_id)
            write_report_pair(report, out.path)
        write_junit([run_suite(saved)], ci_junit)
        write_text(ci_markdown, run_markdown(saved, report.get("unexplained")))
        return saved, report.get("unexplained")
    with ReportDirectory(directory / "out") as out:
        reported = report_run(result, out, ["gradcheck", "run"], CiFiles(ci_junit, ci_markdown))
    return reported.result, reported.unexplained


def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--list", action="store_true", help="print the walk, one module a line")
    parser.add_argument("--all", action="store_true", help="every call, not only those given its data")
    args = parser.parse_args()
    sequence = walk(args.all)
    seen: set[str] = set()
    returns = 0
    for module in sequence:
        returns += module in seen
        seen.add(module)
    if args.list:
        print("\n".join(sequence))
    print(f"{len(seen)} modules crossed, {len(sequence)} entries, {returns} returns to a module already left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
