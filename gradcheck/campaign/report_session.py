"""One report session for every front end: `gradcheck run`, `gradcheck gate` and the pytest plugin
hand it what a campaign (or a gate) concluded, and it writes every file a reader or a CI keeps:
report.json and report.html (a run's `--out`), the markdown summary (`--summary-md`) and JUnit
(`--junit-xml`). It returns what the console shows: the result with each finding's replay command,
the report, and the gate's failure in words. The front ends only print (cli/console.py) or fail a
test with the text (suite/plugin.py); none of them assembles reports of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcheck.atomic import write_text
from gradcheck.campaign.outputs import ReportDirectory, write_report_pair
from gradcheck.campaign.overview import finding_text
from gradcheck.campaign.records import CampaignResult
from gradcheck.campaign.report_json import build_report
from gradcheck.campaign.report_junit import gate_suites, run_suite, write_junit
from gradcheck.campaign.report_markdown import gate_markdown, run_markdown
from gradcheck.campaign.verdict import GateResult
from gradcheck.engines.loading import import_root
from gradcheck.launcher import command_line


@dataclass(frozen=True)
class CiFiles:
    """The files a CI reads, when asked for: JUnit XML and a markdown summary."""

    junit_xml: Path | None = None
    summary_md: Path | None = None


@dataclass(frozen=True)
class RunReport:
    """What a run's reports hold, for the console: the result with each finding's replay command,
    report.json's content, the unexplained graphs' entry (None when every failing graph has its
    finding) and the paths of report.json and report.html (none when no file was written)."""

    result: CampaignResult
    report: dict[str, Any]
    unexplained: dict[str, Any] | None
    written: tuple[Path, Path] | tuple[()]


# How finding i of a run is replayed, in words a reader types (the command line's by default).
Repro = Callable[[int], str]


def report_run(
    result: CampaignResult,
    out: ReportDirectory,
    command: list[str],
    ci: CiFiles,
    repro: Repro | None = None,
) -> RunReport:
    """Write a run's report.json and report.html into `out` (before anything is printed), then the
    CI files; `command`: the command line as typed (report.json's `run`); `repro`: how each
    finding is replayed (default: `gradcheck replay` on the report.json written)."""
    saved = with_repros(result, out.path / "report.json", repro)
    report = build_report(saved, command=command, run_id=out.run_id)
    written = write_report_pair(report, out.path)
    unexplained = report.get("unexplained")
    if ci.junit_xml is not None:
        write_junit([run_suite(saved)], ci.junit_xml)
    if ci.summary_md is not None:
        write_text(ci.summary_md, run_markdown(saved, unexplained))
    return RunReport(saved, report, unexplained, written)


def report_unwritten(result: CampaignResult, command: list[str], repro: Repro) -> RunReport:
    """What `report_run` returns, with no file written (`written` empty): a campaign run from
    Python without an output folder (`gradcheck.check_engine`)."""
    saved = with_repros(result, None, repro)
    report = build_report(saved, command=command)
    return RunReport(saved, report, report.get("unexplained"), ())


def report_gate(outcome: GateResult, ci: CiFiles) -> str:
    """Write a gate's CI files; return its failure in words (`gate_failure`)."""
    if ci.summary_md is not None:
        write_text(ci.summary_md, gate_markdown(outcome))
    if ci.junit_xml is not None:
        write_junit(gate_suites(outcome), ci.junit_xml)
    return gate_failure(outcome)


def gate_failure(outcome: GateResult) -> str:
    """A failed gate as the command line says it, the verdict first: new findings and failing op
    rows, then each new finding in full with its repro in the engine's terms, the summary."""
    lines = outcome.verdict_lines()
    for new in outcome.new_findings:
        lines += ["", f"new finding ({new.part}):", finding_text(new.finding)]
    return "\n".join([*lines, "", *outcome.new_coverage, outcome.summary()])


def with_repros(
    result: CampaignResult, report_path: Path | None, repro: Repro | None = None
) -> CampaignResult:
    """Each finding with how it is replayed: `repro(i)`, or the replay command of finding i of the
    report.json about to be written at `report_path`, with the PYTHONPATH the engine's module
    needs in a fresh process (a file spec is absolute)."""
    if repro is None:
        assert report_path is not None, "the command line's repro replays a report.json"
        engine, path = result.settings.engine, str(report_path)
        root = import_root(engine)
        repro = lambda i: replay_command(path, engine, i, root)
    findings = [dataclasses.replace(f, repro=repro(i)) for i, f in enumerate(result.findings)]
    return dataclasses.replace(result, findings=findings)


def replay_command(path: str, engine: str, index: int | None = None, pythonpath: str | None = None) -> str:
    """The command that re-runs a saved graph (a corpus file, or finding `index` of a report.json),
    started as this gradcheck was (`gradcheck.launcher`); `pythonpath`: the folder the engine's
    module imports from, when a fresh process needs it."""
    args = ["replay", path, "--engine", engine]
    if index is not None:
        args += ["--finding", str(index)]
    return command_line(*args, pythonpath=pythonpath)
