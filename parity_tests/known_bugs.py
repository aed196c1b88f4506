"""Known bugs of the built-in engines that the suite reports as xfail instead of failing, until fixed.

Each entry names the engine, the op and a pattern every problem of the failing check matches; a
failure that matches is shown as XFAIL with the entry's reason, anything else still fails. Delete
an entry when the engine is fixed (its tests then pass, or fail if the bug changed shape).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gradcheck.parity.compare import GraphCheck


@dataclass(frozen=True)
class KnownBug:
    engine: str
    op: str
    attrs: dict[str, Any]  # the op's attributes in the failing graph
    problem: str  # a regex every problem of the failing check matches
    reason: str


KNOWN_BUGS = (
    KnownBug(
        "minigrad-tensor",
        "pow_const",
        {"exponent": 0.0},
        r"second derivatives: Hessian-vector product entry \d+: engine nan, torch ",
        "minigrad Tensor: the second derivative of x ** 0.0 at x = 0 is nan (torch: 0); "
        "Pow.backward's where(b == 0, 0, g * b * a ** (b - 1)) differentiates the unselected "
        "a ** -1 = inf branch, 0 * inf = nan",
    ),
)


def known_bug(check: GraphCheck) -> KnownBug | None:
    """The known bug that explains every problem of a failing check, or None."""
    for bug in KNOWN_BUGS:
        if (
            check.engine == bug.engine
            and check.failure is not None
            and any(n.op == bug.op and n.attr == bug.attrs for n in check.failure.nodes)
            and check.problems
            and all(re.search(bug.problem, p) for p in check.problems)
        ):
            return bug
    return None
