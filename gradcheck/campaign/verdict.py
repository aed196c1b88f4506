"""Comparing a gate's campaign with its baseline: one verdict per op (its figures against their
floors and FACTOR, its failing graphs against the findings the baseline accepts) and each finding
by its identity (`finding_identity`, which holds no number a run can move). What the gate
compares and why: `gradcheck.campaign.regression_gate`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.earlier_names import name_as_today
from gradcheck.campaign.findings import Finding, merged_signature
from gradcheck.campaign.records import CampaignResult
from gradcheck.graphs.regions import ORDINARY
from gradcheck.parity.wording import figure

FACTOR = 10.0
# Figures closer than this to their baseline are "unchanged" (see the docstring).
NOISE_ULPS = 4
NOISE_REL = 1e-9
# The compared figures (keys of report.json's per-op entries) and their floors; see the docstring.
FLOORS = {
    "p50_rel_err_torch": 1e-13,
    "p99_rel_err_torch": 1e-13,
    "p50_rel_err_numeric": 1e-8,
    "p99_rel_err_numeric": 1e-8,
    "p99_forward_err": 1e-13,
}
LABELS = {
    "p50_rel_err_torch": "rel vs torch p50",
    "p99_rel_err_torch": "rel vs torch p99",
    "p50_rel_err_numeric": "rel vs numeric p50",
    "p99_rel_err_numeric": "rel vs numeric p99",
    "p99_forward_err": "forward p99",
}


def as_figure(x: Any) -> float | None:
    if x is None:
        return None
    return float(x)


def regressed(metric: str, before: float | None, after: float | None, factor: float = FACTOR) -> bool:
    """True when `after` exceeds max(factor x before, floor), or became nan."""
    if after is None:
        return False
    if math.isnan(after):
        return before is None or not math.isnan(before)
    limit = max(factor * (before or 0.0), FLOORS[metric])
    return after > limit


@dataclass
class OpVerdict:
    """One op of one part: its figures before (baseline) and after (this run), and why it fails."""

    part: str
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reasons: list[str]

    @property
    def failed(self) -> bool:
        return bool(self.reasons)

    @property
    def changed(self) -> bool:
        """Any compared figure differs from the baseline (or the op is new or gone)."""
        if self.before is None or self.after is None:
            return True
        return not all(_same(as_figure(self.before.get(m)), as_figure(self.after.get(m))) for m in FLOORS)

    @property
    def improved(self) -> bool:
        """Some figure above its floor fell more than FACTOR times below its baseline (not said of
        figures read at the baseline's ranks: fewer graphs, not better ones)."""
        if self.before is None or self.after is None or self.after.get(RANKS_READ):
            return False
        for m in FLOORS:
            b, a = as_figure(self.before.get(m)), as_figure(self.after.get(m))
            if a is not None and b is not None and a * FACTOR < b and b > FLOORS[m]:
                return True
        return False

    @property
    def verdict(self) -> str:
        if self.reasons:
            return "FAIL: " + "; ".join(self.reasons)
        if self.before is None:
            return "new op (not in the baseline; --update-baseline records it)"
        if self.improved:
            return "ok (improved more than 10x: consider --update-baseline)"
        return "ok"


@dataclass(frozen=True)
class FindingVerdict:
    """A failing finding of this run, and whether the baseline recorded it (accepted) or not (new)."""

    part: str
    finding: Finding
    accepted: bool

    @property
    def failed(self) -> bool:
        return not self.accepted


@dataclass
class GateResult:
    """What the gate concluded: per-op verdicts, findings, gate-wide problems, and the findings of
    the baseline no longer present (fixed: informational)."""

    verdicts: list[OpVerdict]
    problems: list[str]
    findings: list[FindingVerdict] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    seconds: float | None = None
    results: dict[str, CampaignResult] = field(default_factory=dict)
    new_coverage: list[str] = field(default_factory=list)  # what the baseline does not gate yet
    # what the gate could not judge: findings and graphs whose shrinking the time cap cut short
    undetermined: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems and not any(v.failed for v in self.verdicts) and not self.new_findings

    @property
    def new_findings(self) -> list[FindingVerdict]:
        return [f for f in self.findings if f.failed]

    def verdict_lines(self) -> list[str]:
        """Why it fails, most telling first: each new finding, each failing op row, each problem."""
        lines = [
            f"new finding ({n.part}): {n.finding.title} ({n.finding.count_text})" for n in self.new_findings
        ]
        lines += [f"FAIL {v.part} {v.op}: " + "; ".join(v.reasons) for v in self.verdicts if v.failed]
        lines += [f"FAIL: {problem}" for problem in self.problems]
        return lines + [f"not determined: {what}" for what in self.undetermined]

    def summary(self) -> str:
        """The last line: "gate: PASS: 18 op rows, 0 failed, 0 changed within limits (...); ..."."""
        failed = sum(v.failed for v in self.verdicts)
        changed = sum(1 for v in self.verdicts if not v.failed and v.changed)
        floors = ", ".join(f"{f:g}" for f in sorted(set(FLOORS.values())))
        seconds = f"; {self.seconds:.1f} s" if self.seconds is not None else ""
        return (
            f"gate: {'PASS' if self.passed else 'FAIL'}: {len(self.verdicts)} op rows, {failed} failed, "
            f"{changed} changed within limits (floors {floors}); {len(self.new_findings)} new finding(s)"
            + (f"; {len(self.undetermined)} not determined ({CUT_SHORT})" if self.undetermined else "")
            + seconds
        )


_NAMED_KIND_VALUES = ("structural", "nondeterministic")
UNEXPLAINED = "no finding explains them"
CUT_SHORT = "its shrinking reached the time cap, a safety cap: rerun on a less busy machine"
RANKS_READ = "read_at_baseline_ranks"  # a current op entry whose quantiles are read so (regression_gate.py)


def finding_identity(signature: Sequence[Any], variant: Sequence[str] | None = None) -> str:
    """A finding's identity in the gate, as one comparable string: its signature (the baseline
    stores it as a JSON list), with any number a structural finding's name holds taken out, so
    that a finding is the same one whatever depth, count or value a run met it with; and the
    variant its title names (`gate_variant`; None: a baseline entry written before variants,
    matched on the signature alone). A signature recorded before an op's wrong numbers at ordinary
    inputs merged (a wrong value, a wrong gradient: two entries) is read as today's merged one
    (`findings.merged_signature`): both entries are the one finding a run makes of them now."""
    sig = json.loads(json.dumps(list(signature)))
    if len(sig) == 4 and sig[0] in _NAMED_KIND_VALUES and not sig[1] and isinstance(sig[3], str):
        sig[3] = name_as_today(sig[3])
    if len(sig) == 4 and isinstance(sig[1], list):
        sig = json.loads(json.dumps(list(merged_signature(sig))))
    key: list[Any] = sig if variant is None else [*sig, sorted(variant)]
    return json.dumps(key, separators=(",", ":"))


def gate_variant(finding: Finding) -> tuple[str, ...]:
    """The variant that is part of a finding's identity: the one its title names (`Finding.cause`),
    none for an adapter's fault (one per op) or edge behaviour (one per op and region)."""
    return () if finding.tier in (tiers.ADAPTER, tiers.EDGE) else tuple(finding.variant or ())


def identities(finding: Finding) -> tuple[str, str]:
    """The keys a baseline may know this run's finding by: with its variant, and without (an entry
    written before baselines recorded variants)."""
    return finding_identity(finding.signature, gate_variant(finding)), finding_identity(finding.signature)


def recorded_identity(entry: Mapping[str, Any]) -> str:
    """A baseline entry's identity (its `variant`, when recorded, is part of it)."""
    return finding_identity(entry["signature"], entry.get("variant"))


signature_key = finding_identity  # the name earlier releases used


def accepted_faults(part: Mapping[str, Any]) -> set[str]:
    """The ops a baseline part accepted a finding of their own for (one op, at ordinary inputs:
    `records.faulted_ops`), read from the findings' signatures."""
    return {
        sig[1][0]
        for sig in (f["signature"] for f in part.get("findings", ()))
        if len(sig) == 4 and len(sig[1]) == 1 and sig[3] in (ORDINARY, "") and sig[0] != "convention"
    }


def compare(
    baseline: dict,
    current: dict,
    expected_ops: Sequence[str],
    findings_of: Mapping[str, Sequence[Finding]] | None = None,
    cut_short: Mapping[str, Sequence[int]] | None = None,
) -> GateResult:
    """Per-op verdicts, findings and gate-wide problems of `current` figures against `baseline`;
    `findings_of` maps each part to this run's failing findings, `cut_short` to the failing graphs
    whose shrinking its safety cap in seconds cut short (`CampaignResult.cut_short`): a new finding
    made from one of them, a graph of them no finding explains and a finding of the baseline gone
    from such a part are not determined (listed, not failed): what they show depends on the
    machine's speed, not on the engine."""
    problems: list[str] = []
    verdicts: list[OpVerdict] = []
    findings: list[FindingVerdict] = []
    gone: list[str] = []
    undetermined: list[str] = []
    covered: set[str] = set()
    for name, part in current["parts"].items():
        covered.update(part["ops"])
        base_part = baseline["parts"].get(name) or {"ops": {}, "findings": []}
        accepted: dict[str, list[Mapping[str, Any]]] = {}
        for entry in base_part.get("findings", []):  # entries an earlier release kept apart share one
            accepted.setdefault(recorded_identity(entry), []).append(entry)
        run_findings = (findings_of or {}).get(name, ())
        capped = set((cut_short or {}).get(name, ()))
        unaccepted = _unaccepted_graphs(run_findings, accepted, capped)
        for op in sorted(set(base_part["ops"]) | set(part["ops"])):
            before, after = base_part["ops"].get(op), part["ops"].get(op)
            verdicts.append(OpVerdict(name, op, before, after, _op_reasons(before, after, unaccepted)))
        seen = set()
        for finding in run_findings:
            keys = identities(finding)
            seen.update(keys)
            known = any(k in accepted for k in keys)
            if not known and capped & set(finding.graph_indices):
                undetermined.append(f"{name}: {finding.title} ({CUT_SHORT})")
                continue
            findings.append(FindingVerdict(name, finding, known))
        missing = [f"{name}: {f['title']}" for key, fs in accepted.items() if key not in seen for f in fs]
        if capped:
            undetermined += [f"{title} (gone? {CUT_SHORT})" for title in missing]
        else:
            gone += missing
        if capped:
            undetermined.append(f"{name}: {len(capped)} graph(s) {CUT_SHORT}")
    for name in baseline["parts"]:
        if name not in current["parts"]:
            problems.append(f"part {name!r} of the baseline was not run")
    never = sorted(set(expected_ops) - covered)
    if never:
        problems.append(f"op(s) {never} were never drawn by the gate's campaign: raise its graph count")
    return GateResult(verdicts, problems, findings, gone, undetermined=undetermined)


def _unaccepted_graphs(
    findings: Sequence[Finding], accepted: Mapping[str, Any], cut_short: set[int] | None = None
) -> Callable[[int], str | None]:
    """Why a failing graph fails the gate: the title of the finding that covers it when the
    baseline did not record that finding, a note when no finding does; None when accepted, or
    when its shrinking was cut short (`cut_short`: not determined)."""
    covering = {i: f for f in findings for i in f.graph_indices}

    def why(index: int) -> str | None:
        if index in (cut_short or ()):
            return None
        finding = covering.get(index)
        if finding is None:
            return UNEXPLAINED
        if any(k in accepted for k in identities(finding)):
            return None
        return f"new finding: {finding.title}"

    return why


def _op_reasons(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    unaccepted: Callable[[int], str | None] = lambda index: UNEXPLAINED,
) -> list[str]:
    if after is None:
        return ["no longer covered (the baseline has it, this campaign never drew it)"]
    reasons = []
    failing: dict[str, list[int]] = {}
    known = set(before.get("failing_graphs", ())) if before else set()  # graphs the baseline saw failing
    for index in after["failing_graphs"]:
        why = unaccepted(index)
        if why is not None and not (why == UNEXPLAINED and index in known):
            failing.setdefault(why, []).append(index)
    for why, indices in failing.items():
        shown = ", ".join(map(str, indices[:5])) + (", ..." if len(indices) > 5 else "")
        reasons.append(f"{len(indices)} failing graph(s) ({shown}): {why}")
    for metric in FLOORS:
        b = as_figure(before.get(metric)) if before else None
        a = as_figure(after.get(metric))
        if before is not None and regressed(metric, b, a):
            reasons.append(f"{metric} {_fmt(a)} > max({FACTOR:g} x {_fmt(b)}, floor {FLOORS[metric]:g})")
    return reasons


def _same(a: float | None, b: float | None) -> bool:
    """Equal up to the noise floor (or both nan, or both missing)."""
    if a is None or b is None or math.isnan(a) or math.isnan(b):
        return a is b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))
    return within_noise(a, b)


def within_noise(a: float, b: float) -> bool:
    """|a - b| within NOISE_ULPS ulps or NOISE_REL relative of the larger figure."""
    if a == b:
        return True
    scale = max(abs(a), abs(b))
    return abs(a - b) <= max(NOISE_ULPS * math.ulp(scale), NOISE_REL * scale)


def _fmt(x: float | None) -> str:
    return figure(x)
