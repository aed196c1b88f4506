"""A rich console writing plain text into a buffer: for output captured to be shown elsewhere
(a replay's lines sent back from a worker, a notebook result's text)."""

from __future__ import annotations

from typing import Any

from rich.console import Console


def text_console(buffer: Any, width: int = 80, terminal: bool = False, colors: str | None = None) -> Console:
    """A console writing into `buffer` (plain text unless `terminal`), also in a Jupyter kernel or
    a fork of one, where rich would display instead of writing."""
    return Console(
        file=buffer,
        width=width,
        force_terminal=terminal,
        force_jupyter=False,
        color_system=colors,  # type: ignore[arg-type]
        highlight=False,
    )
