"""The gradient-regression gate: a fixed campaign whose per-op figures and findings must stay near
a recorded baseline, for any engine the campaign accepts (`gradcheck gate`, `python -m ci.gate`).

The campaign is deterministic (fixed graph counts and seeds per part, the edge-value phase
included), so the same engine gives the same figures on every build. The gate fails when
- a finding appears that the baseline did not record (findings are compared by signature);
- an op has more failing graphs than the baseline recorded;
- an op the engine lists was never drawn, or an op of the baseline is no longer covered;
- an op's error figure exceeds max(FACTOR x baseline, FLOOR), FACTOR = 10. The figures compared
  are robust ones: the median (p50) and 99th percentile (p99), over the graphs that used the op,
  of each graph's largest relative gradient error against torch and against the numerical oracle
  (relative to the graph's gradient scale), and the p99 of the forward error against torch. The
  maxima are reported but not compared: one ill-conditioned graph amplifies a harmless change of
  rounding by orders of magnitude. Absolute errors are not compared either: they scale with
  whatever gradient magnitudes the graphs reach. FLOOR = 1e-13 against torch and for the forward
  error (float64 rounding of a graph is 1e-16..1e-14, so 0-vs-1e-17 noise never trips it) and
  1e-8 against the oracle (its truncation error). A real derivative bug also fails graphs
  outright: the parity check's own tolerances are ~1e-9 relative against torch.
A figure within the noise floor of its baseline (NOISE_ULPS ulps or NOISE_REL relative, whichever
is larger) counts as unchanged: another machine's libm rounds the last bits differently.
A baseline recorded for another engine or other settings is bad input, found before any campaign.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcheck.campaign.baseline import SCHEMA_VERSION, load_baseline, write_baseline
from gradcheck.campaign.checking import real_backend
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.pool import Campaign, Runner
from gradcheck.campaign.records import METRICS
from gradcheck.campaign.report_json import build_report, repeat_command
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.statistics import CampaignResult
from gradcheck.campaign.tasks import describe
from gradcheck.campaign.validation import validate

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
# Each part's fixed graph count and seed, by part name (see `part_for`).
DEFAULT_GRAPHS = {"scalar": 3000, "tensor": 600, "tensor-float32": 300}
DEFAULT_SEEDS = {"scalar": 20240601, "tensor": 20240602, "tensor-float32": 20240603}


@dataclass(frozen=True)
class Part:
    """One campaign of the gate: a name (the baseline's key), its engine and its fixed settings."""

    name: str
    engine: str
    tensor: bool
    graphs: int
    seed: int
    dtype: str = "float64"

    def settings(self, jobs: int = 1) -> Settings:
        return Settings(
            engine=self.engine,
            graphs=self.graphs,
            seed=self.seed,
            tensor=self.tensor,
            jobs=jobs,
            dtype=self.dtype,
            edges=True,
        )

    def recorded_settings(self) -> dict[str, Any]:
        """The settings as the baseline records them."""
        return recorded_settings(self.settings())


def recorded_settings(settings: Settings) -> dict[str, Any]:
    """What the baseline records of a campaign's settings: everything that determines the figures."""
    return {key: getattr(settings, key) for key in ("engine", "graphs", "seed", "tensor", "points", "dtype")}


def part_for(
    engine: str,
    tensor: bool = False,
    dtype: str = "float64",
    graphs: int | None = None,
    seed: int | None = None,
) -> Part:
    """The gate's part for an engine: "scalar", "tensor" or "tensor-float32", with its fixed
    graph count and seed unless given."""
    name = ("tensor" if tensor else "scalar") + ("" if dtype == "float64" else f"-{dtype}")
    if name not in DEFAULT_GRAPHS:
        raise CampaignError(f"gate: --dtype {dtype} needs --tensor (a scalar engine computes in float64)")
    return Part(
        name,
        engine,
        tensor,
        graphs if graphs is not None else DEFAULT_GRAPHS[name],
        seed if seed is not None else DEFAULT_SEEDS[name],
        dtype,
    )


# --- comparing figures -------------------------------------------------------------------------


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
        """Some figure above its floor fell more than FACTOR times below its baseline."""
        if self.before is None or self.after is None:
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

    @property
    def passed(self) -> bool:
        return not self.problems and not any(v.failed for v in self.verdicts) and not self.new_findings

    @property
    def new_findings(self) -> list[FindingVerdict]:
        return [f for f in self.findings if f.failed]


def signature_key(signature: Sequence[Any]) -> str:
    """A finding signature as one comparable string (the baseline stores it as a JSON list)."""
    return json.dumps(json.loads(json.dumps(list(signature))), separators=(",", ":"))


def compare(
    baseline: dict,
    current: dict,
    expected_ops: Sequence[str],
    findings_of: Mapping[str, Sequence[Finding]] | None = None,
) -> GateResult:
    """Per-op verdicts, findings and gate-wide problems of `current` figures against `baseline`;
    `findings_of` maps each part to this run's failing findings."""
    problems: list[str] = []
    verdicts: list[OpVerdict] = []
    findings: list[FindingVerdict] = []
    gone: list[str] = []
    covered: set[str] = set()
    for name, part in current["parts"].items():
        covered.update(part["ops"])
        base_part = baseline["parts"].get(name) or {"ops": {}, "findings": []}
        for op in sorted(set(base_part["ops"]) | set(part["ops"])):
            before, after = base_part["ops"].get(op), part["ops"].get(op)
            verdicts.append(OpVerdict(name, op, before, after, _op_reasons(before, after)))
        accepted = {signature_key(f["signature"]): f for f in base_part.get("findings", [])}
        seen = set()
        for finding in (findings_of or {}).get(name, ()):
            key = signature_key(finding.signature)
            seen.add(key)
            findings.append(FindingVerdict(name, finding, key in accepted))
        gone += [f"{name}: {f['title']}" for key, f in accepted.items() if key not in seen]
    for name in baseline["parts"]:
        if name not in current["parts"]:
            problems.append(f"part {name!r} of the baseline was not run")
    never = sorted(set(expected_ops) - covered)
    if never:
        problems.append(f"op(s) {never} were never drawn by the gate's campaign: raise its graph count")
    return GateResult(verdicts, problems, findings, gone)


def _op_reasons(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    if after is None:
        return ["no longer covered (the baseline has it, this campaign never drew it)"]
    reasons = []
    allowed = before["failures"] if before else 0
    if after["failures"] > allowed:
        reasons.append(
            f"{after['failures']} failing graph(s) (baseline {allowed}): {after['failing_graphs'][:5]}"
        )
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
    if x is None:
        return "–"
    return "0" if x == 0 else f"{x:.2e}"


# --- running -----------------------------------------------------------------------------------


def figures(results: Mapping[str, CampaignResult]) -> dict:
    """The baseline's content for campaign results: per part, its settings, per-op figures and
    failing findings."""
    parts = {}
    for name, result in results.items():
        report = build_report(result)
        parts[name] = {
            "settings": recorded_settings(result.settings),
            "totals": {k: report["totals"][k] for k in ("graphs", "failed")},
            "ops": {
                op: {k: st[k] for k in ("graphs", "failures", "failing_graphs", *METRICS, *FLOORS)}
                for op, st in report["ops"].items()
            },
            "findings": [
                {"signature": list(f.signature), "title": f.title, "graphs": f.graphs}
                for f in result.failing_findings
            ],
        }
    return {"schema_version": SCHEMA_VERSION, "factor": FACTOR, "floors": FLOORS, "parts": parts}


def check_comparable(baseline: dict, parts: Sequence[Part], path: Path) -> None:
    """Raise CampaignError unless `baseline` was recorded for exactly these parts and settings."""
    names = sorted(p.name for p in parts)
    if sorted(baseline["parts"]) != names:
        raise CampaignError(
            f"{path}: the baseline has part(s) {sorted(baseline['parts'])}, this gate runs {names} "
            "(another --tensor/--dtype?); record one for these options with --update-baseline"
        )
    for part in parts:
        recorded, wanted = baseline["parts"][part.name]["settings"], part.recorded_settings()
        if recorded != wanted:
            diff = ", ".join(
                f"{k} {recorded.get(k)!r} (this gate: {wanted[k]!r})"
                for k in wanted
                if recorded.get(k) != wanted[k]
            )
            raise CampaignError(
                f"{path}: part {part.name!r} was recorded with other settings: {diff}; "
                "figures are not comparable (record a baseline for these with --update-baseline)"
            )


Announce = Callable[[str], None]


def run_parts(
    parts: Sequence[Part], jobs: int, announce: Announce | None = None, runner: Runner | None = None
) -> dict[str, CampaignResult]:
    """Run each part's campaign, its edge-value phase included (deterministic: fixed seeds), its
    engine code on `runner` (this process when None)."""
    results = {}
    for part in parts:
        settings = part.settings(jobs)
        if announce:
            announce(f"gate: {part.name}: {part.graphs} graphs on {part.engine}, seed {part.seed} ...")
        results[part.name] = run_campaign(settings, real_backend(), runner=runner)
    return results


def expected_ops(parts: Sequence[Part], runner: Runner | None = None) -> list[str]:
    """Every op the parts' engines list (each must be drawn by the gate's campaign); CampaignError
    for an engine that is unknown or does not fit its part (checked before the baseline is)."""
    if runner is None:
        return sorted({op for part in parts for op in validate(part.settings())})
    engines = [Campaign(real_backend(), part.settings()) for part in parts]
    return sorted({op for engine in engines for op in runner.call(describe, engine, None).checked()})


def run_gate(
    parts: Sequence[Part],
    baseline_path: Path,
    jobs: int,
    announce: Announce | None = None,
    runner: Runner | None = None,
) -> GateResult:
    """Load the baseline, check the engines and that the baseline fits them (CampaignError: bad
    input), run the parts, compare."""
    baseline = load_baseline(baseline_path, FLOORS)
    ops = expected_ops(parts, runner)
    check_comparable(baseline, parts, baseline_path)
    start = time.perf_counter()
    results = run_parts(parts, jobs, announce, runner)
    seconds = time.perf_counter() - start
    # a finding's repro: the gate's campaign as `gradcheck run` (its report replays each finding)
    findings_of = {
        name: [dataclasses.replace(f, repro=repeat_command(result.settings)) for f in result.failing_findings]
        for name, result in results.items()
    }
    outcome = compare(baseline, figures(results), ops, findings_of)
    outcome.seconds = seconds
    outcome.results = results
    return outcome


@dataclass
class Update:
    """What --update-baseline did: written or refused (and why), with the findings it accepted."""

    written: bool
    message: str
    accepted: list[Finding]
    seconds: float
    results: dict[str, CampaignResult]


def update_baseline(
    parts: Sequence[Part],
    path: Path,
    jobs: int,
    accept_findings: bool = True,
    announce: Announce | None = None,
    runner: Runner | None = None,
) -> Update:
    """Run the parts and record their figures at `path`; refused when an op the engine lists is
    never drawn, or (unless `accept_findings`) when a finding fails."""
    ops = expected_ops(parts, runner)
    start = time.perf_counter()
    results = run_parts(parts, jobs, announce, runner)
    seconds = time.perf_counter() - start
    current = figures(results)
    accepted = [f for r in results.values() for f in r.failing_findings]
    failing = {name: len(r.failures) for name, r in results.items() if not r.passed}
    never = sorted(set(ops) - {op for part in current["parts"].values() for op in part["ops"]})
    if failing and not accept_findings:
        message = f"not updating the baseline: graphs fail their parity check ({failing})"
    elif never:
        message = f"not updating the baseline: op(s) {never} never drawn"
    else:
        write_baseline(path, current)
        message = f"baseline rewritten: {path} ({seconds:.1f} s); review and commit the diff"
    return Update(not (failing and not accept_findings) and not never, message, accepted, seconds, results)
