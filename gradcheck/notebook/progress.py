"""A campaign's progress where `check_engine` runs: bars in a notebook's output, updated in place,
or the command line's rich bars on a terminal.

A notebook's bars are an output updated through IPython's display handle (`display_id`): every
Jupyter front end shows it, and a notebook executed by nbclient keeps its last state, with no
widget library (rich's live display in Jupyter needs ipywidgets, which gradcheck does not require).
The phases and their labels are the command line's (`gradcheck.cli.console.PHASE_BARS`).
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gradcheck.campaign.phases import Progress
from gradcheck.cli.console import PHASE_BARS, progress_bars

REFRESH = 0.25  # seconds between two redraws of a notebook's bars (a phase's end is always drawn)


def in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (rich's test: an IPython kernel's shell, or Colab's)."""
    from rich.console import Console

    return Console().is_jupyter


@contextmanager
def campaign_progress(show: bool) -> Iterator[Progress | None]:
    """The progress callback of a campaign run from Python: None when not `show`n, bars in the
    notebook's output in a Jupyter kernel, else rich's bars on stderr."""
    if not show:
        yield None
        return
    if in_jupyter():
        bars = NotebookBars()
        try:
            yield bars
        finally:
            bars.draw()
        return
    from rich.console import Console

    with progress_bars(Console(stderr=True)) as progress:
        yield progress


class NotebookBars:
    """A campaign's progress callback that draws a bar per phase of `PHASE_BARS` (as the command
    line does: the random graphs' always, the others' once they have work) into one output."""

    def __init__(self) -> None:
        self.phases: dict[str, tuple[int, int]] = {}
        self.handle: Any = None
        self.drawn = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase not in PHASE_BARS or (phase not in self.phases and phase != "check" and total == 0):
            return
        self.phases[phase] = (done, total)
        now = time.monotonic()
        if done >= total or now - self.drawn >= REFRESH:
            self.draw()
            self.drawn = now

    def draw(self) -> None:
        """Show the bars as they are now: a new output the first time, the same one updated after."""
        from IPython.display import display

        if not self.phases:
            return
        bars = Bars(dict(self.phases))
        if self.handle is None:
            self.handle = display(bars, display_id=True)
        else:
            self.handle.update(bars)


class Bars:
    """The bars at one moment, as HTML (a `<progress>` per phase) and as text."""

    def __init__(self, phases: dict[str, tuple[int, int]]) -> None:
        self.phases = phases

    def _repr_html_(self) -> str:
        rows = "".join(
            f'<tr><td style="text-align:left">{html.escape(PHASE_BARS[phase])}</td>'
            f'<td><progress value="{done}" max="{max(total, 1)}"></progress></td>'
            f'<td style="text-align:right">{done}/{total}</td></tr>'
            for phase, (done, total) in self.phases.items()
        )
        return f'<table class="gradcheck-progress">{rows}</table>'

    def __repr__(self) -> str:
        return "\n".join(
            f"{PHASE_BARS[phase]}: {done}/{total}" for phase, (done, total) in self.phases.items()
        )
