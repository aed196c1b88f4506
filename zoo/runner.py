"""`python -m zoo`: every engine's campaign, judged against its expectations, in one table.

Run by scripts/zoo.sh inside zoo/.venv, where the pinned engines are installed. Each campaign is
`gradcheck run` in a process of its own (its console kept in OUT/ENGINE/console.txt, its reports
in OUT/ENGINE/); the verdict is read from its report.json, never from its console. Exit status 1
when some finding is unexpected or some expected finding is missed, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from zoo.expectations import ENGINES, Engine
from zoo.verdict import Verdict, judge, no_report

ROOT = Path(__file__).resolve().parents[1]
CI_GRAPHS = 300  # the CI slice's graphs per engine (scripts/test.sh)
HEADERS = (
    "engine",
    "bugs",
    "graph-code",
    "edge",
    "conventions",
    "adapter",
    "expected bugs found",
    "unexpected findings",
    "time",
)


@dataclass(frozen=True)
class Outcome:
    """One engine's campaign: its verdict, its wall-clock seconds and where its reports are."""

    engine: Engine
    verdict: Verdict
    seconds: float
    out: Path

    def row(self) -> tuple[str, ...]:
        """The table's cells for this engine, in HEADERS' order."""
        v = self.verdict
        expected = len(self.engine.expected)
        return (
            self.engine.name,
            *(str(v.tiers[t]) for t in ("bug", "graph-code", "edge", "convention", "adapter")),
            f"{len(v.found)}/{expected}",
            str(len(v.unexpected)),
            f"{self.seconds:.0f} s",
        )


def campaign(engine: Engine, out: Path, graphs: int | None, jobs: int, seed: int = 1) -> Outcome:
    """Run `engine`'s campaign with this interpreter and judge its report.json."""
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.json"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "gradcheck", "run", *engine.command(graphs, seed)]
    command += ["--jobs", str(jobs), "--out", str(out), "--no-save"]
    start = time.monotonic()
    with open(out / "console.txt", "w", encoding="utf-8") as console:
        status = subprocess.run(command, cwd=ROOT, stdout=console, stderr=subprocess.STDOUT).returncode
    seconds = time.monotonic() - start
    if status not in (0, 1) or not report.is_file():
        why = f"the campaign exited {status} without a report (see {out / 'console.txt'})"
        return Outcome(engine, no_report(engine, why), seconds, out)
    return Outcome(engine, judge(engine, json.loads(report.read_text(encoding="utf-8"))), seconds, out)


def table(outcomes: Sequence[Outcome]) -> Table:
    """The zoo's table, one row per engine."""
    grid = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for i, header in enumerate(HEADERS):
        grid.add_column(header, justify="left" if i == 0 else "right")
    for outcome in outcomes:
        grid.add_row(*outcome.row(), style=None if outcome.verdict.passed else "bold red")
    return grid


def markdown(outcomes: Sequence[Outcome], command: str) -> str:
    """The table as docs/zoo.md shows it, under the command that made it."""
    lines = [f"`{command}`", "", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(o.row()) + " |" for o in outcomes]
    return "\n".join(lines) + "\n"


def details(outcomes: Sequence[Outcome]) -> list[str]:
    """A line per unexpected finding and per missed expectation, under its engine's name."""
    lines = []
    for o in outcomes:
        lines += [f"{o.engine.name}: unexpected {what}" for what in o.verdict.unexpected]
        lines += [f"{o.engine.name}: missed {e.tier} {e.kind} {e.title!r}" for e in o.verdict.missed]
    return lines


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m zoo", description=__doc__.split("\n\n")[0])
    p.add_argument("--engines", help="comma-separated engine names (default: all)")
    p.add_argument("--ci", action="store_true", help=f"the CI slice: its engines at {CI_GRAPHS} graphs")
    p.add_argument("--graphs", type=int, help="graphs per campaign (default: each engine's own)")
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="campaign seed (default 1, the expectations'; another seed may draw other findings)",
    )
    p.add_argument("--parallel", type=int, default=2, help="campaigns at once, one job each (default 2)")
    p.add_argument("--out", type=Path, default=ROOT / "zoo" / "out", help="reports go to OUT/ENGINE")
    p.add_argument("--markdown", type=Path, help="also write the table as markdown to this file")
    p.add_argument("--list", action="store_true", help="print the selected engines' requirements and stop")
    return p


def selected(args: argparse.Namespace) -> list[Engine]:
    """The engines the arguments name, in ENGINES' order."""
    if args.engines:
        names = args.engines.split(",")
        unknown = sorted(set(names) - {e.name for e in ENGINES})
        if unknown:
            raise SystemExit(f"python -m zoo: error: unknown engine(s) {', '.join(unknown)}")
        return [e for e in ENGINES if e.name in names]
    return [e for e in ENGINES if e.ci] if args.ci else list(ENGINES)


def _longest_first(engine: Engine) -> int:
    return -engine.graphs * (10 if engine.tensor else 1)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    engines = selected(args)
    if args.list:
        for e in engines:
            print(e.requirement, "--no-deps" if e.no_deps else "")
        return 0
    graphs = args.graphs or (CI_GRAPHS if args.ci else None)
    console = Console(width=max(Console().width, 120))  # the table's nine columns whole, also in a log
    start = time.monotonic()
    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        # tensor campaigns, the longest, first: the last to finish is then a short one
        running = {
            e.name: pool.submit(campaign, e, args.out / e.name, graphs, 1, args.seed)
            for e in sorted(engines, key=_longest_first)
        }
        outcomes = [running[e.name].result() for e in engines]
    console.print(table(outcomes))
    for line in details(outcomes):
        console.print(line, markup=False, highlight=False)
    failed = sum(not o.verdict.passed for o in outcomes)
    verdict = "FAIL" if failed else "PASS"
    console.print(
        f"{verdict}: {len(outcomes) - failed} of {len(outcomes)} engines as expected; "
        f"{time.monotonic() - start:.0f} s. Reports: {args.out}/ENGINE/",
        markup=False,
        highlight=False,
    )
    if args.markdown:
        shown = "bash scripts/zoo.sh" + (" --ci" if args.ci else "")
        shown += f" --graphs {args.graphs}" if args.graphs else ""
        shown += f" --seed {args.seed}" if args.seed != 1 else ""
        args.markdown.write_text(markdown(outcomes, shown), encoding="utf-8")
    return 1 if failed else 0
