"""The words for a problem: how every report (console, HTML, markdown, JUnit, a repro's header,
report.json's `problems`) says what a check found. The only module that turns a `Problem` into
text; nothing reads the text back (`gradcheck.parity.problem`).

`TEMPLATES` holds one function per kind of problem; a point's prefix ("point 3 (x0=0.5): ") and
the exception's words are `at_point` and `exception`. A test rewords them all and shows that no
verdict, tier or gate identity moves.

The renderers show text that came from an engine (an exception's message, within those words)
through `printable`: an ANSI sequence (`\\x1b[31m`), a carriage return or a bidi override would recolour,
overwrite or reorder a terminal line or a report page; written escaped, it is visible and
harmless (newlines and tabs are kept).
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Callable
from typing import Any

from gradcheck.engines.origin import Frame, FrameKind, Producer, Raised
from gradcheck.parity.what import EDGE_DIFFERENCES, FORWARD_MODE, SECOND, TRANSFORM, BoundKind, Off, What

Problem = Any  # a `gradcheck.parity.problem.Problem` (which imports this module for its `str`)

_KEPT = {"\n", "\t"}
# Invisible characters that reorder the text around them (Trojan Source).
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)}


def number(value: Any, digits: int = 3) -> str:
    """A number in words: `digits` significant digits ("1.3e-12", "0.5", "inf")."""
    return f"{value:.{digits}g}"


def figure(value: float | None, places: int = 2) -> str:
    """The one format of the reports' figures (errors in tables): "1.23e-12" (`places` decimals),
    "0", "inf", and "-" (an en dash) for none."""
    if value is None:
        return "\u2013"
    return "0" if value == 0 else f"{value:.{places}e}"


def outside(error: float, bound: float, safety: float) -> str:
    """How far a difference from torch is outside its rounding bound: "412 × the rounding bound
    2.9e-16 (allowed 4 ×)"; an entry float64 computes exactly has bound 0."""
    if not bound > 0:
        return f"the entry is exact in float64 (rounding bound 0), allowed {safety:g} × that"
    return f"{number(error / bound)} × the rounding bound {number(bound, 2)} (allowed {safety:g} ×)"


def frame(where: Frame) -> str:
    """Where in the adapter an exception came from: "the adapter's TapeAdapter.apply",
    "gradcheck's default spelling", "the adapter's module (adapter.py, line 12)"."""
    if where.kind is FrameKind.DEFAULT_SPELLING:
        return "gradcheck's default spelling"
    if where.kind is FrameKind.DEFAULT_METHOD:
        return f"gradcheck's default {where.name}"
    if where.kind is FrameKind.ADAPTER_MODULE:
        return f"the adapter's module ({where.name}, line {where.line})"
    return f"the adapter's {where.name}"


def exception(raised: Raised) -> str:
    """ "engine raised X: message", or "adapter raised X: message (in the adapter's T.apply)"."""
    if raised.producer is Producer.ADAPTER and raised.frame is not None:
        return f"adapter raised {raised.type}: {raised.message} (in {frame(raised.frame)})"
    return f"engine raised {raised.type}: {raised.message}"


def at_point(p: Problem) -> str:
    """The prefix naming the point a problem was found at ("" before it is recorded at one)."""
    if p.point is None:
        return ""
    values = ", ".join(f"{name}={value!r}" for name, value in p.inputs)
    return f"point {p.point} ({values}): "


def _answer(p: Problem) -> str:
    if p.check == FORWARD_MODE:
        return "forward mode's J·v"
    return f"output {p.output}" if p.input is None else f"the gradient of {p.input}"


def _forward(p: Problem) -> str:
    if p.off is Off.TORCH:
        return f"forward: output {p.output}: {_torch_off(p)}"
    if p.bound_kind is BoundKind.ANY_ORDER:
        relative = f"rel err {number(p.relative)}; " if p.relative is not None else ""
        return (
            f"forward: output {p.output} is {p.engine!r} but torch gives {p.reference!r} and the exact "
            f"value is {p.exact!r} ({relative}{outside_any_order(p)}){_who(p)}"
        )
    return (
        f"forward: output {p.output} is {p.engine!r} but torch gives {p.reference!r} "
        f"(rel err {number(p.relative)}; {outside(p.error, p.bound, p.safety)})"
    )


def outside_any_order(p: Problem) -> str:
    """How far an entry is from the exact value, against the rounding bound of any correct
    evaluation: "412 × the rounding bound of any evaluation order 2.9e-16 (allowed 4 ×)"."""
    if not p.bound > 0:
        return f"exact in float64 in any evaluation order (rounding bound 0), allowed {p.safety:g} × that"
    ratio = f"{number(p.error / p.bound)} × the rounding bound of any evaluation order {number(p.bound, 2)}"
    return f"{ratio} (allowed {p.safety:g} ×)"


def _who(p: Problem) -> str:
    """Who else is off the exact value, when torch was judged beside the engine: ", torch too"."""
    if p.off is Off.BOTH:
        return "; torch is off too"
    if p.off is Off.ENGINE:
        return "; torch is within its allowance"
    return ""


def _torch_off(p: Problem) -> str:
    """An entry where torch alone is off the exact value (the engine is within its allowance)."""
    if p.bound_kind is BoundKind.EXACT_HVP:
        how = outside_hvp(p)
    elif p.bound_kind is BoundKind.ANY_ORDER:
        how = outside_any_order(p)
    else:
        how = f"allowed {number(p.allowed)}"
    if p.engine is None:  # torch judged alone (an op node of a graph where it was off)
        return f"torch is off: torch {p.reference!r}, exact {p.exact!r} (abs err {number(p.error)}; {how})"
    return (
        f"torch is off: torch {p.reference!r}, exact {p.exact!r}, engine {p.engine!r} (torch's abs err "
        f"{number(p.error)}; {how}); the engine is within its allowance"
    )


def outside_hvp(p: Problem) -> str:
    """How far a Hessian-vector product entry is from the exact value, against its allowance:
    "12 × the H·v rounding bound 2.9e-16 (allowed 16 ×)"."""
    if not p.bound > 0:
        return f"the H·v rounding bound is 0, allowed {number(p.allowed)}"
    return (
        f"{number(p.error / p.bound)} × the H·v rounding bound {number(p.bound, 2)} (allowed {p.safety:g} ×)"
    )


def _gradient(p: Problem) -> str:
    if p.off is Off.TORCH:
        return f"gradient of {p.input}: {_torch_off(p)}"
    if p.bound_kind is BoundKind.ANY_ORDER:
        return (
            f"gradient of {p.input}: engine {p.engine!r}, torch {p.reference!r}, exact {p.exact!r} "
            f"(abs err {number(p.error)}; {outside_any_order(p)}){_who(p)}"
        )
    return (
        f"gradient of {p.input}: engine {p.engine!r}, torch {p.reference!r} "
        f"(abs err {number(p.error)}; {outside(p.error, p.bound, p.safety)})"
    )


def _numeric(p: Problem) -> str:
    return (
        f"gradient of {p.input}: engine {p.engine!r}, central differences {p.numeric!r} "
        f"(abs err {number(p.error)} > allowed {number(p.allowed)})"
    )


def _references(p: Problem) -> str:
    if p.exact is not None:
        return (
            f"reference disagreement: the exact gradient of {p.input} {p.exact!r} vs central "
            f"differences {p.numeric!r} (abs err {number(p.error)} > allowed {number(p.allowed)})"
        )
    return (
        f"reference disagreement: torch's gradient of {p.input} {p.reference!r} vs central "
        f"differences {p.numeric!r} (abs err {number(p.error)} > allowed {number(p.allowed)})"
    )


def _hessian(p: Problem) -> str:
    direction = list(p.direction or ())
    if p.off is Off.TORCH:
        entry = f"second derivatives: Hessian-vector product entry {p.index}"
        return f"{entry}: {_torch_off(p)}; direction {direction}"
    if p.bound_kind is BoundKind.EXACT_HVP:
        return (
            f"second derivatives: Hessian-vector product entry {p.index}: engine {p.engine!r}, torch "
            f"{p.reference!r}, exact {p.exact!r} ({outside_hvp(p)}; direction {direction}){_who(p)}"
        )
    return (
        f"second derivatives: Hessian-vector product entry {p.index}: engine {p.engine!r}, "
        f"torch {p.reference!r} ({outside(p.error, p.bound, p.safety)}; direction {list(p.direction or ())})"
    )


def _jvp(p: Problem) -> str:
    torch = "" if p.reference is None else f", torch {p.reference!r}"
    return (
        f"forward mode: J·v entry {p.index}: engine {p.engine!r}{torch}, exact {p.exact!r} (abs err "
        f"{number(p.error)} > allowed {number(p.allowed)}; direction {list(p.direction or ())}){_who(p)}"
    )


def _modes(p: Problem) -> str:
    return (
        f"forward and reverse mode disagree: u·(J v) {p.engine!r} by forward mode, (u J)·v "
        f"{p.reference!r} by reverse mode (abs err {number(p.error)} > allowed {number(p.allowed)}; "
        f"direction {list(p.direction or ())})"
    )


def _transform(p: Problem) -> str:
    judge = f"exact {p.exact!r}" if p.exact is not None else "no exact value"
    entry, own = "gradient entry", "reverse mode"
    if p.direction is not None:  # a Hessian-vector product by another order (`hvp_transforms`)
        entry, own = "Hessian-vector product entry", "its H·v"
    along = "" if p.direction is None else f"; direction {list(p.direction)}"
    return (
        f"{p.case}: {entry} {p.index}: {p.engine!r}, {own} {p.reference!r}, {judge} "
        f"(abs err {number(p.error)} > allowed {number(p.allowed)}{along})"
    )


_PARTS = {SECOND: "second derivatives: ", FORWARD_MODE: "forward mode: "}


def _raised(p: Problem) -> str:
    assert p.raised is not None
    part = f"{p.case}: " if p.check == TRANSFORM else _PARTS.get(p.check, "")
    return part + exception(p.raised)


def _count(p: Problem) -> str:
    assert p.counts is not None
    outputs, gradients, want_outputs, want_gradients = p.counts
    return (
        f"wrong type: the engine gave {outputs} output(s) and {gradients} gradient(s), "
        f"expected {want_outputs} and {want_gradients}"
    )


def _not_a_number(p: Problem) -> str:
    return f"wrong type: {_answer(p)} is {p.answer}, not a number"


def _shape(p: Problem) -> str:
    return f"wrong type: {_answer(p)} has shape {p.shape}, expected {p.expected}"


def _not_real(p: Problem) -> str:
    message = p.raised.message if p.raised is not None else ""
    return f"wrong type: the engine gave a result that is not a real number: {message}"


def _dtype(p: Problem) -> str:
    return f"dtype: output {p.output} is {p.engine} but torch gives {p.reference} (type promotion)"


def _float32(p: Problem) -> str:
    entry = p.input if p.input is not None else p.index
    return (
        f"float32 {p.check} {entry}: engine {p.engine!r}, float64 truth {p.reference!r}, torch float32 "
        f"{p.torch32!r} (engine err {number(p.error)} > allowed {number(p.allowed)}; "
        f"torch's float32 err {number(p.torch32_error)})"
    )


def _edge_entry(p: Problem) -> str:
    return "value" if p.input is None else f"gradient of {p.input}"


def _edge_shape(p: Problem) -> str:
    return f"{_edge_entry(p)}: shape {p.shape}, torch {p.expected}"


def _edge_pattern(p: Problem) -> str:
    return f"{_edge_entry(p)}: engine {p.engine}, torch {p.reference}{_edge_exact(p)}"


def _edge_value(p: Problem) -> str:
    error = f" (abs err {number(p.error)})"
    return f"{_edge_entry(p)}: engine {p.engine}, torch {p.reference}{error}{_edge_exact(p)}"


def _edge_exact(p: Problem) -> str:
    """Where the exact value judged an edge case: what it is and who is off it (or, under the
    exact reference, that none could be had there)."""
    if p.off is None:
        return f"; {p.note}" if p.note else ""
    exact = "" if p.exact is None else f", exact {p.exact!r}"
    if p.off is Off.TORCH:
        return f"{exact}; torch is off, the engine within the edge tolerance of the exact answer"
    return f"{exact}{_who(p)}"


def _structural(p: Problem) -> str:
    rate = f" (fails {p.rate[0]} of {p.rate[1]} rebuilds)" if p.rate else ""
    return f"{p.case}: {p.note}{rate}"


def _died(p: Problem) -> str:
    if p.raised is not None:  # an exception that escaped the checks: `note` says where
        return f"engine {p.note}"
    return f"{'not run: ' if p.skipped else ''}the engine's worker process {p.note}"


def _inspection(p: Problem) -> str:
    assert p.raised is not None
    ((name, value),) = p.inputs
    return (
        f"at {name} = {value!r}: {exception(p.raised)} ({p.note}; torch takes the number; the other "
        f"graphs pass it as {p.answer}(2.0))"
    )


def _earlier(p: Problem) -> str:
    return p.note


TEMPLATES: dict[What, Callable[[Problem], str]] = {
    What.FORWARD: _forward,
    What.GRADIENT: _gradient,
    What.NUMERIC: _numeric,
    What.REFERENCES_DISAGREE: _references,
    What.HESSIAN: _hessian,
    What.JVP: _jvp,
    What.MODES: _modes,
    What.TRANSFORM: _transform,
    What.RAISED: _raised,
    What.NOT_A_NUMBER: _not_a_number,
    What.WRONG_COUNT: _count,
    What.WRONG_SHAPE: _shape,
    What.NOT_REAL: _not_real,
    What.DTYPE: _dtype,
    What.FLOAT32: _float32,
    What.EDGE_SHAPE: _edge_shape,
    What.EDGE_PATTERN: _edge_pattern,
    What.EDGE_VALUE: _edge_value,
    What.STRUCTURAL: _structural,
    What.DIED: _died,
    What.INSPECTION: _inspection,
    What.EARLIER: _earlier,
}


def describe(p: Problem) -> str:
    """A problem in words, with the point it was found at (`at_point`) and, for an edge case or
    a structural check, the case."""
    text = TEMPLATES[p.what](p)
    if p.case and (p.what in EDGE_DIFFERENCES or p.what in (What.RAISED, What.NOT_REAL)):
        text = f"{p.case}: {text}"
    return at_point(p) + text


def describe_all(problems: Any) -> list[str]:
    """Each problem in words."""
    return [describe(p) for p in problems]


def mistake(op: str, parts: Any) -> str:
    """A learner's mistake named (`campaign.mistake_match`): each part is (operand name, "" for a
    unary op; the backward as written; the correct derivative; whether it used out.grad):
    "tanh's backward behaves like (1 - t) · out.grad, where t = tanh(x); the derivative is (1 - t²)",
    "mul's backward behaves like x · out.grad for x; the derivative is y"; where every part leaves
    out.grad out, it says so first: "mul's backward leaves out the upstream gradient: it gives y
    without out.grad for x and x without out.grad for y; the derivatives are y · out.grad and x ·
    out.grad"."""
    wrote = " and ".join(f"{w} for {name}" if name else w for name, w, _, _ in parts)
    right = " and ".join(c if upstream else f"{c} · out.grad" for _, _, c, upstream in parts)
    derivative = "the derivatives are" if len(parts) > 1 else "the derivative is"
    if not any(upstream for _, _, _, upstream in parts):
        return f"{op}'s backward leaves out the upstream gradient: it gives {wrote}; {derivative} {right}"
    return f"{op}'s backward behaves like {wrote}; {derivative} {right}"


def swapped(a: str, symbol: str, b: str, whose: str) -> str:
    """A forward computing its operands swapped (`campaign.mistake_match.swapped_operands`):
    "`2 - x` computes `x - 2`: __rsub__ swaps its operands"."""
    return f"`{a} {symbol} {b}` computes `{b} {symbol} {a}`: {whose} swaps its operands"


def short_number(value: float) -> str:
    """A number as Python spells it shortest, a whole one without ".0": "0", "-1", "5e-324", "inf"."""
    return repr(float(value)).removesuffix(".0")


def raised_at(r: Any) -> str:
    """An exception at a special input in the engine's terms (`campaign.engine_terms.RaisedAt`):
    "`x ** 0` at `x = 0` raises ZeroDivisionError; torch gives gradient 0", "`x / y` at `x = 0,
    y = 0` raises ZeroDivisionError (elsewhere also OverflowError); torch gives gradients inf and
    nan"."""
    at = ", ".join(f"{name} = {short_number(value)}" for name, value in r.at)
    also = f" (elsewhere also {', '.join(r.raised[1:])})" if len(r.raised) > 1 else ""
    numbers = " and ".join(short_number(v) for v in r.torch)
    gives = (
        f"the value {numbers}"
        if r.check == "forward"
        else f"gradient{'s' if len(r.torch) > 1 else ''} {numbers}"
    )
    return f"`{r.spelling}` at `{at}` raises {r.raised[0]}{also}; torch gives {gives}"


def local_derivative(p: Problem, cotangent: float) -> str:
    """A one-op graph's gradient problem as the local derivative a learner computes by hand, the
    cotangent divided out: "local derivative of x0 (cotangent 0.923 divided out): engine 2,
    torch 2.72e-06"."""
    return (
        f"local derivative of {p.input} (cotangent {number(cotangent)} divided out): "
        f"engine {number(p.engine / cotangent, 6)}, torch {number(p.reference / cotangent, 6)}"
    )


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


_SPELL_OR_LEAVE = "spell it in `apply` or leave it out of `ops`"


def adapter_fix(ops: Any, fault: Problem | None, op_has_findings: bool) -> str:
    """What to change in an adapter whose spelling of `ops` failed (`fault`: the problem that
    records where it raised, None when none does); `op_has_findings`: the op has findings of its
    own, so leaving it out is no fix."""
    op = "/".join(ops) or "this op"
    if fault is None or fault.raised is None or fault.raised.frame is None:
        return f"the adapter's spelling of {op} fails: {_SPELL_OR_LEAVE}"
    raised = fault.raised
    exception, message, where = raised.type, raised.message, raised.frame
    if where.kind is FrameKind.DEFAULT_SPELLING:
        if exception == "AttributeError" and raised.attribute:
            what = f"no `.{raised.attribute}`"
        else:
            what = f"no spelling gradcheck's default takes ({exception}: {message})"
        return f"the adapter lists {op} but the engine has {what}: {_SPELL_OR_LEAVE}"
    if where.kind is FrameKind.DEFAULT_METHOD:
        method = where.name.rpartition(".")[2]
        return (
            f"gradcheck's default `{method}` does not fit this engine ({exception}: {message}): "
            f"override `{method}` in the adapter (docs/adapters.md)"
        )
    if op_has_findings:
        return f"{frame(where)} raised {exception} for {op}: fix it there ({op} has findings of its own)"
    return f"{frame(where)} raised {exception} for {op}: fix it there or leave {op} out of `ops`"
