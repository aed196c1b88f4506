"""Text from engines made safe to show: control characters appear escaped, never executed.

An engine's exception message may hold ANSI sequences (`\\x1b[31m`), carriage returns or bidi
overrides that would recolour, overwrite or reorder a terminal line or a report page. Shown
escaped, they are visible and harmless; newlines and tabs are kept.
"""

from __future__ import annotations

import html
import unicodedata

_KEPT = {"\n", "\t"}
# Invisible characters that reorder the text around them (Trojan Source).
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}


def printable(text: object) -> str:
    """`text` (or a record, in its renderer's words: `str`) with every control and bidi character
    written as Python writes it escaped."""
    return "".join(_escaped(ch) for ch in str(text))


def html_text(text: str) -> str:
    """`printable(text)` escaped for HTML (&, <, >, quotes)."""
    return html.escape(printable(text))


def _escaped(ch: str) -> str:
    if ch in _KEPT or (unicodedata.category(ch) != "Cc" and ch not in _BIDI):
        return ch
    return repr(ch)[1:-1]  # Python's own escape: \\r, \\x1b, \\u202e
