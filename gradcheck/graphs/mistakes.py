"""The wrong local derivatives people write for each scalar op, as data beside the op's facts.

A learner's engine whose backward is wrong in one of these ways is told so in words
(`gradcheck.campaign.mistake_match`): "tanh's backward behaves like (1 - t) · out.grad, where
t = tanh(x); the derivative is (1 - t²)". Each entry is one operand's partial as the learner wrote
it (`rule`, a numpy rule on the op's operands, attributes and result, like `OpSpec.grads`), and the
words a learner reads. `local` gives what the engine's gradient is, with the upstream gradient
(the cotangent) divided out: the rule itself, or, for the upstream gradient left out, the rule
over the cotangent. An `=` where `+=` belongs cannot be seen on one op: it is not here.

`DERIVATIVES` holds each operand's correct derivative in the same words. No two entries of one op
and operand coincide at generic points (`graphs/tests/test_mistakes.py`), or naming would be
ambiguous.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.graphs.registry import REGISTRY

Rule = Callable[[Any, dict[str, Any], Any], Any]


@dataclass(frozen=True)
class Mistake:
    """One wrong partial of one op: `key` names it, `operand` is which argument's partial it is,
    `wrote` the backward as a learner reads it, `rule` its local derivative (operands, attributes,
    result), `upstream` False when the backward leaves out the upstream gradient (out.grad)."""

    key: str
    operand: int
    wrote: str
    rule: Rule
    upstream: bool = True

    def local(self, args: Any, attrs: dict[str, Any], out: Any, cotangent: Any) -> Any:
        """The engine's gradient of operand `operand` with the cotangent divided out, had it this
        mistake (numpy, elementwise over points)."""
        value = np.asarray(self.rule(args, attrs, out), dtype=np.float64)
        return value if self.upstream else value / np.asarray(cotangent, dtype=np.float64)


def _correct(op: str, operand: int) -> Rule:
    """The registry's own local derivative of `op` for `operand` (for "the upstream left out")."""
    return lambda a, k, out: REGISTRY[op].grads(a, k, out)[operand]


def _left_out(op: str, operand: int, words: str) -> Mistake:
    """The right derivative, not multiplied by the upstream gradient."""
    return Mistake("upstream_left_out", operand, words, _correct(op, operand), False)


def _r2(a: Any) -> Any:
    return a[0] * a[0] + a[1] * a[1]


# op -> each operand's correct derivative, in the words of `Mistake.wrote` (`· out.grad` implied).
DERIVATIVES: dict[str, tuple[str, ...]] = {
    "add": ("1", "1"),
    "sub": ("1", "-1"),
    "mul": ("y", "x"),
    "div": ("1/y", "-x/y²"),
    "pow": ("y · x^(y-1)", "x^y · log(x)"),
    "pow_const": ("n · x^(n-1)",),
    "neg": ("-1",),
    "relu": ("(x > 0)",),
    "tanh": ("(1 - t²)",),
    "sigmoid": ("s · (1 - s)",),
    "exp": ("e^x",),
    "log": ("1/x",),
    "sin": ("cos(x)",),
    "cos": ("-sin(x)",),
    "atan": ("1/(1 + x²)",),
    "atan2": ("x/(x² + y²)", "-y/(x² + y²)"),  # y.atan2(x): operand 0 is y
    "sqrt": ("1/(2√x)",),
    "abs": ("sign(x)",),
}

# How the words name each operand ("x", "y" unless listed) and the result (`t`, `s`).
OPERANDS: dict[str, tuple[str, ...]] = {"atan2": ("y", "x")}
_WHERE = {"tanh": ", where t = tanh(x)", "sigmoid": ", where s = sigmoid(x)"}


def _entries(op: str, *rows: tuple[str, int, str, Rule]) -> tuple[Mistake, ...]:
    """An op's mistakes: each row's backward `· out.grad`, then each operand's upstream left out."""
    where = _WHERE.get(op, "")
    wrong = tuple(Mistake(key, j, f"{words} · out.grad{where}", rule) for key, j, words, rule in rows)
    left_out = tuple(
        _left_out(op, j, f"{DERIVATIVES[op][j]} without out.grad{where}") for j in range(len(DERIVATIVES[op]))
    )
    return wrong + left_out


def _n(k: dict[str, Any]) -> float:
    return float(k["exponent"])


# op -> the wrong partials people write (see `Mistake`).
MISTAKES: dict[str, tuple[Mistake, ...]] = {
    "add": _entries("add", ("sign_flipped", 1, "-1", lambda a, k, out: -1.0 + 0.0 * a[1])),
    "sub": _entries(
        "sub",
        ("sign_lost", 1, "1 (add's)", lambda a, k, out: 1.0 + 0.0 * a[1]),
        ("sign_on_wrong_operand", 0, "-1", lambda a, k, out: -1.0 + 0.0 * a[0]),
    ),
    "mul": _entries(
        "mul",
        ("partials_swapped", 0, "x", lambda a, k, out: a[0]),
        ("partials_swapped", 1, "y", lambda a, k, out: a[1]),
        ("sign_flipped", 0, "-y", lambda a, k, out: -a[1]),
        ("sign_flipped", 1, "-x", lambda a, k, out: -a[0]),
    ),
    "div": _entries(
        "div",
        ("sign_flipped", 1, "x/y²", lambda a, k, out: a[0] / (a[1] * a[1])),
        ("factor_lost", 1, "-1/y²", lambda a, k, out: -1.0 / (a[1] * a[1])),
        ("power_unreduced", 1, "-x/y", lambda a, k, out: -a[0] / a[1]),
        ("partials_swapped", 0, "-x/y²", lambda a, k, out: -a[0] / (a[1] * a[1])),
        ("partials_swapped", 1, "1/y", lambda a, k, out: 1.0 / a[1]),
        ("sign_flipped", 0, "-1/y", lambda a, k, out: -1.0 / a[1]),
    ),
    "pow": _entries(
        "pow",
        ("power_unreduced", 0, "y · x^y", lambda a, k, out: a[1] * a[0] ** a[1]),
        ("power_reduced_wrong_way", 0, "y · x^(y+1)", lambda a, k, out: a[1] * a[0] ** (a[1] + 1.0)),
        ("factor_lost", 0, "x^(y-1)", lambda a, k, out: a[0] ** (a[1] - 1.0)),
        ("factor_lost", 1, "log(x)", lambda a, k, out: np.log(a[0])),
        ("partials_swapped", 0, "x^y · log(x)", lambda a, k, out: out * np.log(a[0])),
        ("partials_swapped", 1, "y · x^(y-1)", lambda a, k, out: a[1] * a[0] ** (a[1] - 1.0)),
    ),
    "pow_const": _entries(
        "pow_const",
        ("power_unreduced", 0, "n · x^n", lambda a, k, out: _n(k) * a[0] ** _n(k)),
        ("power_reduced_wrong_way", 0, "n · x^(n+1)", lambda a, k, out: _n(k) * a[0] ** (_n(k) + 1.0)),
        # (no -n · x^(n-1): at n = -1 it is x^(n-1), the lost factor, and naming would be ambiguous)
        ("factor_lost", 0, "x^(n-1)", lambda a, k, out: a[0] ** (_n(k) - 1.0)),
        # `n * x ** n-1` without brackets round n-1: Python's precedence makes it n · x^n - 1
        ("precedence", 0, "(n · x^n - 1)", lambda a, k, out: _n(k) * a[0] ** _n(k) - 1.0),
    ),
    "neg": _entries("neg", ("sign_lost", 0, "1", lambda a, k, out: 1.0 + 0.0 * a[0])),
    "relu": _entries(
        "relu",
        ("output_for_step", 0, "relu(x)", lambda a, k, out: out),
        ("step_flipped", 0, "(x < 0)", lambda a, k, out: np.where(a[0] < 0, 1.0, 0.0)),
        ("step_left_out", 0, "1", lambda a, k, out: 1.0 + 0.0 * a[0]),
    ),
    "tanh": _entries(
        "tanh",
        ("one_minus_t", 0, "(1 - t)", lambda a, k, out: 1.0 - out),
        ("input_for_output", 0, "(1 - x²)", lambda a, k, out: 1.0 - a[0] * a[0]),
        ("sign_flipped", 0, "(1 + t²)", lambda a, k, out: 1.0 + out * out),
        ("sigmoid_derivative", 0, "t · (1 - t)", lambda a, k, out: out * (1.0 - out)),
        ("negated", 0, "(t² - 1)", lambda a, k, out: out * out - 1.0),
        ("one_lost", 0, "t²", lambda a, k, out: out * out),
    ),
    "sigmoid": _entries(
        "sigmoid",
        ("output_alone", 0, "s", lambda a, k, out: out),
        ("tanh_derivative", 0, "(1 - s²)", lambda a, k, out: 1.0 - out * out),
        ("input_for_output", 0, "x · (1 - x)", lambda a, k, out: a[0] * (1.0 - a[0])),
        ("negated", 0, "-s · (1 - s)", lambda a, k, out: -out * (1.0 - out)),
        ("input_in_factor", 0, "s · (1 - x)", lambda a, k, out: out * (1.0 - a[0])),
    ),
    "exp": _entries(
        "exp",
        ("input_for_output", 0, "x", lambda a, k, out: a[0]),
        ("power_rule", 0, "x · e^(x-1)", lambda a, k, out: a[0] * np.exp(a[0] - 1.0)),
        ("negated", 0, "-e^x", lambda a, k, out: -out),
    ),
    "log": _entries(
        "log",
        ("output_for_input", 0, "1/log(x)", lambda a, k, out: 1.0 / out),
        ("reciprocal_derivative", 0, "-1/x²", lambda a, k, out: -1.0 / (a[0] * a[0])),
        ("negated", 0, "-1/x", lambda a, k, out: -1.0 / a[0]),
        ("input_for_reciprocal", 0, "x", lambda a, k, out: a[0]),
    ),
    "sin": _entries(
        "sin",
        ("negated", 0, "-cos(x)", lambda a, k, out: -np.cos(a[0])),
        ("cos_derivative", 0, "-sin(x)", lambda a, k, out: -np.sin(a[0])),
        ("itself", 0, "sin(x)", lambda a, k, out: out),
    ),
    "cos": _entries(
        "cos",
        ("negated", 0, "sin(x)", lambda a, k, out: np.sin(a[0])),
        ("sin_derivative", 0, "cos(x)", lambda a, k, out: out),
        ("cos_negated", 0, "-cos(x)", lambda a, k, out: -out),
    ),
    "atan": _entries(
        "atan",
        ("sign_flipped", 0, "1/(1 - x²)", lambda a, k, out: 1.0 / (1.0 - a[0] * a[0])),
        ("negated", 0, "-1/(1 + x²)", lambda a, k, out: -1.0 / (1.0 + a[0] * a[0])),
        ("output_for_input", 0, "1/(1 + out²)", lambda a, k, out: 1.0 / (1.0 + out * out)),
        ("square_lost", 0, "1/(1 + x)", lambda a, k, out: 1.0 / (1.0 + a[0])),
    ),
    "atan2": _entries(
        "atan2",
        ("partials_swapped", 0, "-y/(x² + y²)", lambda a, k, out: -a[0] / _r2(a)),
        ("partials_swapped", 1, "x/(x² + y²)", lambda a, k, out: a[1] / _r2(a)),
        ("sign_flipped", 0, "-x/(x² + y²)", lambda a, k, out: -a[1] / _r2(a)),
        ("sign_flipped", 1, "y/(x² + y²)", lambda a, k, out: a[0] / _r2(a)),
    ),
    "sqrt": _entries(
        "sqrt",
        ("factor_lost", 0, "1/√x", lambda a, k, out: 1.0 / out),
        ("input_for_output", 0, "1/(2x)", lambda a, k, out: 0.5 / a[0]),
        ("power_unreduced", 0, "√x/2", lambda a, k, out: 0.5 * out),
    ),
    "abs": _entries(
        "abs",
        ("sign_left_out", 0, "1", lambda a, k, out: 1.0 + 0.0 * a[0]),
        ("negated", 0, "-sign(x)", lambda a, k, out: -np.sign(a[0])),
        ("output_for_sign", 0, "|x|", lambda a, k, out: out),
    ),
}


def entry_key(op: str, mistake: Mistake) -> str:
    """One entry's name across the tables ("log:0:output_for_input"): what a finding keeps of the
    entries its wrong gradient matched (`Finding.mistake_rules`), plain data for report.json."""
    return f"{op}:{mistake.operand}:{mistake.key}"


def entry_of(key: str) -> tuple[str, Mistake] | None:
    """`entry_key`'s inverse: the op and its entry, or None for a key no table holds (an earlier
    release's)."""
    op = key.split(":", 1)[0]
    return next(((op, m) for m in MISTAKES.get(op, ()) if entry_key(op, m) == key), None)
