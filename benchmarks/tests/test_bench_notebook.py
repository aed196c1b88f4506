"""bench_notebook times a learner's check in a Jupyter kernel beside the command line's on the same
class (run once here, on a few graphs, for the table's shape: no timed asserts)."""

from __future__ import annotations

import pytest
from bench_scripts import script

pytest.importorskip("ipykernel")
pytestmark = [pytest.mark.slow, pytest.mark.supervised]

bench_notebook = script("bench_notebook")


def test_the_table_has_the_cli_and_both_notebook_waits_and_nothing_written_beside_the_notebook():
    lines = bench_notebook.main(["--graphs", "3", "--repeats", "1"])
    assert lines[1] == "| where | first output s | verdict s | first / CLI's | verdict / CLI's |"
    table = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[3:-1]]
    rows = {cells[0]: cells for cells in table}
    assert list(rows) == ["cli", "notebook, class cell re-run", "notebook, fresh kernel"]
    assert rows["cli"][3:] == ["1.00x", "1.00x"]
    for cells in rows.values():
        first, verdict = float(cells[1]), float(cells[2])
        assert 0 < first <= verdict
    assert lines[-1] == "written to the notebook's directory: nothing"
