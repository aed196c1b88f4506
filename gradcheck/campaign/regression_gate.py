"""The gradient-regression gate: a fixed campaign whose per-op figures and findings must stay near
a recorded baseline, for any engine the campaign accepts (`gradcheck gate`, `python -m ci.gate`,
the pytest plugin's `--gradcheck-baseline`).

The campaign is deterministic (fixed graph counts and seeds per part, the edge-value phase
included), so the same engine gives the same figures on every build and through every launcher.
What the gate compares holds no number that depends on the run (a recursion depth, how many
graphs a finding covers, an example's values). The gate fails when
- a finding appears that the baseline did not record (findings are compared by `finding_identity`:
  kind, ops, check, input region and the variant its title names, or a structural finding's
  plain name; its tier is recorded beside it);
- an op has failing graphs that no finding of the baseline explains (how many graphs an accepted
  finding covers is not compared);
- an op the engine lists was never drawn (but for one left out for its adapter's fault, which
  its `adapter` finding gates), or an op of the baseline is no longer covered;
- an op's error figure exceeds max(FACTOR x baseline, FLOOR), FACTOR = 10. The figures are over
  the evidence about the op (`records.aggregate`: its op-isolation checks and the graphs where
  no other op has a finding, so one op's bug fails that op's row only; the ops the baseline
  accepted a finding for stay out too, and an op whose evidence shrank since is read at the
  baseline's ranks, `read_at_baseline_ranks`). They are robust ones:
  the median (p50) and 99th percentile (p99) of each graph's largest relative gradient error
  against torch and against the numerical oracle (relative to the graph's gradient scale), and
  the p99 of the forward error against torch. The maxima are reported but not compared: one
  ill-conditioned graph amplifies a harmless change of rounding by orders of magnitude. Absolute
  errors are not compared either: they scale with whatever gradient magnitudes the graphs reach.
  FLOOR = 1e-13 against torch and for the forward error (float64 rounding of a graph is
  1e-16..1e-14, so 0-vs-1e-17 noise never trips it) and 1e-8 against the oracle (its truncation
  error). A real derivative bug also fails graphs outright: the parity check's own tolerances are
  ~1e-9 relative against torch.
A figure within the noise floor of its baseline (NOISE_ULPS ulps or NOISE_REL relative, whichever
is larger) counts as unchanged: another machine's libm rounds the last bits differently.
A baseline recorded for another engine or other settings is bad input, found before any campaign.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcheck.campaign.baseline import (
    SCHEMA_VERSION,
    load_baseline,
    recorded_ops,
    recorded_variants,
    write_baseline,
)
from gradcheck.campaign.checking import real_backend
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.pool import Campaign, Inline, Runner
from gradcheck.campaign.records import METRICS, QUANTILES, CampaignResult, OpStats, aggregate
from gradcheck.campaign.report_json import build_report, encode_float, repeat_command
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.tasks import EngineFacts, describe
from gradcheck.campaign.validation import validate
from gradcheck.campaign.variants import surface_words
from gradcheck.campaign.verdict import (
    FACTOR,
    FLOORS,
    RANKS_READ,
    GateResult,
    accepted_faults,
    compare,
    gate_variant,
)
from gradcheck.engines.loading import canonical_spec
from gradcheck.graphs.surface import CURRENT, of_ops

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
    # the surface a baseline gates (`gated`): its ops, in registry order, and attribute variants
    # (None: all the engine has)
    ops: tuple[str, ...] | None = None
    variants: tuple[str, ...] | None = None

    def settings(self, jobs: int = 1) -> Settings:
        return Settings(
            engine=self.engine,
            graphs=self.graphs,
            seed=self.seed,
            tensor=self.tensor,
            jobs=jobs,
            dtype=self.dtype,
            edges=True,
            ops=self.ops,
            variants=self.variants,
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


# --- running -----------------------------------------------------------------------------------


def figures(results: Mapping[str, CampaignResult], runner: Runner | None = None) -> dict:
    """The baseline's content for campaign results: per part, its settings, per-op figures and
    failing findings (the surface the engine offers asked where `runner` runs engine code)."""
    parts = {}
    for name, result in results.items():
        report = build_report(result)
        # in registry order; an op left out for its adapter's fault too (its finding gates it)
        facts = engine_facts(dataclasses.replace(result.settings, left_out=()), runner)
        drawn_from = facts.ops
        parts[name] = {
            "settings": recorded_settings(result.settings),
            "totals": {k: report["totals"][k] for k in ("graphs", "failed")},
            "ops": {
                op: {k: st[k] for k in ("graphs", "failures", "failing_graphs", *METRICS, *FLOORS)}
                for op, st in report["ops"].items()
            },
            "findings": [
                {
                    "signature": list(f.signature),
                    "variant": list(gate_variant(f)),
                    "tier": f.tier,
                    "title": f.title,
                    "graphs": f.graphs,
                }
                for f in result.failing_findings
            ],
            "surface": {  # what the campaign drew from, whatever it happened to draw
                "release": CURRENT,
                "ops": list(drawn_from),
                "variants": sorted(of_ops(facts.variants, drawn_from)),
            },
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
        if same_engine(recorded.get("engine"), part.engine):  # one file, named from two places
            recorded = {**recorded, "engine": part.engine}
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


def same_engine(recorded: Any, engine: str) -> bool:
    """Whether a baseline's engine name and this gate's name one engine (`engine.py:Value` and
    its absolute path name one file)."""
    return isinstance(recorded, str) and (
        recorded == engine or canonical_spec(recorded) == canonical_spec(engine)
    )


def baseline_parts(path: Path, engine: str) -> list[Part]:
    """The parts of the baseline at `path` recorded for `engine`, with their recorded settings (the
    pytest plugin's gate: its one engine, whichever launcher recorded the baseline)."""
    baseline = load_baseline(path, FLOORS)
    parts = [
        Part(name, engine, s["tensor"], s["graphs"], s["seed"], s["dtype"])
        for name, part in baseline["parts"].items()
        for s in [part["settings"]]
        if same_engine(s["engine"], engine)
    ]
    if not parts:
        engines = sorted({p["settings"]["engine"] for p in baseline["parts"].values()})
        raise CampaignError(f"{path}: the baseline gates engine(s) {engines}, not {engine!r}")
    return parts


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
    return sorted({op for part in parts for op in engine_facts(part.settings(), runner).checked()})


def engine_facts(settings: Settings, runner: Runner | None = None) -> EngineFacts:
    """The engine's facts for a campaign of `settings` (`tasks.describe`), asked where `runner`
    runs engine code (this process when None)."""
    return (runner or Inline()).call(describe, Campaign(real_backend(), settings), None)


def without_left_out(ops: Sequence[str], results: Mapping[str, CampaignResult]) -> list[str]:
    """`ops` but those a campaign left out for the adapter's fault: an `adapter` finding stands
    for each (new, it fails the gate; accepted, it passes), no graph is drawn of it."""
    left_out = {op for r in results.values() for op in r.settings.left_out}
    return [op for op in ops if op not in left_out]


def gated(part: Part, recorded: Mapping[str, Any], runner: Runner | None = None) -> tuple[Part, list[str]]:
    """`part` kept to the surface its baseline entry was recorded with: the ops its campaign drew
    from and their attribute variants, whatever a newer registry or engine adds (the same graphs
    as then); and a line naming what is left out, which --update-baseline brings in."""
    facts = engine_facts(part.settings(), runner)
    ops_now = facts.checked()
    variants_now = of_ops(facts.variants, ops_now)
    base_ops, base_variants = recorded_ops(recorded, ops_now), recorded_variants(recorded)
    ops = tuple(op for op in ops_now if op in base_ops)
    new_ops = [op for op in ops_now if op not in base_ops]
    new_variants = sorted(variants_now - base_variants)
    news = ([f"op(s) {', '.join(new_ops)}"] if new_ops else []) + (
        [f"variant(s) {surface_words(new_variants)}"] if new_variants else []
    )
    if not news:
        return part, []
    note = f"new coverage ({part.name}): {'; '.join(news)}; run --update-baseline to include it"
    keep = dataclasses.replace(
        part,
        ops=(ops or None) if new_ops else None,
        variants=tuple(sorted(variants_now & base_variants)) if new_variants else None,
    )
    return keep, [note]


def run_gate(
    parts: Sequence[Part],
    baseline_path: Path,
    jobs: int,
    announce: Announce | None = None,
    subset: bool = False,
    runner: Runner | None = None,
) -> GateResult:
    """Load the baseline, check the engines (CampaignError: bad input) and that the baseline fits
    them, run the parts, each kept to the surface the baseline gates, compare. `subset`: the parts
    gate only their own entries of a baseline that records more (the pytest plugin, whose engine
    is one of a baseline's). `runner`: where the engine code runs (this process when None)."""
    baseline = load_baseline(baseline_path, FLOORS)
    expected_ops(parts, runner)  # an unknown engine is that, not a baseline of other settings
    if subset:
        names = {p.name for p in parts}
        baseline = {**baseline, "parts": {k: v for k, v in baseline["parts"].items() if k in names}}
    check_comparable(baseline, parts, baseline_path)
    kept = [gated(part, baseline["parts"][part.name], runner) for part in parts]
    parts = [part for part, _ in kept]
    ops = expected_ops(parts, runner)
    start = time.perf_counter()
    results = run_parts(parts, jobs, announce, runner)
    seconds = time.perf_counter() - start
    # each op's evidence leaves out the ops the baseline had a finding for too, as it did then
    results = {
        name: dataclasses.replace(
            r, ops=aggregate(r.records, r.findings, r.isolated, accepted_faults(baseline["parts"][name]))
        )
        for name, r in results.items()
    }
    # a finding's repro: the gate's campaign as `gradcheck run` (its report replays each finding)
    findings_of = {
        name: [dataclasses.replace(f, repro=repeat_command(result.settings)) for f in result.failing_findings]
        for name, result in results.items()
    }
    current = figures(results, runner)
    for name, part in current["parts"].items():
        read_at_baseline_ranks(part["ops"], baseline["parts"][name]["ops"], results[name].ops)
    cut_short = {name: result.cut_short for name, result in results.items()}
    outcome = compare(baseline, current, without_left_out(ops, results), findings_of, cut_short)
    outcome.seconds = seconds
    outcome.results = results
    outcome.new_coverage = [note for _, notes in kept for note in notes]
    return outcome


def read_at_baseline_ranks(
    now: dict[str, dict], before: Mapping[str, Mapping[str, Any]], stats: Mapping[str, OpStats]
) -> None:
    """Each compared quantile of an op whose evidence shrank since the baseline (another op got a
    finding, so its graphs are that op's evidence now) read at the baseline's rank from the top:
    the j-th largest figure now, j being how many of the baseline's graphs stood at or above its
    quantile. The graphs left are the baseline's, less some, so leaving graphs out never raises a
    figure (a p99 over fewer graphs sits nearer the maximum); an op gone worse still shows."""
    for op, entry in now.items():
        n = before.get(op, {}).get("graphs", 0)
        if op not in stats or entry["graphs"] >= n:
            continue
        for figure in FLOORS:
            quantile, metric = figure.split("_", 1)
            j = n - math.ceil(QUANTILES[quantile] * n) + 1
            entry[figure] = encode_float(stats[op].largest(f"max_{metric}", j))
        entry[RANKS_READ] = True


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
    current = figures(results, runner)
    accepted = [f for r in results.values() for f in r.failing_findings]
    failing = {name: len(r.failures) for name, r in results.items() if not r.passed}
    drawn = {op for part in current["parts"].values() for op in part["ops"]}
    never = sorted(set(without_left_out(ops, results)) - drawn)
    if failing and not accept_findings:
        message = f"not updating the baseline: graphs fail their parity check ({failing})"
    elif never:
        message = f"not updating the baseline: op(s) {never} never drawn"
    else:
        write_baseline(path, current)
        message = f"baseline rewritten: {path} ({seconds:.1f} s); review and commit the diff"
    return Update(not (failing and not accept_findings) and not never, message, accepted, seconds, results)
