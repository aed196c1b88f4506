"""What the docs' tests read of the markdown files: which files, their fenced blocks, their prose."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PERFORMANCE = ROOT / "docs" / "performance.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Words that mark a measured figure: each paragraph stating one must name the benchmark printing it,
# and only docs/performance.md states them.
MEASURED = re.compile(r"µs|bytes per node|graphs/s\b|times tighter|\bms\b|\d+(\.\d+)?x\b")


def blocks(path: Path, language: str) -> list[tuple[int, str]]:
    """(line number, source) of each fenced block of `language` in the markdown file."""
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) == language
    ]


def prose(path: Path) -> str:
    """The file's text without its fenced blocks (each replaced by as many empty lines)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text(encoding="utf-8"))


def paragraphs(path: Path) -> list[str]:
    """The prose's paragraphs, tables left out."""
    return [p for p in re.split(r"\n\s*\n", prose(path)) if p.strip() and not p.lstrip().startswith("|")]
