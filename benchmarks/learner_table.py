"""What `gradcheck run` reports first on the tutorial engine and on each of its one-mistake variants.

    python benchmarks/learner_table.py [--graphs 2000] [--only NoSeed,TanhOneMinusT] [--jobs 1]
                                       [--timeout 600] [--markdown FILE]

For `gradcheck.testing.tutorial_engines.TutorialValue` and each variant in its `MISTAKES` table,
runs `python -m gradcheck run --engine gradcheck.testing.tutorial_engines:<Class> --graphs N` as a
learner would, reads the campaign's report.json and prints one row: the first finding (tier and
title, as the report gives them), how many bug and graph-code findings there are, how many failing
graphs no finding explains, whether the first finding is the one `MISTAKES` expects (the op that
holds the mistake, or the graph code, in an expected tier), whether it names the wrong derivative
where the table has one, and the campaign's wall time. A campaign longer than --timeout is stopped
and its row says "timed out".

Not a pytest-benchmark benchmark: each row is a whole campaign run in a subprocess of its own (with
its console, its report files and possibly its workers), timed end to end, not a call in this
process.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from gradcheck.testing.tutorial_mistakes import MISTAKES, Mistake, is_expected, names_it

ROOT = Path(__file__).resolve().parents[1]
HEADER = (
    "variant",
    "first finding",
    "bugs",
    "graph-code",
    "new",
    "unexplained",
    "expected first",
    "named",
    "seconds",
)
CODE_TIERS = ("bug", "graph-code")  # the tiers a learner must fix; edge behaviours are not counted


class Row(NamedTuple):
    """One campaign's line of the table; `outcome` is "" when the campaign wrote its report (a
    named tuple, not a dataclass: the script's tests load it outside sys.modules)."""

    engine: str
    seconds: float
    outcome: str = ""
    first: str = ""
    bugs: int = 0
    graph_code: int = 0
    unexplained: int = 0
    expected_first: bool = False
    named: str = "-"
    code_findings: tuple[str, ...] = ()  # each bug or graph-code finding as "tier: title"

    def new(self, baseline: Row | None) -> str:
        """How many of the row's bug and graph-code findings the correct engine's campaign (the
        baseline) does not have, by tier and title; "?" without a baseline."""
        if baseline is None or baseline.outcome or baseline is self:
            return "-" if baseline is self else "?"
        return str(sum(f not in baseline.code_findings for f in self.code_findings))

    def cells(self, baseline: Row | None = None) -> tuple[str, ...]:
        """The row's cells, in `HEADER`'s order; `baseline` is the correct engine's row."""
        if self.outcome:
            return (self.engine, self.outcome, "", "", "", "", "no", "-", f"{self.seconds:.0f}")
        return (
            self.engine,
            self.first,
            str(self.bugs),
            str(self.graph_code),
            self.new(baseline),
            str(self.unexplained),
            "yes" if self.expected_first else "no",
            self.named,
            f"{self.seconds:.0f}",
        )


def row_of(mistake: Mistake, report: dict[str, Any], seconds: float) -> Row:
    """The table's row for one campaign's report.json."""
    findings = report.get("findings") or []
    tiers = report.get("totals", {}).get("tiers", {})
    left = report.get("unexplained") or {}
    if not findings:
        return Row(mistake.engine, seconds, first="(no finding)", unexplained=left.get("graphs", 0))
    first = findings[0]
    return Row(
        engine=mistake.engine,
        seconds=seconds,
        first=f"{first.get('tier')}: {first.get('title')}",
        bugs=tiers.get("bug", 0),
        graph_code=tiers.get("graph-code", 0),
        unexplained=left.get("graphs", 0),
        expected_first=is_expected(mistake, first),
        named=names_it(mistake, first),
        code_findings=tuple(f"{f['tier']}: {f['title']}" for f in findings if f.get("tier") in CODE_TIERS),
    )


def run_campaign(mistake: Mistake, graphs: int, jobs: int, timeout: float, out: Path) -> Row:
    """`python -m gradcheck run` on the mistake's engine, as a user runs it, and its row."""
    command = [sys.executable, "-m", "gradcheck", "run", "--engine", mistake.spec, "--graphs", str(graphs)]
    command += ["--jobs", str(jobs), "--out", str(out)]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)  # this checkout's gradcheck, as the script imports it
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        _, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the campaign's own session: it and its workers
        process.wait()
        return Row(mistake.engine, time.perf_counter() - start, outcome=f"timed out after {timeout:.0f} s")
    seconds = time.perf_counter() - start
    report = out / "report.json"
    if not report.exists():
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return Row(mistake.engine, seconds, outcome=f"no report (exit {process.returncode}): {last[0][:80]}")
    return row_of(mistake, json.loads(report.read_text(encoding="utf-8")), seconds)


def chosen(only: str) -> tuple[Mistake, ...]:
    """The table's rows named in `--only` (comma-separated class names), or all of them."""
    if not only:
        return MISTAKES
    names = [n.strip() for n in only.split(",") if n.strip()]
    known = {m.engine: m for m in MISTAKES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"--only: no variant {', '.join(unknown)}; expected some of {', '.join(known)}")
    return tuple(known[n] for n in names)


def baseline_of(rows: list[Row]) -> Row | None:
    """The correct engine's row, which the others' "new" count is against, if it was run."""
    return next((r for r in rows if r.engine == "TutorialValue"), None)


def markdown(rows: list[Row], graphs: int) -> str:
    """The table as GitHub markdown, under a line saying how it was made."""
    baseline = baseline_of(rows)
    lines = [
        f"`python benchmarks/learner_table.py --graphs {graphs}` (new: bug and graph-code findings that "
        "the correct engine's campaign does not have)",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r.cells(baseline)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=2000, help="random graphs per campaign")
    parser.add_argument("--only", default="", help="comma-separated engine classes (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="gradcheck run --jobs")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a campaign is stopped")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--keep", type=Path, help="keep each campaign's reports in DIR/<Class>/")
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="learner-table-") as scratch:
        for mistake in chosen(args.only):
            out = (args.keep or Path(scratch)) / mistake.engine
            rows.append(run_campaign(mistake, args.graphs, args.jobs, args.timeout, out))
            print(" | ".join(rows[-1].cells(baseline_of(rows))), flush=True)
    print()
    print(markdown(rows, args.graphs))
    if args.markdown:
        args.markdown.write_text(markdown(rows, args.graphs), encoding="utf-8")


if __name__ == "__main__":
    main()
