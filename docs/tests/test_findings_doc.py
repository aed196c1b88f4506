"""The docs follow the code they describe: docs/findings.md takes the campaign's phases in the order
`campaign/phases.py` runs them and states today's tolerances; the README's layout table names every
package; measured figures live in docs/performance.md alone, each dated."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from docs_markdown import DOCUMENTS, MEASURED, PERFORMANCE, ROOT, prose

from gradcheck.checker import tolerance
from gradcheck.engines import snippets
from gradcheck.parity import errors, float32, rounding

FINDINGS = ROOT / "docs" / "findings.md"


def phase_functions() -> list[str]:
    """The public functions of campaign/phases.py after `run_campaign`, in the order they stand
    (the order the phases run: the module's docstring and `run_campaign` say so)."""
    tree = ast.parse((ROOT / "gradcheck" / "campaign" / "phases.py").read_text(encoding="utf-8"))
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    return names[names.index("run_campaign") + 1 :]


def test_findings_md_takes_the_phases_in_the_order_phases_py_runs_them():
    headings = re.findall(r"^## .*$", FINDINGS.read_text(encoding="utf-8"), re.MULTILINE)
    named = [name for heading in headings for name in re.findall(r"`(\w+)`", heading)]
    functions = phase_functions()
    assert len(functions) >= 8
    missing = [f for f in functions if f not in named]
    assert not missing, f"findings.md has no section for the phase function(s) {missing}"
    assert [n for n in named if n in functions] == functions


def test_findings_md_states_the_tolerances_the_code_has():
    text = FINDINGS.read_text(encoding="utf-8")
    rows = {
        row.split("|")[1].strip(): row
        for row in re.findall(r"^\|.*\|$", text.split("## Tolerances", 1)[1], re.MULTILINE)
    }

    def says(comparison: str, *numbers: float) -> None:
        row = rows[comparison]
        for number in numbers:
            spelled = {f"{number:g}", f"{number:.0e}".replace("e-0", "e-"), f"{number:,.0f}"}
            assert any(re.search(rf"(?<![\d.e-]){re.escape(s)}(?![\d])", row) for s in spelled), (
                f"findings.md's tolerance row {comparison!r} does not say {number:g}: {row}"
            )

    says("forward value or gradient, engine vs torch", errors.BOUND_SAFETY)
    assert "`BOUND_SAFETY`" in rows["forward value or gradient, engine vs torch"]
    hvp = "Hessian-vector product, engine vs torch"
    says(hvp, errors.HVP_SAFETY, errors.BOUND_SAFETY, rounding.SAMPLES)
    assert "`HVP_SAFETY`" in rows[hvp] and "`SAMPLES`" in rows[hvp]
    says("gradient vs central differences", errors.NUMERIC_SAFETY, errors.ERROR_ESTIMATE_SAFETY)
    says("float32, engine vs torch's float64 at the same inputs", float32.ACCURACY_FACTOR, float32.ULPS)
    without = "a repro without rounding bounds (edge and structural findings), gradient"
    says(without, snippets.REPRO_ATOL, snippets.REPRO_RTOL)
    says("the same repro, forward value", snippets.REPRO_FORWARD_RTOL)
    families = set(tolerance.FAMILIES.values())
    assert len(families) == 1, "findings.md says every family has one tolerance; they differ now"
    (family,) = families
    says("an op family's tolerance (gradcheck()'s default)", family.atol, family.rtol)


def test_the_readmes_layout_table_names_every_package_and_only_paths_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    cells = [row.split("|")[1] for row in table.splitlines() if row.startswith("| `")]
    named = []
    for cell in cells:
        paths = re.findall(r"`([^`]+)`", cell)
        base = Path(paths[0]).parent
        for path in paths:
            pattern = path if "/" in path or path.startswith(".") else (base / path).as_posix()
            found = list(ROOT.glob(pattern.rstrip("/")))
            assert found, f"the README's layout table names {path}, which does not exist"
            named += [p.resolve() for p in found]
    packages = [
        p.parent
        for top in ("minigrad", "gradcheck")
        for p in (ROOT / top).glob("*/__init__.py")
        if p.parent.name != "tests"
    ]
    missing = [p.relative_to(ROOT).as_posix() for p in packages if p.resolve() not in named]
    assert not missing, f"the README's layout table leaves out {missing}"


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if p != PERFORMANCE], ids=lambda p: p.name)
def test_measured_figures_are_stated_once_in_performance_md(path):
    stated = [p for p in re.split(r"\n\s*\n", prose(path)) if MEASURED.search(p)]
    assert not stated, f"{path.name} states a measured figure (state it in performance.md):\n{stated[0]}"


def test_performance_md_says_when_and_on_what_each_part_was_measured():
    sections = re.split(r"^## ", PERFORMANCE.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    assert len(sections) >= 5
    for section in sections:
        title = section.splitlines()[0]
        if not MEASURED.search(section):
            continue
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", section), f"performance.md's {title!r}: no date"
        assert re.search(r"\b[0-9a-f]{7}\b", section), f"performance.md's {title!r}: no commit"
        assert "```bash" in section, f"performance.md's {title!r}: no command"
