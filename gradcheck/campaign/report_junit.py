"""JUnit XML for CI systems (`--junit-xml FILE` of `run` and `gate`): one test case per op and per
finding, the repro in each failure's text.

The elements are those of the JUnit schema CI systems read (Jenkins, GitLab, GitHub actions that
publish test results): `testsuites` > `testsuite` (name, tests, failures, errors, skipped, time,
timestamp) > `testcase` (classname, name) with an optional `failure` (message, type; the text) or
`system-out`. A campaign's cases lead with what to fix: its findings, bugs first, then graph
code, adapter faults and conventions, class "<suite>.findings"; then its edge behaviour, one
case per op, class "<suite>.edges"; then its ops, "<suite>.ops". Gate-wide problems are class
"<suite>.gate". A finding's case carries its tier as a property (`<property name="tier">`) and
its failure message starts with it ("bug: tanh — wrong gradient: 93 graphs").
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from gradcheck.atomic import write_text
from gradcheck.campaign import tiers
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.overview import EDGE_REGIONS, finding_text, overview
from gradcheck.campaign.records import CampaignResult
from gradcheck.campaign.verdict import GateResult
from gradcheck.parity.wording import printable


@dataclass(frozen=True)
class Case:
    """One test case: its class and name, and its failure (message and text) or its output."""

    classname: str
    name: str
    failure: str | None = None
    text: str = ""
    kind: str = "gradcheck"
    tier: str = ""  # a finding's tier (`gradcheck.campaign.tiers`), as a property of its case


def suite_element(name: str, cases: Sequence[Case], seconds: float) -> ET.Element:
    """A `testsuite` of `cases` with the counts and time a JUnit reader expects."""
    failures = sum(1 for c in cases if c.failure is not None)
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{seconds:.3f}",
        timestamp=datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
    )
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname=case.classname, name=case.name, time="0")
        if case.tier:
            properties = ET.SubElement(element, "properties")
            ET.SubElement(properties, "property", name="tier", value=case.tier)
        if case.failure is not None:
            failure = ET.SubElement(element, "failure", message=printable(case.failure), type=case.kind)
            failure.text = printable(case.text)
        elif case.text:
            ET.SubElement(element, "system-out").text = printable(case.text)
    return suite


def write_junit(suites: Sequence[ET.Element], path: Path) -> Path:
    """Write the suites under one `testsuites` root (with their totals) to `path`, atomically."""
    root = ET.Element("testsuites", name="gradcheck")
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    root.set("time", f"{sum(float(s.get('time', '0')) for s in suites):.3f}")
    root.extend(suites)
    ET.indent(root)
    return write_text(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")


def finding_case(classname: str, finding: Finding, failed: bool, note: str = "") -> Case:
    """A finding as a test case: failed with its repro, or passing with a note (why it is not a failure)."""
    text = finding_text(finding)
    if failed:
        message = f"{finding.tier}: {finding.title}: {finding.count_text}"
        return Case(classname, finding.title, message, text, finding.kind.value, finding.tier)
    return Case(classname, finding.title, None, f"{note}\n{text}", tier=finding.tier)


def run_suite(result: CampaignResult) -> ET.Element:
    """A campaign as a test suite, what to fix first: each finding but the edge behaviour, bugs
    first, then graph code, adapter faults and conventions (failed unless a note under the run's
    conventions); the edge behaviour compact, one case per op (`edge_cases`); then each op drawn
    (failed when a failing graph or finding has it)."""
    s = result.settings
    name = f"gradcheck run: {s.engine}, {s.graphs} {'tensor' if s.tensor else 'scalar'} graphs, seed {s.seed}"
    if s.dtype != "float64":
        name += f", {s.dtype}"
    conventions = s.conventions
    note = f"a note under --conventions {conventions}"
    ordered = sorted(result.findings, key=lambda f: tiers.tier_rank(f.tier))
    torch_off = "torch is off here and the engine is right: no failure of the engine's"
    cases = [
        finding_case(
            "gradcheck.findings",
            f,
            f.is_failure(conventions),
            torch_off if f.tier == tiers.TORCH_OFF else note,
        )
        for f in ordered
        if f.tier != tiers.EDGE
    ]
    cases += edge_cases("gradcheck.edges", result.findings, conventions)
    for op, st in result.ops.items():
        found = [f for f in result.findings if op in f.ops and f.is_failure(conventions)]
        text = f"{st.graphs} graph(s) used {op}"
        if st.failures or found:
            message = f"{op}: {st.failures} failing graph(s), {len(found)} finding(s)"
            titles = "\n".join(f"- {f.title}" for f in found)
            cases.append(Case("gradcheck.ops", op, message, f"{text}\n{titles}"))
        else:
            cases.append(Case("gradcheck.ops", op, None, text))
    return suite_element(name, cases, result.seconds)


def edge_cases(classname: str, findings: Sequence[Finding], conventions: str = "torch") -> list[Case]:
    """The edge behaviour as one case per op, named "edge behaviour of OP", its message what the
    engine did at each region ("edge: div: pole: raises ZeroDivision; overflow: inf/nan"), its
    text each of its findings in full (with the replay command)."""
    view = overview(findings)
    cases = []
    for row in view.edges:
        members = [findings[n] for n in row.numbers]
        where = "; ".join(f"{EDGE_REGIONS[r]}: {row.cells[r]}" for r in view.regions if r in row.cells)
        message = f"{tiers.EDGE}: {row.op}: {where} ({row.graphs} graph(s))"
        text = "\n\n".join(finding_text(f) for f in members)
        failed = any(f.is_failure(conventions) for f in members)
        name = f"edge behaviour of {row.op}"
        cases.append(Case(classname, name, message if failed else None, text, tiers.EDGE, tiers.EDGE))
    return cases


def gate_suites(outcome: GateResult) -> list[ET.Element]:
    """The gate as test suites, one per part: each op's verdict, each failing finding (new ones
    fail, the baseline's pass), and the gate-wide problems as failures of their own."""
    suites = []
    parts = sorted({v.part for v in outcome.verdicts} | {f.part for f in outcome.findings})
    for part in parts:
        cases = []
        for v in (v for v in outcome.verdicts if v.part == part):
            cases.append(Case(f"gate.{part}.ops", v.op, v.verdict if v.failed else None, v.verdict))
        for fv in (f for f in outcome.findings if f.part == part):
            cases.append(finding_case(f"gate.{part}.findings", fv.finding, fv.failed, "in the baseline"))
        result = outcome.results.get(part)
        suites.append(suite_element(f"gradcheck gate: {part}", cases, result.seconds if result else 0.0))
    if outcome.problems:
        cases = [Case("gate", f"problem {i}", p, p) for i, p in enumerate(outcome.problems)]
        suites.append(suite_element("gradcheck gate", cases, 0.0))
    return suites
