"""A problem is a record: what a check found at one point, as fields that later code reads.

Every check that compares an engine with a reference (the graph check's forward values,
gradients, central differences and Hessian-vector products, the float32 check, the edge values,
the structural phase, a worker's death, the inspection of a value class) reports what it found
as a `Problem`: which check, at which point and entry, what happened (`What`), the engine's and
the reference's numbers, the allowance and the bound it came from, an exception as a `Raised`
record (its type, message and who raised it). Classification, grouping, settling, tiers and the
gate's identities read these fields; words are made only by the renderers
(`gradcheck.parity.wording`, and the console, HTML, markdown and JUnit reports over it), so a
reworded message never changes a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import Any

from gradcheck.engines.origin import Raised
from gradcheck.parity.what import (
    EDGE_DIFFERENCES,
    FORWARD,
    FORWARD_MODE,
    GRADIENT,
    NOT_NUMBERS,
    SECOND,
    TRANSFORM,
    BoundKind,
    Off,
    What,
)
from gradcheck.parity.wording import describe

__all__ = [
    "EDGE_DIFFERENCES",
    "FORWARD",
    "FORWARD_MODE",
    "GRADIENT",
    "NOT_NUMBERS",
    "SECOND",
    "TRANSFORM",
    "BoundKind",
    "Off",
    "Problem",
    "What",
]


@dataclass(frozen=True)
class Problem:
    """What one check found at one entry of one point (see the module docstring).

    check: "forward", "gradient" or "second-derivative". point: the batch point it was found at,
    `inputs` that point's values by input name (None and () before the check records its point).
    output / input / index: the entry: an output's number, a gradient's input label ("x0",
    "x1[2]"), a flat entry (a Hessian-vector product's). engine / reference: the numbers compared
    (torch's, or the float64 truth for float32), `numeric` central differences'; error: their
    absolute difference, `relative` the relative one where the check reports it; allowed: the
    error allowed; bound: the rounding bound the allowance was made from, `bound_kind` which, and
    `safety` the multiple of it allowed; `exact` the exact value when known, and `off` who is off
    it (`Off`: the engine alone, torch alone or both; None where torch's answer was not judged
    against it). raised: an exception's record. answer: a non-number's type and short repr in
    words, `answer_type` the type's name alone (what grouping reads);
    shape / expected: shapes of a wrong-shape answer, and `unpassed` an attribute (keepdim)
    without which the graph has the answer's shape: the adapter may not pass it on; counts: the
    outputs and gradients given and expected. case: a structural check's or an edge case's name;
    rate: the failures and runs of a structural check's rebuilds; skipped: a unit not run because
    its op ended a worker before (a death's problem); note: words of a check no decision reads (a
    structural check's evidence), or an earlier report's
    sentence.
    """

    what: What
    check: str = GRADIENT
    point: int | None = None
    inputs: tuple[tuple[str, Any], ...] = ()
    output: int | None = None
    input: str | None = None
    index: int | None = None
    engine: Any = None
    reference: Any = None
    numeric: float | None = None
    error: float | None = None
    relative: float | None = None
    allowed: float | None = None
    bound: float | None = None
    bound_kind: BoundKind | None = None
    safety: float | None = None
    exact: float | None = None
    off: Off | None = None
    torch32: float | None = None
    torch32_error: float | None = None
    raised: Raised | None = None
    answer: str = ""
    answer_type: str = ""
    shape: tuple[int, ...] | None = None
    expected: tuple[int, ...] | None = None
    counts: tuple[int, int, int, int] | None = None
    unpassed: str = ""
    direction: tuple[float, ...] | None = None
    case: str = ""
    rate: tuple[int, int] | None = None
    skipped: bool = False
    note: str = ""

    def __str__(self) -> str:
        return describe(self)  # the renderer: words are made there only

    def at(self, point: int, inputs: tuple[tuple[str, Any], ...]) -> Problem:
        """This problem found at batch `point`, whose input values are `inputs`."""
        return replace(self, point=point, inputs=inputs)

    @property
    def by_adapter(self) -> bool:
        """Whether this is an exception the adapter's code (or a default spelling) raised."""
        return self.raised is not None and self.raised.by_adapter

    @property
    def first_order(self) -> bool:
        """A problem of the forward values or first derivatives: a difference from torch or
        central differences, or an exception met there."""
        if self.what is What.RAISED:
            return self.check not in (SECOND, FORWARD_MODE, TRANSFORM)
        return self.what in (What.FORWARD, What.GRADIENT, What.NUMERIC) or self.what in EDGE_DIFFERENCES

    @property
    def of_forward_values(self) -> bool:
        """A difference of the forward values from torch's (at a random point or an edge value)."""
        return self.what is What.FORWARD or (self.what in EDGE_DIFFERENCES and self.check == FORWARD)

    @property
    def oracle_only(self) -> bool:
        """Whether only central differences dissent (the engine is not judged against torch here)."""
        return self.what in (What.NUMERIC, What.REFERENCES_DISAGREE)

    def to_dict(self) -> dict[str, Any]:
        """The record as report.json writes it: its set fields only, numbers JSON can hold."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value is False or value == () or value == "":
                continue
            if f.name == "raised":
                value = value.to_dict()
            elif isinstance(value, Enum):
                value = value.value
            out[f.name] = _json(value)
        out.setdefault("check", self.check)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Problem:
        """A record read back from report.json (`to_dict`'s inverse)."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: v for k, v in d.items() if k in known}
        values["what"] = What(d["what"])
        if "bound_kind" in values:
            values["bound_kind"] = BoundKind(values["bound_kind"])
        if "off" in values:
            values["off"] = Off(values["off"])
        if "raised" in values:
            values["raised"] = Raised.from_dict(values["raised"])
        if "inputs" in values:
            values["inputs"] = tuple((str(name), _number(v)) for name, v in values["inputs"])
        for name in ("shape", "expected", "counts", "direction", "rate"):
            if name in values:
                values[name] = tuple(values[name])
        for name in ("engine", "reference", "numeric", "error", "relative", "allowed", "bound", "exact"):
            if name in values:
                values[name] = _number(values[name])
        return cls(**values)


def _json(value: Any) -> Any:
    """A value JSON holds as it is: non-finite floats as "inf", "-inf", "nan" strings; tuples as lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_json(v) for v in value]
    return value


def _number(value: Any) -> Any:
    """`_json`'s inverse for numbers (lists stay lists)."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, list):
        return [_number(v) for v in value]
    return value


def raised_problem(raised: Raised, check: str = GRADIENT) -> Problem:
    """An exception met in `check`, as a problem."""
    return Problem(What.RAISED, check, raised=raised)


def adapter_fault(problems: Any) -> Problem | None:
    """The first of `problems` that is an exception of the adapter's (None when none is)."""
    return next((p for p in problems if p.by_adapter), None)


def raised_type(problems: Any) -> str:
    """The type of the first exception the engine (or its adapter) raised among `problems` ("" if
    none did; an answer that could not be read as a number is a non-number, not an exception)."""
    return next((p.raised.type for p in problems if p.raised is not None and p.what not in NOT_NUMBERS), "")
