"""report.json: every figure of a campaign, machine-readable, under a versioned schema.

Layout (schema_version 2; schema 1, read too, had no `records`: `campaign.earlier_schema`):
- `incomplete`, only in the report of a campaign cut short (its Dask cluster lost mid-run): why,
  and how many graphs were checked; such a report never passes.
- `cut_short`, only in the report of a campaign whose shrinking reached its safety cap in seconds
  (`Settings.shrink_time_cap`): the cap and the failing graphs it cut short; what those show
  depends on the machine's speed, and the gate does not judge it.
- `settings`: what determines the figures (engine, graphs, seed, ops, tensor, points,
  shrink_budget (the candidate checks the campaign had for shrinking, an integer; reports written
  before it was counted had seconds, a float, and still read); `dtype` when it is not float64,
  `reference` when it is not torch: "exact", the engine judged against the exact values).
- `run`: how this run happened (`run_id`, which report.html of the same run shows; command line
  as typed, `repeat_command` with every setting explicit, jobs, the Dask scheduler's address
  (`scheduler`, on a cluster only), timing, versions); differs between reruns. Its timing is
  the phases' (`seconds`, `check_seconds`...) and the whole command's, what the user waited for,
  start-up and imports included (`command_wall_seconds` since the process started,
  `command_cpu_seconds` of it and its workers: `gradcheck.command_clock`).
- `totals`, `ops` (per op, over the evidence about it, `records.aggregate`: graphs,
  failures, `elsewhere` (graphs that used it but are another op's evidence), the largest of each
  error metric `max_*`, its median `p50_*` and 99th percentile `p99_*` over the graphs, failing
  graph indices, decade histograms of each metric), `conventions` and `passed` (the verdict
  under them), `findings` (the distinct problems, bugs first, then most graphs: kind, tier, ops
  of the minimal graph, check, phase, where, title, graphs, graph_indices, problems (in words),
  records (the same problems as records, `parity.problem.Problem.to_dict`), repro (the replay
  command), snippet, graph), `structure` (the structural phase's checks: name, cause,
  status, runs, failures, detail; null when it did not run),
  `unexplained` (the failing graphs no finding explains, `campaign.accounting`: how many, their
  indices, how many for each reason, the smallest in full; null when every failing graph has its
  finding) and `failures` (each failing graph's index, ops, problems, figures and its finding's
  index, or why it is unexplained, each problem in words and as a record (`records`); for the
  shrunk ones also `found_problems` (and `found_records`), `excess`, snippets
  and graph JSON as found and as shrunk, and the corpus file; any other graph is
  `gradcheck.campaign.campaign_checker(Settings(...)).graph(index)`).
Floats are JSON numbers, except non-finite ones: the strings "nan", "inf" and "-inf".
Everything outside `run` is a pure function of `settings` and the engine.
"""

from __future__ import annotations

import json
import math
import platform
import shlex
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from gradcheck.atomic import write_text
from gradcheck.campaign.accounting import shrink_budget, shrink_time_cap, unexplained
from gradcheck.campaign.earlier_schema import EARLIER_SCHEMA_VERSION
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.mistake_match import local_lines
from gradcheck.campaign.records import (
    HIST_BINS,
    HIST_HI,
    HIST_LO,
    METRICS,
    QUANTILES,
    CampaignResult,
    GraphRecord,
    failure_snippet,
)
from gradcheck.campaign.tiers import TIERS
from gradcheck.command_clock import command_times
from gradcheck.launcher import command_line

SCHEMA_VERSION = 2


class ReportError(ValueError):
    """A report file that is not a gradcheck report of a schema this version reads."""


def encode_float(x: float | None) -> float | str | None:
    """A float as JSON allows it: non-finite values become "nan", "inf" or "-inf"."""
    if x is None or math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def json_safe(value: Any) -> Any:
    """`value` with every non-finite float encoded as `encode_float` does (edge-value findings
    carry inputs such as inf and nan)."""
    if isinstance(value, float):
        return encode_float(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def decode_float(x: float | str | None) -> float | None:
    """The inverse of `encode_float`."""
    if x is None or isinstance(x, (int, float)):
        return None if x is None else float(x)
    if x in ("nan", "inf", "-inf"):
        return float(x)
    raise ReportError(f"expected a number, null, 'nan', 'inf' or '-inf', got {x!r}")


def histogram_labels() -> list[str]:
    """Labels of the decade histogram bins, in bin order."""
    decades = [f"[1e{d}, 1e{d + 1})" for d in range(HIST_LO, HIST_HI)]
    decades[0] = f"(0, 1e{HIST_LO + 1})"
    decades[-1] = f">= 1e{HIST_HI - 1}"
    return ["0", *decades, "non-finite"]


def _figures(figures: dict[str, float | None]) -> dict[str, float | str | None]:
    return {m: encode_float(figures.get(m)) for m in METRICS}


def _failure(record: GraphRecord, finding_of: dict[int, int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": record.index,
        "ops": list(record.ops),
        "problems": [str(p) for p in record.problems],
        "records": [p.to_dict() for p in record.problems],
        "figures": _figures(record.figures),
    }
    if finding_of and record.index in finding_of:
        out["finding"] = finding_of[record.index]
    elif record.failure is not None and record.failure.unexplained:
        out["unexplained"] = record.failure.unexplained
    if record.failure is not None and record.failure.shrunk_graph is not None:
        f = asdict(record.failure)
        f["snippet"] = failure_snippet(record.failure)
        for accounted in ("finding", "difference", "alone", "unexplained", "shrink_checks", "cut_short"):
            f.pop(accounted)
        f["excess"] = encode_float(f["excess"])
        f.pop("problems")
        out["found_problems"] = [str(p) for p in record.failure.problems]
        out["found_records"] = [p.to_dict() for p in record.failure.problems]
        if f["shrunk_ops"] is not None:
            f["shrunk_ops"] = list(f["shrunk_ops"])
        out.update(f)
    return out


def cut_short(result: CampaignResult) -> dict[str, Any]:
    """What the safety cap in seconds cut short (report.json's `cut_short`)."""
    return {
        "shrinking": {
            "time_cap_seconds": shrink_time_cap(result.settings),
            "graph_indices": list(result.cut_short),
            "why": "shrinking reached its safety cap in seconds before its budget of checks was spent",
        }
    }


def repeat_command(settings: Any) -> str:
    """The command line that repeats a campaign with every setting explicit (defaults may change),
    started as this gradcheck was (`gradcheck.launcher`)."""
    argv = ["run", "--engine", settings.engine, "--graphs", str(settings.graphs)]
    argv += ["--seed", str(settings.seed), "--points", str(settings.points), "--jobs", str(settings.jobs)]
    if settings.tensor:
        argv.append("--tensor")
    if settings.dtype != "float64":
        argv += ["--dtype", settings.dtype]
    if getattr(settings, "reference", "torch") != "torch":
        argv += ["--reference", settings.reference]
    if settings.ops:
        argv += ["--ops", ",".join(settings.ops)]
    argv += ["--shrink-budget", str(shrink_budget(settings))]
    if getattr(settings, "conventions", "torch") != "torch":
        argv += ["--conventions", settings.conventions]
    if not getattr(settings, "isolation", True):
        argv.append("--no-isolation")
    if not getattr(settings, "structure", True):
        argv.append("--no-structure")
    return command_line(*argv)


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in ("minigrad", "numpy", "torch"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


def build_report(
    result: CampaignResult,
    command: list[str] | None = None,
    extra: dict | None = None,
    run_id: str | None = None,
) -> dict:
    """The report dictionary of a finished campaign (see the module docstring for the layout);
    `run_id`: the run's id, which report.html of the same run shows too."""
    s = result.settings
    failures = result.failures
    finding_of = {i: k for k, f in enumerate(result.findings) for i in f.graph_indices}
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": "gradcheck",
        **({"incomplete": result.incomplete} if result.incomplete is not None else {}),
        **({"cut_short": cut_short(result)} if result.cut_short else {}),
        "settings": {
            "engine": s.engine,
            "graphs": s.graphs,
            "seed": s.seed,
            "ops": list(s.ops) if s.ops else None,
            "tensor": s.tensor,
            "points": s.points,
            "shrink_budget": shrink_budget(s),
            **({"dtype": s.dtype} if s.dtype != "float64" else {}),
            **({"reference": s.reference} if s.reference != "torch" else {}),
            **({"left_out": list(s.left_out)} if s.left_out else {}),
            **({"accumulation": s.accumulation} if s.accumulation else {}),
            **({"max_paths": s.max_paths} if s.max_paths else {}),
        },
        "totals": {
            "graphs": len(result.records),
            "passed": len(result.records) - len(failures),
            "failed": len(failures),
            "ops_covered": len(result.ops),
            "points_checked": sum(r.points_checked for r in result.records),
            "points_skipped": sum(r.points_skipped for r in result.records),
            "points_settled": sum(r.points_settled for r in result.records),
            "points_any_order": sum(r.points_any_order for r in result.records),
            "findings": len(result.findings),
            "failing_findings": len(result.failing_findings),
            "tiers": {t: n for t in TIERS if (n := sum(f.tier == t for f in result.findings))},
            "max": {m: encode_float(_max_over(result, m)) for m in METRICS},
        },
        "metrics": list(METRICS),
        "histogram_bins": histogram_labels(),
        "ops": {
            op: {
                "graphs": st.graphs,
                "failures": st.failures,
                "elsewhere": st.elsewhere,
                **_figures(st.maxima),
                **{
                    f"{name}_{m[4:]}": encode_float(st.quantile(m, q))
                    for m in METRICS
                    for name, q in QUANTILES.items()
                },
                "failing_graphs": st.failing_graphs,
                "histograms": {m: st.histograms.get(m, [0] * HIST_BINS) for m in METRICS},
            }
            for op, st in result.ops.items()
        },
        "conventions": s.conventions,
        "passed": result.passed,
        "findings": [json_safe(_finding(f)) for f in result.findings],
        "structure": result.structure.to_dict() if result.structure is not None else None,
        "unexplained": json_safe(left.to_dict()) if (left := unexplained(failures)) is not None else None,
        "failures": [_failure(r, finding_of) for r in failures],
        "run": {
            "run_id": run_id,
            "command": shlex.join(command) if command else None,
            "repeat_command": repeat_command(s),
            "argv": command,
            "jobs": s.jobs,
            **({"scheduler": s.scheduler} if s.scheduler is not None else {}),
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(result.seconds, 3),
            "check_seconds": round(result.check_seconds, 3),
            "isolation_seconds": round(result.isolation_seconds, 3),
            "structure_seconds": round(result.structure.seconds, 3) if result.structure is not None else None,
            "grouping_seconds": round(result.grouping_seconds, 3),
            "graphs_per_second": round(len(result.records) / result.check_seconds, 1)
            if result.check_seconds > 0
            else None,
            **command_times(),  # what the user waited for: the whole command, start-up included
            "versions": _versions(),
        },
    }
    if extra:
        report.update(extra)
    return report


def _max_over(result: CampaignResult, metric: str) -> float | None:
    best: float | None = None
    for st in result.ops.values():
        v = st.maxima.get(metric)
        if v is not None and (best is None or math.isnan(v) or (not math.isnan(best) and v > best)):
            best = v
    return best


def figures_only(report: dict) -> dict:
    """The part of a report that is a pure function of its settings (drops `run`)."""
    return {k: v for k, v in report.items() if k != "run"}


def report_text(report: dict) -> str:
    """`report` as report.json holds it: indented JSON, strict (no NaN literals)."""
    return json.dumps(report, indent=1, allow_nan=False) + "\n"


def write_report(report: dict, path: Path) -> Path:
    """Write `report` as report.json, atomically; return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, report_text(report))


def load_report(path: Path) -> dict:
    """Read a report.json back, checking it is one and that its schema version is known."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read a report: {exc}") from exc
    if not isinstance(data, dict) or data.get("tool") != "gradcheck":
        raise ReportError(f'{path}: not a gradcheck report (no "tool": "gradcheck")')
    version = data.get("schema_version")
    if version not in (EARLIER_SCHEMA_VERSION, SCHEMA_VERSION):
        raise ReportError(
            f"{path}: schema_version {version!r}, this gradcheck reads {EARLIER_SCHEMA_VERSION} "
            f"and {SCHEMA_VERSION}"
        )
    for key in ("settings", "totals", "ops", "failures", "run"):
        if key not in data:
            raise ReportError(f"{path}: missing the {key!r} section")
    return data


def _finding(f: Finding) -> dict[str, Any]:
    """A finding as report.json writes it, with its gradient problems as local derivatives (the
    cotangent divided out) where its graph is one op (`mistake_match.local_lines`)."""
    local = local_lines(f, len(f.problems))
    return {**f.to_dict(), **({"local_derivatives": local} if local else {})}
