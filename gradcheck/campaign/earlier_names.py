"""Reading the structural findings' names of gate baselines written by earlier releases.

A structural finding's name is its identity in a gate baseline (`campaign.verdict`); names that
earlier releases wrote held numbers of the run (the depth a recursion limit was met at, the
example's gradients): `name_as_today` reads them as today's. With `campaign.earlier_schema` (report
problems), the only readers of earlier words.
"""

from __future__ import annotations

import re

from gradcheck.campaign.structure import BUILD_ORDER, RECURSION_LIMIT

_EARLIER_NAMES = (
    (re.compile(r"^recursion limit at depth \d+$"), RECURSION_LIMIT),
    (re.compile(r"^(backward\(\) twice does not accumulate like torch) \(.*\)$"), r"\1"),
    (re.compile(r"^a chain \d+ deep: engine raised ([A-Za-z_][\w.]*).*$"), r"a deep chain raises \1"),
    (re.compile(r"^a chain \d+ deep: .*$"), "a deep chain differs from torch"),
    (re.compile(r"^a shared node's gradient depends on the build \(.*\)$"), BUILD_ORDER),
)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def name_as_today(name: str) -> str:
    """A structural finding's name (its identity) as today's releases write it: an earlier one's
    numbers of the run dropped, its wording made today's; any number left is "#" (today's names
    hold none)."""
    for pattern, today in _EARLIER_NAMES:
        name = pattern.sub(today, name)
    return _NUMBER.sub("#", name)
