"""docs/zoo.md's tables say what zoo/expectations.py says: the same engines in the same order, each
with its requirement and adapter, and a run in which every expected finding was found and none
was unexpected."""

from __future__ import annotations

import re

from docs_markdown import ROOT

from zoo.expectations import ENGINES
from zoo.runner import HEADERS

ZOO = ROOT / "docs" / "zoo.md"


def section(name: str) -> list[list[str]]:
    """The rows of the table between `<!-- name:start -->` and `<!-- name:end -->`, header first."""
    text = ZOO.read_text(encoding="utf-8")
    body = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.DOTALL)
    assert body, f"docs/zoo.md has no {name} section"
    rows = [row for row in body.group(1).splitlines() if row.startswith("|") and not row.startswith("|---")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_the_run_table_is_the_runners_made_by_the_zoo_command_and_every_engine_as_expected():
    header, *rows = section("zoo-table")
    assert tuple(header) == HEADERS
    assert "`bash scripts/zoo.sh`" in ZOO.read_text(encoding="utf-8").split("<!-- zoo-table:start -->")[1]
    assert [row[0] for row in rows] == [e.name for e in ENGINES]
    for row, engine in zip(rows, ENGINES):
        cells = dict(zip(HEADERS, row))
        n = len(engine.expected)
        assert cells["expected bugs found"] == f"{n}/{n}", engine.name
        assert cells["unexpected findings"] == "0", engine.name
        # every bug, graph-code and adapter finding is an expected one, and each expected one is made
        checked = sum(int(cells[t]) for t in ("bugs", "graph-code", "adapter"))
        assert checked == n, engine.name
        expected_tiers = [e.tier for e in engine.expected]
        assert int(cells["bugs"]) == expected_tiers.count("bug"), engine.name
        assert int(cells["graph-code"]) == expected_tiers.count("graph-code"), engine.name


def test_the_engines_table_gives_each_engines_pin_kind_and_adapter():
    header, *rows = section("zoo-engines")
    assert header[:4] == ["engine", "requirement", "kind", "`--engine`"]
    assert [row[0] for row in rows] == [e.name for e in ENGINES]
    for row, engine in zip(rows, ENGINES):
        assert row[1] == f"`{engine.requirement}`"
        assert row[2] == ("tensor" if engine.tensor else "scalar")
        assert row[3] == f"`{engine.engine}`"
        assert len(row[4].split("; ")) == len(engine.expected), engine.name
