"""docs/adapters.md's op table is the registry's: regenerate it with
`python -m gradcheck.graphs.op_table docs/adapters.md` when an op changes."""

from __future__ import annotations

import re
from pathlib import Path

from gradcheck.graphs import op_table
from gradcheck.graphs.registry import REGISTRY

ADAPTERS = Path(__file__).resolve().parents[1] / "adapters.md"


def test_the_op_table_in_the_docs_is_the_one_the_registry_generates():
    text = ADAPTERS.read_text(encoding="utf-8")
    found = re.search(re.escape(op_table.START) + r"\n(.*?)\n" + re.escape(op_table.END), text, re.DOTALL)
    assert found, "docs/adapters.md has no op table markers"
    assert found.group(1) == op_table.markdown(), (
        "docs/adapters.md's op table differs from the registry: run "
        "`python -m gradcheck.graphs.op_table docs/adapters.md`"
    )


def test_the_table_has_a_row_per_registry_op_with_its_arity():
    rows = {line.split("|")[1].strip(" `"): line for line in op_table.markdown().splitlines()[2:]}
    assert list(rows) == list(REGISTRY)
    for name, spec in REGISTRY.items():
        assert f"| {spec.arity} |" in rows[name]


def test_every_attribute_has_a_meaning():
    for name, spec in REGISTRY.items():
        for attr in op_table.attribute_names(spec):
            assert op_table._attribute_meaning(name, attr)
