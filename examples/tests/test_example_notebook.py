"""The example notebook runs from top to bottom in a real Jupyter kernel (nbclient, ipykernel):
its check names the planted tanh mistake first, and its replay after the fix says fixed."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from gradcheck.testing.notebooks import execute, html_of, text_of

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
nbformat = pytest.importorskip("nbformat")

pytestmark = [pytest.mark.slow, pytest.mark.supervised]  # as a learner runs it: forked workers

NOTEBOOK = Path(__file__).resolve().parents[1] / "check_in_a_notebook.ipynb"
BUDGET = 60.0  # seconds the whole notebook may take (CI runs it on every build)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    started = time.monotonic()
    nb = execute(nbformat.read(NOTEBOOK, as_version=4), tmp_path_factory.mktemp("example"))
    return nb, time.monotonic() - started


def cell_with(nb, source: str):
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and source in c.source]
    return cell


def test_the_notebook_is_kept_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_the_check_names_the_tanh_mistake_first(executed):
    nb, _ = executed
    (screen,) = [h for h in html_of(cell_with(nb, "check_engine(")) if "gradcheck-first-screen" in h]
    first_row = screen.split('<table class="overview">')[1].split("<tbody>")[1].split("</tr>")[0]
    assert "tanh" in first_row and "like (1 - t)" in first_row
    assert "x0 = Value(" in screen


def test_the_replay_after_the_fix_says_fixed(executed):
    nb, _ = executed
    replayed = text_of(cell_with(nb, ".replay()"))
    assert re.search(r"agrees: .* \(fixed\)", replayed), replayed


def test_it_runs_within_its_budget(executed):
    _, seconds = executed
    assert seconds < BUDGET
