"""Reading reports of schema_version 1, whose problems were sentences, as records.

report.json of schema 1 (written before problems were records, `gradcheck.parity.problem`) has a
finding's and a failure's `problems` as the checks' words only. A reader of such a report
(`Finding.from_dict`: `gradcheck replay`, the HTML report of a saved run) gets each sentence back
as a record of kind `What.EARLIER`, the sentence kept as its `note`, with what schema 1's readers
took from the words: the check it belongs to and the exception it names, with who raised it and
where (an adapter's fault). This module is the one place where the words are read back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gradcheck.engines.origin import Frame, FrameKind, Producer, Raised
from gradcheck.parity.problem import FORWARD, GRADIENT, SECOND, Problem, What

# The schema versions this gradcheck reads: the current one and the one before it.
EARLIER_SCHEMA_VERSION = 1

_POINT = re.compile(r"^point \d+ \((?:[^()]|\([^()]*\))*\): ")
_RAISED = re.compile(
    r"(engine|adapter) raised ([A-Za-z_][\w.]*)(?:: (.*?))?(?: \(in ([^()]*(?:\([^()]*\))?)\))?\s*$"
)
_NO_ATTRIBUTE = re.compile(r"has no attribute '(\w+)'")
_MODULE = re.compile(r"^the adapter's module \((.*), line (\d+)\)$")


def problems_from_sentences(sentences: Iterable[str]) -> tuple[Problem, ...]:
    """Schema 1's problem sentences as records (see the module docstring)."""
    return tuple(problem_from_sentence(str(s)) for s in sentences)


def problem_from_sentence(sentence: str) -> Problem:
    """One sentence of schema 1 as a record of kind `EARLIER`."""
    text = _POINT.sub("", sentence)
    check = (
        SECOND
        if text.startswith("second derivatives")
        else FORWARD
        if text.startswith("forward")
        else GRADIENT
    )
    return Problem(What.EARLIER, check, raised=_raised(text), note=sentence)


def _raised(text: str) -> Raised | None:
    match = _RAISED.search(text)
    if match is None:
        return None
    who, kind, message, where = match.groups()
    attribute = _NO_ATTRIBUTE.search(message or "")
    if who == "engine" or where is None:
        return Raised(kind, message or "", Producer.ENGINE)
    return Raised(
        kind, message or "", Producer.ADAPTER, _frame(where), attribute.group(1) if attribute else None
    )


def _frame(where: str) -> Frame:
    """Schema 1's words for an adapter's frame ("gradcheck's default spelling", "the adapter's
    T.apply", ...) as the record."""
    if where == "gradcheck's default spelling":
        return Frame(FrameKind.DEFAULT_SPELLING)
    if where.startswith("gradcheck's default "):
        return Frame(FrameKind.DEFAULT_METHOD, where.removeprefix("gradcheck's default "))
    module = _MODULE.match(where)
    if module:
        return Frame(FrameKind.ADAPTER_MODULE, module.group(1), int(module.group(2)))
    return Frame(FrameKind.ADAPTER_METHOD, where.removeprefix("the adapter's "))
