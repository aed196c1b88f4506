"""Markdown summaries (`--summary-md FILE` of `run` and `gate`), e.g. for $GITHUB_STEP_SUMMARY:
the verdict first; then what to fix, bugs first, then graph code (a table with each finding's
tier), the edge behaviour as one compact table and the conventions as notes; then the details of
each bug, graph-code finding and adapter fault with its repro; then one row per op."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.overview import EDGE_HEADING, EDGE_REGIONS, NOTES_HEADING, finding_code, overview
from gradcheck.campaign.records import BOUND_METRIC, CampaignResult
from gradcheck.campaign.verdict import FACTOR, FLOORS, LABELS, GateResult, OpVerdict, as_figure
from gradcheck.parity.wording import figure, printable


def _fmt(x: float | None) -> str:
    return figure(x)


def _cell(text: str) -> str:
    """Text safe inside a table cell (a pipe would end it)."""
    return printable(text).replace("|", "\\|")


def _finding_block(label: str, finding: Finding) -> list[str]:
    lines = [f"- **{label}**: {_cell(finding.title)} ({finding.count_text}; tier {finding.tier})"]
    if finding.fix:
        lines.append(f"  fix: {_cell(finding.fix)}")
    if finding.repro:
        lines.append(f"  reproduce: `{finding.repro}`")
    lines += ["", "  <details><summary>repro code</summary>", "", "  ```python"]
    lines += [*("  " + line for line in finding_code(finding).splitlines()), "  ```", "  </details>", ""]
    return lines


def gate_markdown(outcome: GateResult) -> str:
    """The gate's summary: a verdict line, gate-wide problems, new and accepted findings, one row per op."""
    verdicts = outcome.verdicts
    failed = [v for v in verdicts if v.failed]
    lines = [f"## Gradient-regression gate: {'PASS' if outcome.passed else 'FAIL'}", ""]
    for fv in outcome.new_findings:
        f = fv.finding
        lines.append(f"**New finding ({fv.part}): {_cell(f.title)}** ({f.count_text}; tier {f.tier})")
    if outcome.new_findings:
        lines.append("")
    lines.append(
        f"Threshold: a figure regresses when it exceeds max({FACTOR:g} x baseline, floor); "
        "floors " + ", ".join(f"{m} {f:g}" for m, f in FLOORS.items()) + "."
    )
    changed = [v for v in verdicts if not v.failed and v.changed]
    lines.append(
        f"{len(verdicts)} op rows compared: {len(failed)} failed, {len(changed)} changed within limits, "
        f"{len(verdicts) - len(failed) - len(changed)} unchanged."
    )
    new, accepted = outcome.new_findings, [f for f in outcome.findings if not f.failed]
    lines.append(f"Findings: {len(new)} new, {len(accepted)} in the baseline, {len(outcome.gone)} gone.")
    if outcome.seconds is not None:
        lines.append(f"Campaign time: {outcome.seconds:.1f} s.")
    lines.append("")
    lines += [f"- **{_cell(p)}**" for p in outcome.problems]
    if outcome.problems:
        lines.append("")
    for fv in new:
        lines += _finding_block(f"new finding ({fv.part})", fv.finding)
    for fv in accepted:
        f = fv.finding
        lines.append(f"- in the baseline ({fv.part}): {_cell(f.title)} ({f.count_text}; tier {f.tier})")
    lines += [f"- gone since the baseline: {_cell(title)}" for title in outcome.gone]
    lines += [f"- {_cell(line)}" for line in outcome.new_coverage]
    if accepted or outcome.gone or outcome.new_coverage:
        lines.append("")
    lines += _gate_table(verdicts)
    return "\n".join(lines) + "\n"


def _gate_table(verdicts: Sequence[OpVerdict]) -> list[str]:
    header = " | ".join(f"{LABELS[m]} (before → after)" for m in FLOORS)
    lines = [f"| part | op | graphs | {header} | verdict |", "|---|---|---:|" + "---|" * len(FLOORS) + "---|"]
    for v in verdicts:
        graphs = v.after["graphs"] if v.after else 0
        cells = []
        for metric in FLOORS:
            b = _fmt(as_figure(v.before.get(metric))) if v.before else "–"
            a = _fmt(as_figure(v.after.get(metric))) if v.after else "–"
            cells.append(f"{b} → {a}")
        verdict = f"**{_cell(v.verdict)}**" if v.failed else _cell(v.verdict)
        lines.append(f"| {v.part} | `{v.op}` | {graphs} | " + " | ".join(cells) + f" | {verdict} |")
    return lines


def _overview(findings: Sequence[Finding], unexplained: Mapping[str, Any] | None = None) -> list[str]:
    """The first screen (`gradcheck.campaign.overview`) for a CI reader: one row per bug,
    graph-code finding and adapter fault (tier, title, kind, graphs), the fixes, the unexplained
    graphs, the edge behaviour as one table (a row per op) and the conventions as notes."""
    view = overview(findings, unexplained)
    lines: list[str] = []
    if view.rows:
        lines += ["| # | tier | finding | kind | cases |", "|---:|---|---|---|---:|"]
        for r in view.rows:
            lines.append(
                f"| {r.number} | {r.tier} | {_cell(r.finding.title)} | {r.finding.kind.value} | {r.graphs} |"
            )
        lines.append("")
    lines += [f"- fix #{r.number}: {_cell(r.finding.fix)}" for r in view.fixes]
    if view.unexplained:
        lines.append(f"- unexplained graphs: {_cell(view.unexplained_line())}")
    if view.fixes or view.unexplained:
        lines.append("")
    if view.edges:
        regions = view.regions
        lines += [f"**{EDGE_HEADING}**:", ""]
        lines.append("| op | " + " | ".join(EDGE_REGIONS[r] for r in regions) + " | cases | findings |")
        lines.append("|---|" + "---|" * len(regions) + "---:|---|")
        for row in view.edges:
            cells = " | ".join(_cell(row.cells.get(r, "")) for r in regions)
            numbers = ", ".join(map(str, row.numbers))
            lines.append(f"| `{row.op}` | {cells} | {row.graphs} | {numbers} |")
        lines.append("")
    if view.notes:
        lines += [f"**{NOTES_HEADING}**: {_cell(view.notes_line())}.", ""]
    return lines


def run_markdown(result: CampaignResult, unexplained: Mapping[str, Any] | None = None) -> str:
    """A campaign's summary: the verdict, the overview (bugs first, then graph code; the edge
    behaviour compact), the details of what to fix (repro folded), one row per op."""
    s = result.settings
    conventions = s.conventions
    kind = ("tensor" if s.tensor else "scalar") + ("" if s.dtype == "float64" else f" {s.dtype}")
    verdict = "PASS" if result.passed else "FAIL"
    view = overview(result.findings, unexplained)
    lines = [
        f"## gradcheck parity campaign: {verdict}",
        "",
        f"Engine `{s.engine}`: {len(result.records)} random {kind} graphs, seed {s.seed}, "
        f"{s.points} input points each; {len(result.failures)} graph(s) disagree; {result.seconds:.1f} s."
        + (" Judged against the exact values, torch beside the engine." if s.reference == "exact" else ""),
        "",
        f"**{view.tier_counts()}**",
        "",
        *_overview(result.findings, unexplained),
    ]
    for i, f in enumerate(result.findings):
        if f.tier in (tiers.EDGE, tiers.CONVENTION):  # in the tables above; replayed by number
            continue
        label = f"finding {i}" if f.is_failure(conventions) or f.tier == tiers.TORCH_OFF else f"note {i}"
        lines += _finding_block(label, f)
    others = [f for f in result.findings if f.tier in (tiers.EDGE, tiers.CONVENTION) and f.repro]
    if others:
        lines += [f"Replay an edge behaviour or a convention by its number, e.g. `{others[0].repro}`.", ""]
    lines += [
        "| op | graphs | rel err vs torch p99 / max | rel err vs numeric p99 / max "
        "| × rounding bound max | failing graphs | findings |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for op, st in result.ops.items():
        found = sum(1 for f in result.findings if op in f.ops and f.is_failure(conventions))
        figures = [
            f"{_fmt(st.quantile(m, 0.99))} / {_fmt(st.maxima[m])}"
            for m in ("max_rel_err_torch", "max_rel_err_numeric")
        ]
        multiple = st.maxima.get(BOUND_METRIC)
        figures.append("–" if multiple is None else f"{multiple:.2g}")
        lines.append(f"| `{op}` | {st.graphs} | {' | '.join(figures)} | {st.failures} | {found} |")
    return "\n".join(lines) + "\n"
