"""What `check_engine` returns: the campaign's verdict, its findings as records, its reports, shown
in Jupyter as the triage's first screen (`report_html.first_screen`) and as the command line's
first screen in text elsewhere (`cli.console`); each finding replays against the engine as it is
now, so a learner fixes a cell and sees whether the finding is gone without a new campaign."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcheck.campaign.findings import Finding
from gradcheck.campaign.records import CampaignResult

# The width the text of a result and of a replay is drawn at (a notebook's output, a terminal).
TEXT_WIDTH = 100


@dataclass(frozen=True)
class Replayed:
    """One finding checked again: `fixed` when the engine now agrees on every rebuild (the exit
    status 0 of `gradcheck replay`), and what replay printed (`text`)."""

    number: int
    title: str
    fixed: bool
    text: str

    def _repr_html_(self) -> str:
        from gradcheck.parity.wording import html_text as escape

        colour = "#17602a" if self.fixed else "#8a1c13"
        verdict = "fixed" if self.fixed else "still fails"
        return (
            f'<p style="font-weight:bold;color:{colour}">finding {self.number} ({escape(self.title)}): '
            f"{verdict}</p><pre>{escape(self.text)}</pre>"
        )

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class EngineFinding:
    """Finding `number` of a check: its `record` (title, tier, kind, ops, problems, graph, the
    repro's code) and `replay()`, which checks it again on the engine as it is now."""

    number: int
    record: Finding
    replayer: Callable[[int], Replayed] = field(repr=False, compare=False)

    @property
    def title(self) -> str:
        return self.record.title

    @property
    def tier(self) -> str:
        return self.record.tier

    @property
    def ops(self) -> tuple[str, ...]:
        return self.record.ops

    @property
    def code(self) -> str:
        """Python that reproduces it, in the engine's own terms where it has them."""
        from gradcheck.campaign.overview import finding_code

        return finding_code(self.record)

    def replay(self) -> Replayed:
        """This finding's graph checked again (its structural phase, for a graph-code finding) on
        the engine as it is now: a class redefined in a later cell is the one checked."""
        return self.replayer(self.number)

    def __repr__(self) -> str:
        return f"<finding {self.number} · {self.tier} · {self.title}>"


@dataclass(frozen=True)
class EngineCheck:
    """A campaign's outcome: `passed` (as `gradcheck run`'s exit status 0), the `findings` in the
    report's numbering, where they were written (`reports`: report.json and report.html, none
    without an output folder), the full `result` and `report` (report.json's content), and the
    `notes` said while it ran (where the engine ran, the jobs lowered)."""

    passed: bool
    findings: tuple[EngineFinding, ...]
    result: CampaignResult = field(repr=False)
    report: dict[str, Any] = field(repr=False)
    reports: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()
    inspection: str | None = field(default=None, repr=False)  # what inspecting a value class found

    @property
    def first_to_fix(self) -> EngineFinding | None:
        """The finding the first screen puts first (bugs, then graph code, then adapter faults;
        None when there is none of those)."""
        from gradcheck.campaign.overview import overview

        rows = overview(self.result.findings, self.report.get("unexplained")).rows
        return self.findings[rows[0].number] if rows else None

    def lines(self) -> list[str]:
        """The lines the first screen says beside the verdict: the notes and the reports' paths."""
        where = [f"Reports: {', '.join(map(str, self.reports))}"] if self.reports else []
        return [*self.notes, *where]

    def _repr_html_(self) -> str:
        from gradcheck.campaign.report_html import first_screen

        return first_screen(self.report, self.lines())

    def text(self, width: int = TEXT_WIDTH) -> str:
        """The first screen as text: the command line's summary, then the top finding in detail."""
        from rich.text import Text

        from gradcheck.cli.console import print_finding, print_summary
        from gradcheck.cli.text_console import text_console

        buffer = io.StringIO()
        console = text_console(buffer, width)
        unexplained = self.report.get("unexplained")
        for line in self.lines():
            console.print(Text(line), soft_wrap=True)
        print_summary(self.result, console, unexplained)
        if self.first_to_fix is not None:
            print_finding(self.result, self.first_to_fix.number, console)
        return buffer.getvalue()

    def __repr__(self) -> str:
        return self.text()
