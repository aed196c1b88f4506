"""What the harness should report first for each engine of `gradcheck.testing.tutorial_engines`,
as plain data (`MISTAKES`): the op that holds the mistake (an op built from it, such as neg, sub and
div from mul and pow, is not where it is), or the graph code for a mistake in `backward()`, and the
wrong derivative by name where it is a standard one; and how a report's finding is read against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

GRAPH_CODE = "graph code"  # `Mistake.op` of a mistake in backward() or its topological sort
ENGINES = "gradcheck.testing.tutorial_engines"  # the module that holds the classes


@dataclass(frozen=True)
class Mistake:
    """What the harness should report first for one engine of `ENGINES`, after issue 52.

    `engine`: the class's name here; `op`: the registry op that holds the mistake, or `GRAPH_CODE`;
    `tiers`: the tiers that finding may have; `kind`: what is wrong, in words; `named`: where the
    mistake is a standard wrong derivative, the phrase the finding should say it with: "like" and
    the local derivative the mistaken backward computes (x the input, t and s the output of tanh
    and sigmoid, n the exponent), "leaves out the upstream gradient", or for a forward computing
    its operands swapped "swaps its operands"; for a topological sort's missing visited set,
    "without its visited set"; else "".
    """

    engine: str
    op: str
    tiers: tuple[str, ...]
    kind: str
    named: str = ""

    @property
    def spec(self) -> str:
        """The `--engine` spec that loads the class."""
        return f"{ENGINES}:{self.engine}"


def is_expected(mistake: Mistake, finding: dict[str, Any]) -> bool:
    """Whether a finding (as report.json has it: tier, ops, kind, title) is the one `mistake` says
    should come first: in one of its tiers, and on exactly its op (or, for the graph code, on no
    op or as a structural finding)."""
    if finding.get("tier") not in mistake.tiers:
        return False
    ops = list(finding.get("ops") or [])
    if mistake.op == GRAPH_CODE:
        return not ops or finding.get("kind") == "structural"
    if not ops and finding.get("tier") == "graph-code":  # backward() itself, naming the op's backward
        return f"{mistake.op}'s backward" in str(finding.get("title", ""))
    return ops == [mistake.op]


def names_it(mistake: Mistake, finding: dict[str, Any]) -> str:
    """ "yes" or "no" for whether the finding's title or problems say the table's phrase for the
    mistake (spaces, case and how multiplication is written aside; "like x" is not "like x0"); "-"
    when the table names none."""
    if not mistake.named:
        return "-"
    said = _compact("|".join([str(finding.get("title", "")), *map(str, finding.get("problems") or [])]))
    phrase = _compact(mistake.named)
    at = [m.end() for m in re.finditer(re.escape(phrase), said)]
    return "yes" if any(end == len(said) or not said[end].isalnum() for end in at) else "no"


def _compact(text: str) -> str:
    """Text without spaces or case, its multiplication signs as `*` and a square as `**2`."""
    text = text.replace("·", "*").replace("×", "*").replace("²", "**2").replace("^", "**")
    return "".join(text.split()).lower()


_BUG = ("bug",)
_MACHINERY = ("graph-code",)
_EITHER = ("bug", "graph-code")

MISTAKES: tuple[Mistake, ...] = (
    Mistake("TutorialValue", "pow_const", _BUG, "raises ZeroDivisionError at x ** 0, x = 0"),
    Mistake("AddAssigns", "add", _EITHER, "wrong gradient"),
    Mistake("AddAssignsFirst", "add", _EITHER, "wrong gradient"),
    Mistake("MulAssigns", "mul", _EITHER, "wrong gradient"),
    Mistake(
        "MulOwnOperand",
        "mul",
        _BUG,
        "each operand's gradient uses its own value",
        "like x · out.grad for x and y · out.grad for y",
    ),
    Mistake("DivSquareLost", "div", _BUG, "d/dy of x/y written -x/y", "like -x/y · out.grad for y"),
    Mistake("MulNoUpstream", "mul", _BUG, "wrong gradient", "leaves out the upstream gradient"),
    Mistake("TanhNoUpstream", "tanh", _BUG, "wrong gradient", "leaves out the upstream gradient"),
    Mistake("TanhOneMinusT", "tanh", _BUG, "wrong gradient", "like (1 - t)"),
    Mistake("PowUnreduced", "pow_const", _BUG, "wrong gradient", "like n * x**n"),
    Mistake("PowRaised", "pow_const", _BUG, "wrong gradient", "like n * x**(n + 1)"),
    Mistake("ExpUsesInput", "exp", _BUG, "wrong gradient", "like x"),
    Mistake("LogOverOutput", "log", _BUG, "wrong gradient", "like 1 / log(x)"),
    Mistake("LogTimesInput", "log", _BUG, "wrong gradient", "like x"),
    Mistake("ReluFlipped", "relu", _BUG, "wrong gradient", "like (x < 0)"),
    Mistake("ReluTimesOutput", "relu", _BUG, "wrong gradient", "like relu(x)"),
    Mistake("SigmoidIsS", "sigmoid", _BUG, "wrong gradient", "like s"),
    Mistake(
        "NoVisited",
        GRAPH_CODE,
        _MACHINERY,
        "a shared node's gradient counted once per path",
        "without its visited set",
    ),
    Mistake("NoSeed", GRAPH_CODE, _MACHINERY, "the root's gradient never seeded with 1"),
    Mistake("SeedEveryNode", GRAPH_CODE, _MACHINERY, "every node's gradient set to 1"),
    Mistake(
        "NotReversed",
        GRAPH_CODE,
        _MACHINERY,
        "the nodes run in topological order, not reversed",
        "is the topological order reversed?",
    ),
    Mistake("AddNoWrap", "add", _BUG, "a number beside a Value raises AttributeError", "wrap it first"),
    Mistake("NoRsub", "sub", _BUG, "a number minus a Value raises TypeError", "has no __rsub__"),
    Mistake("RsubSwapped", "sub", _BUG, "wrong value: c - x computed as x - c", "swaps its operands"),
)
