"""The gradient-regression gate: a fixed campaign whose per-op figures must stay near the baseline.

    python -m ci.gate                       # compare with ci/baseline.json; exit 1 on a regression
    python -m ci.gate --update-baseline     # rewrite the baseline on purpose (review the diff)
    python path/to/ci/gate.py               # the same from any directory

The module form runs from the repository root (where `ci` is importable); the script form runs
from anywhere and imports the checkout it belongs to. Exit status: 0 pass, 1 regression, 2 bad
input (arguments, a missing or malformed baseline: checked before any campaign runs).

It runs a deterministic campaign (fixed seeds; scalar graphs on `minigrad`, tensor graphs on
`minigrad-tensor` when the registry has tensor ops) and fails when
- any graph fails its parity check;
- any registry op was never drawn (the campaign no longer covers it);
- an op of the baseline is no longer covered;
- an op's error figure exceeds max(FACTOR x baseline, FLOOR), FACTOR = 10. The figures compared
  are robust ones: the median (p50) and 99th percentile (p99), over the graphs that used the op,
  of each graph's largest relative gradient error against torch and against the numerical oracle
  (relative to the graph's gradient scale), and the p99 of the forward error against torch. The
  maxima are shown in reports but not compared: one ill-conditioned graph amplifies a harmless
  change of rounding by orders of magnitude. Absolute errors are not compared either: they scale
  with whatever gradient magnitudes the graphs reach. FLOOR = 1e-13 against torch and for the
  forward error (float64 rounding of a graph is 1e-16..1e-14, so 0-vs-1e-17 noise never trips
  it) and 1e-8 against the oracle (its truncation error). A real derivative bug also fails
  graphs outright: the parity check's own tolerances are ~1e-9 relative against torch;
- the baseline was recorded with other campaign settings (then the figures are not comparable).
It prints a markdown summary: per op, the figures before and after and the verdict. A figure
within the noise floor of its baseline (NOISE_ULPS ulps or NOISE_REL relative, whichever is
larger) counts as unchanged: another machine's libm rounds the last bits differently.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python path/to/ci/gate.py`: import this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ci.baseline_schema import check_shape
from gradcheck import campaign
from gradcheck.arguments import positive_int
from gradcheck.campaign import METRICS, CampaignError, CampaignResult, Settings
from gradcheck.campaign.report_json import build_report
from gradcheck.campaign.workers import capped_jobs
from gradcheck.printable import printable

BASELINE = Path(__file__).with_name("baseline.json")
BASELINE_SCHEMA = 1
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


@dataclass(frozen=True)
class Part:
    """One campaign of the gate: a name (the baseline's key), its engine and its fixed settings."""

    name: str
    engine: str
    tensor: bool
    graphs: int
    seed: int
    dtype: str = "float64"

    def settings(self, jobs: int) -> Settings:
        return Settings(
            engine=self.engine,
            graphs=self.graphs,
            seed=self.seed,
            tensor=self.tensor,
            jobs=jobs,
            dtype=self.dtype,
        )


PARTS = (
    Part("scalar", "minigrad", tensor=False, graphs=3000, seed=20240601),
    Part("tensor", "minigrad-tensor", tensor=True, graphs=600, seed=20240602),
    # the tensor engine in float32, judged by torch's float32 accuracy (gradcheck.parity.float32)
    Part("tensor-float32", "minigrad-tensor", tensor=True, graphs=300, seed=20240603, dtype="float32"),
)


# --- comparing figures -------------------------------------------------------------------------


def _num(x: Any) -> float | None:
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
        return not all(_same(_num(self.before.get(m)), _num(self.after.get(m))) for m in FLOORS)

    @property
    def verdict(self) -> str:
        if self.reasons:
            return "FAIL: " + "; ".join(self.reasons)
        if self.before is None:
            return "new op (not in the baseline; --update-baseline records it)"
        if self.after is not None and any(
            _num(self.after.get(m)) is not None
            and _num(self.before.get(m)) is not None
            and _num(self.after[m]) * FACTOR < _num(self.before[m])
            and _num(self.before[m]) > FLOORS[m]
            for m in FLOORS
        ):
            return "ok (improved more than 10x: consider --update-baseline)"
        return "ok"


def compare(baseline: dict, current: dict, registry_ops: Sequence[str]) -> tuple[list[OpVerdict], list[str]]:
    """Per-op verdicts and the gate-wide problems (coverage, settings) of current vs baseline figures."""
    problems: list[str] = []
    verdicts: list[OpVerdict] = []
    covered: set[str] = set()
    for name, part in current["parts"].items():
        covered.update(part["ops"])
        base_part = baseline["parts"].get(name)
        if base_part is None:
            problems.append(f"part {name!r} is not in the baseline: run with --update-baseline")
            base_part = {"settings": part["settings"], "ops": {}}
        if base_part["settings"] != part["settings"]:
            problems.append(
                f"part {name!r}: the baseline was recorded with settings {base_part['settings']}, "
                f"this run used {part['settings']}: figures are not comparable (--update-baseline)"
            )
        for op in sorted(set(base_part["ops"]) | set(part["ops"])):
            before, after = base_part["ops"].get(op), part["ops"].get(op)
            reasons: list[str] = []
            if after is None:
                reasons.append("no longer covered (the baseline has it, this campaign never drew it)")
            else:
                if after["failures"]:
                    reasons.append(f"{after['failures']} failing graph(s): {after['failing_graphs'][:5]}")
                for metric in FLOORS:
                    b = _num(before.get(metric)) if before else None
                    a = _num(after.get(metric))
                    if before is not None and regressed(metric, b, a):
                        reasons.append(
                            f"{metric} {_fmt(a)} > max({FACTOR:g} x {_fmt(b)}, floor {FLOORS[metric]:g})"
                        )
            verdicts.append(OpVerdict(name, op, before, after, reasons))
    for name in baseline["parts"]:
        if name not in current["parts"]:
            problems.append(f"part {name!r} of the baseline was not run")
    never = sorted(set(registry_ops) - covered)
    if never:
        problems.append(
            f"registry op(s) {never} were never drawn by the gate's campaign: raise its graph count"
        )
    return verdicts, problems


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


def markdown(verdicts: Sequence[OpVerdict], problems: Sequence[str], seconds: float | None = None) -> str:
    """The summary CI shows: a verdict line, gate-wide problems, then one row per op."""
    failed = [v for v in verdicts if v.failed]
    ok = not failed and not problems
    lines = [f"## Gradient-regression gate: {'PASS' if ok else 'FAIL'}", ""]
    lines.append(
        f"Threshold: a figure regresses when it exceeds max({FACTOR:g} x baseline, floor); "
        "floors " + ", ".join(f"{m} {f:g}" for m, f in FLOORS.items()) + "."
    )
    changed = [v for v in verdicts if not v.failed and v.changed]
    lines.append(
        f"{len(verdicts)} op rows compared: {len(failed)} failed, {len(changed)} changed within limits, "
        f"{len(verdicts) - len(failed) - len(changed)} unchanged."
    )
    if seconds is not None:
        lines.append(f"Campaign time: {seconds:.1f} s.")
    lines.append("")
    for p in problems:
        lines.append(f"- **{p}**")
    if problems:
        lines.append("")
    header = " | ".join(f"{LABELS[m]} (before → after)" for m in FLOORS)
    lines.append(f"| part | op | graphs | {header} | verdict |")
    lines.append("|---|---|---:|" + "---|" * len(FLOORS) + "---|")
    for v in verdicts:
        graphs = v.after["graphs"] if v.after else 0
        cells = []
        for metric in FLOORS:
            b = _fmt(_num(v.before.get(metric))) if v.before else "–"
            a = _fmt(_num(v.after.get(metric))) if v.after else "–"
            cells.append(f"{b} → {a}")
        verdict = f"**{v.verdict}**" if v.failed else v.verdict
        lines.append(f"| {v.part} | `{v.op}` | {graphs} | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(lines) + "\n"


# --- running -----------------------------------------------------------------------------------


def figures(results: dict[str, CampaignResult]) -> dict:
    """The baseline's content for campaign results: per part, its settings and per-op figures."""
    parts = {}
    for name, result in results.items():
        report = build_report(result)
        parts[name] = {
            # a part's dtype is fixed by its name (tensor-float32), like its engine and seed
            "settings": {k: report["settings"][k] for k in ("engine", "graphs", "seed", "tensor", "points")},
            "totals": {k: report["totals"][k] for k in ("graphs", "failed")},
            "ops": {
                op: {k: st[k] for k in ("graphs", "failures", "failing_graphs", *METRICS, *FLOORS)}
                for op, st in report["ops"].items()
            },
        }
    return {
        "schema_version": BASELINE_SCHEMA,
        "factor": FACTOR,
        "floors": FLOORS,
        "parts": parts,
    }


def load_baseline(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CampaignError(f"{path}: no baseline yet; create it with --update-baseline") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise CampaignError(f"{path}: cannot read the baseline: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema_version") != BASELINE_SCHEMA or "parts" not in data:
        raise CampaignError(
            f"{path}: not a gate baseline of schema_version {BASELINE_SCHEMA}; "
            "recreate it with --update-baseline"
        )
    check_shape(data, path, FLOORS)
    return data


def run_parts(parts: Sequence[Part], jobs: int, progress: bool = False) -> dict[str, CampaignResult]:
    """Run each part's campaign (skipping tensor parts when the registry has no tensor ops)."""
    backend = campaign.real_backend()
    results = {}
    for part in parts:
        settings = part.settings(jobs)
        if part.tensor and not campaign.tensor_ops():
            continue
        campaign.validate(settings)
        if progress:
            print(f"gate: {settings.describe()} ...", file=sys.stderr, flush=True)
        results[part.name] = campaign.run_campaign(settings, backend)
    return results


def registry_ops(parts: Sequence[Part]) -> list[str]:
    ops = set(campaign.scalar_ops())
    if any(p.tensor for p in parts):
        ops |= set(campaign.tensor_ops())
    return sorted(ops)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ci.gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, default=BASELINE, help=f"baseline file (default {BASELINE})")
    parser.add_argument("--update-baseline", action="store_true", help="rewrite the baseline on purpose")
    parser.add_argument(
        "--jobs", type=positive_int, default=2, help="worker processes (default 2, at most the CPUs)"
    )
    parser.add_argument("--engine", default=None, help="scalar engine instead of minigrad (to test the gate)")
    parser.add_argument("--tensor-engine", default=None, help="tensor engine instead of minigrad-tensor")
    parser.add_argument(
        "--graphs", type=positive_int, default=None, help="scalar graphs instead of the fixed count"
    )
    parser.add_argument(
        "--tensor-graphs", type=positive_int, default=None, help="tensor graphs instead of the fixed count"
    )
    parser.add_argument("--summary", type=Path, default=None, help="also write the markdown summary here")
    args = parser.parse_args(argv)
    parts = _parts(args)
    jobs, note = capped_jobs(args.jobs)
    if note:
        print(f"gate: {note}", file=sys.stderr)
    start = time.perf_counter()
    try:
        baseline = None if args.update_baseline else load_baseline(args.baseline)
        results = run_parts(parts, jobs, progress=True)
        current = figures(results)
        seconds = time.perf_counter() - start
        if baseline is None:
            return _update(args.baseline, current, results, parts, seconds)
    except CampaignError as exc:
        print(f"gate: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    verdicts, problems = compare(baseline, current, registry_ops([p for p in parts if p.name in results]))
    text = markdown(verdicts, problems, seconds)
    print(text)
    if args.summary:
        args.summary.write_text(text, encoding="utf-8")
    return 1 if problems or any(v.failed for v in verdicts) else 0


def _parts(args: argparse.Namespace) -> list[Part]:
    scalar, *tensors = PARTS
    scalar = Part(scalar.name, args.engine or scalar.engine, False, args.graphs or scalar.graphs, scalar.seed)
    return [scalar] + [
        Part(
            part.name,
            args.tensor_engine or part.engine,
            True,
            args.tensor_graphs or part.graphs,
            part.seed,
            part.dtype,
        )
        for part in tensors
    ]


def _update(
    path: Path, current: dict, results: dict[str, CampaignResult], parts: list[Part], seconds: float
) -> int:
    failing = {name: len(r.failures) for name, r in results.items() if r.failures}
    if failing:
        print(f"gate: not updating the baseline: graphs fail their parity check ({failing})", file=sys.stderr)
        return 1
    never = sorted(
        set(registry_ops([p for p in parts if p.name in results]))
        - {op for part in current["parts"].values() for op in part["ops"]}
    )
    if never:
        print(f"gate: not updating the baseline: registry op(s) {never} never drawn", file=sys.stderr)
        return 1
    path.write_text(json.dumps(current, indent=1, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
    print(f"gate: baseline rewritten: {path} ({seconds:.1f} s); review and commit the diff")
    return 0


if __name__ == "__main__":
    sys.exit(main())
