"""`check_engine` in a real Jupyter kernel (nbclient driving ipykernel, as Jupyter runs a
notebook): a cell defines a tutorial-style `Value` with one learner's mistake, the next checks it,
and the executed notebook's output is the triage's first screen naming the mistake's op first,
drawn by workers forked from the kernel; after a cell that fixes the class, the finding's
replay says it is fixed."""

from __future__ import annotations

import inspect
import re
import textwrap

import pytest

from gradcheck.testing import tutorial_engines
from gradcheck.testing.notebooks import execute, html_of, notebook, text_of
from gradcheck.testing.tutorial_mistakes import MISTAKES

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = [pytest.mark.slow, pytest.mark.supervised]  # the kernel forks watched workers, as for users

MISTAKE = next(m for m in MISTAKES if m.engine == "TanhOneMinusT")
GRAPHS = 60


def value_cell(method: str = "") -> str:
    """A cell that defines `Value`: the tutorial's engine with `method` (a learner's version of
    one method) in place of its own, noting in `made_in` every process that makes a Value."""
    return (
        "import os\nfrom typing import Any\n"
        "from gradcheck.testing.tutorial_engines import TutorialValue\n\n\n"
        "class Value(TutorialValue):\n"
        "    made_in = set()\n\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        "        Value.made_in.add(os.getpid())\n"
        + (f"\n{textwrap.indent(textwrap.dedent(method), '    ')}" if method else "")
    )


MISTAKEN = inspect.getsource(getattr(tutorial_engines, MISTAKE.engine).tanh)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    cells = [
        "import math\nimport gradcheck",
        value_cell(MISTAKEN),
        f"result = gradcheck.check_engine(Value, graphs={GRAPHS})\nresult",
        "print('passed:', result.passed, 'made in the kernel:', sorted(Value.made_in))\n"
        "first = result.first_to_fix\nprint('first:', first.number, first.ops)",
        "first.replay()",
        value_cell(),  # the tutorial's own tanh: the mistake fixed
        "replayed = first.replay()\nprint('fixed:', replayed.fixed)\nreplayed",
    ]
    return execute(notebook(*cells), tmp_path_factory.mktemp("kernel"))


def test_the_output_is_the_first_screen_naming_the_mistakes_op_first(executed):
    (screen,) = [h for h in html_of(executed.cells[2]) if "gradcheck-first-screen" in h]
    assert re.search(r'<p class="verdict fail">FAIL: \d+ of 60 graphs disagree', screen)
    first_row = screen.split('<table class="overview">')[1].split("<tbody>")[1].split("</tr>")[0]
    assert "bug" in first_row and MISTAKE.op in first_row
    assert MISTAKE.named in first_row.replace("&#x27;", "'")
    assert "Edge behaviour" in screen  # the edge table


def test_the_top_findings_repro_is_in_the_notebooks_terms(executed):
    (screen,) = [h for h in html_of(executed.cells[2]) if "gradcheck-first-screen" in h]
    top = screen.split('<div class="finding')[1]
    assert "x0 = Value(" in top  # the class the learner wrote, by its name
    assert "import Value" not in top  # defined in the notebook: nothing to import
    assert re.search(r"result\.findings\[\d+\]\.replay\(\)", top)


def test_progress_is_a_bar_in_the_notebook(executed):
    bars = [h for h in html_of(executed.cells[2]) if "gradcheck-progress" in h]
    assert len(bars) == 1, "one output, updated in place"
    assert f'<progress value="{GRAPHS}" max="{GRAPHS}">' in bars[0]
    assert "checking graphs" in bars[0]


def test_the_engine_ran_in_workers_forked_from_the_kernel(executed):
    printed = text_of(executed.cells[3])
    assert "passed: False made in the kernel: []" in printed  # every Value was made in a worker
    assert "the engine ran in this process" not in text_of(executed.cells[2])
    assert f"first: {_first_number(executed)} ('{MISTAKE.op}',)" in printed


def test_replay_fails_before_the_fix_and_is_fixed_after(executed):
    before = text_of(executed.cells[4])
    assert f"still fails: {MISTAKE.kind.replace(' ', '-')}" in before
    after = text_of(executed.cells[6])
    assert "fixed: True" in after
    assert "(fixed)" in after
    assert "fixed</p>" in html_of(executed.cells[6])[0]


def _first_number(executed) -> int:
    (screen,) = [h for h in html_of(executed.cells[2]) if "gradcheck-first-screen" in h]
    first_row = screen.split('<table class="overview">')[1].split("<tbody>")[1].split("</tr>")[0]
    return int(re.search(r'href="#finding-(\d+)"', first_row).group(1))
