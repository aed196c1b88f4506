"""Record what `gradcheck run` reports on a collection of engines, and compare two recordings.

A refactoring of the harness that must not change a verdict is checked by recording before and
after it, at a fixed seed, and comparing: every finding's title, kind, tier and graph count, and
the rest of report.json, normalised (the run section, times and the output directory left out).

    python scripts/report_equivalence.py record DIR [--graphs 300] [--only NAME,...] [--published SRC]
    python scripts/report_equivalence.py compare DIR_BEFORE DIR_AFTER [--ignore KEY,...]

`--published SRC` adds published engines unpacked under SRC (the wheels or sdists of femtograd,
coregrad and mangograd, as `pip download --no-deps` gives them, unpacked): their value classes,
which the harness adapts by inspection (docs/adapters.md). Each engine's campaign runs in a
process of its own (the interpreter running this script), one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TESTING = {
    "broken_engines": [
        "TinyAdapter",
        "AssignGrads",
        "WrongDerivative",
        "OffByMillionth",
        "WrongOrder",
        "SharedOnly",
        "DeepOnly",
        "WrongRsub",
        "WrongRtruediv",
        "ZeroPowerRaises",
        "NaiveTanhSigmoid",
        "UnsummedBroadcast",
        "ScalarBroadcast",
        "HalfPrecisionAccumulation",
        "OverwrittenRepeats",
    ],
    "kind_engines": [
        "ReluTimesTwo",
        "ReluHalfAtZero",
        "TanhFirstOrderOnly",
        "SqrtNanSlope",
        "TanhValueOff",
        "ExpRaises",
    ],
    "cause_engines": [
        "NoRtruediv",
        "ReversedQuotientRtruediv",
        "ReluTwoTanhOff",
        "NaiveZeroPower",
        "MaximumZeroAtTie",
        "MaximumFirstAtTie",
    ],
    "field_engines": [
        "ReciprocalDivision",
        "DivisionOffByAPart",
        "ExpTanh",
        "NodeInData",
        "VectorMatMulCrashes",
        "AmaxTiesDoubled",
    ],
    "fragment_engines": [
        "AbsAdapter",
        "InplaceAbsAdapter",
        "IdOrderedBackwardAdapter",
        "TanhOneMinusTAdapter",
        "MulGradientOffAdapter",
    ],
    "structural_engines": [
        "CorrectAdapter",
        "DoubledSharedAdapter",
        "OverwriteAdapter",
        "LeafZeroGradAdapter",
        "RecursiveSortAdapter",
        "IdOrderAdapter",
    ],
    # SlowRelu is left out: whether a graph of it passes the timeout depends on the machine's load
    "hostile_engines": [
        "Benign",
        "ExitsInRelu",
        "EndsProcessInRelu",
        "EndsProcessInReluMisspellsSigmoid",
        "SegfaultsInRelu",
        "HangsInRelu",
        "UnreadableRelu",
    ],
    "triage_engines": [
        "ListsSigmoidItLacks",
        "SumOverOneDimOnly",
        "Atan2PartialsSwapped",
        "TapeGradientsOnly",
    ],
    "surface_engines": ["BeforeKeepdim", "BeforeKeepdimClaimingRelease2", "KeepdimIgnored"],
}
PUBLISHED = {
    "femtograd": "femtograd-0.0.5/femtograd/femtograd.py:value",
    "coregrad": "coregrad/engine.py:Scalar",
    "mangograd": "mangograd/engine.py:Value",
}
ROOT = Path(__file__).resolve().parents[1]


def engines(published: Path | None) -> dict[str, tuple[str, list[str]]]:
    """Each engine's label, its --engine spec and the extra options its campaign takes."""
    found: dict[str, tuple[str, list[str]]] = {
        "minigrad": ("minigrad", []),
        "minigrad-tensor": ("minigrad-tensor", ["--tensor"]),
        "micrograd": ("micrograd", []),
        "planted_value": (str(ROOT / "benchmarks/planted_value.py") + ":Value", []),
    }
    for module, names in TESTING.items():
        for name in names:
            extra = ["--graph-timeout", "3"] if module == "hostile_engines" else []
            found[f"{module}.{name}"] = (f"gradcheck.testing.{module}:{name}", extra)
    if published is not None:
        for label, spec in PUBLISHED.items():
            found[label] = (str(published / spec), [])
    return found


def is_tensor(spec: str) -> bool:
    """Whether an engine's campaign draws tensor graphs (a tensor adapter of the test engines)."""
    if not spec.startswith("gradcheck.testing."):
        return False
    from gradcheck.engines.loading import load_engine

    return bool(load_engine(spec).tensor)


def record(out: Path, graphs: int, only: set[str] | None, published: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for label, (spec, extra) in engines(published).items():
        if only and label not in only:
            continue
        tensor = ["--tensor"] if "--tensor" not in extra and is_tensor(spec) else []
        with tempfile.TemporaryDirectory() as scratch:
            command = [
                sys.executable,
                "-m",
                "gradcheck",
                "run",
                "--engine",
                spec,
                "--graphs",
                str(graphs),
                "--seed",
                "1",
                "--out",
                scratch,
                "--no-save",
                "--shrink-budget",
                "100000",  # generous in checks (and in seconds, for a tree before they were counted)
                "--summary-md",
                str(Path(scratch) / "summary.md"),
                *extra,
                *tensor,
            ]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "benchmarks")])}
            if label == "planted_value":
                env.update(PLANTED_OP="mul", PLANTED_DELTA="0.1")
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
            report_file = Path(scratch) / "report.json"
            if not report_file.exists():
                (out / f"{label}.error").write_text(done.stdout + done.stderr)
                print(f"{label}: exit {done.returncode}, no report", flush=True)
                continue
            report = normalise(json.loads(report_file.read_text()), scratch)
            summary = scrub(Path(scratch, "summary.md").read_text(), scratch)
            (out / f"{label}.json").write_text(json.dumps(report, indent=1, sort_keys=True))
            (out / f"{label}.md").write_text(summary)
            findings = report.get("findings", [])
            print(f"{label}: exit {done.returncode}, {len(findings)} finding(s)", flush=True)


_TIMES = re.compile(r"\b\d+(?:\.\d+)? ?(?:s|seconds|ms)\b")
_ADDRESSES = re.compile(r"\bat 0x[0-9a-f]+")  # an object's repr: another address every run


def scrub(text: str, scratch: str) -> str:
    """Text with the output directory, the checkout recorded from and the times in it replaced by
    placeholders (two checkouts of two commits record the same text)."""
    text = _ADDRESSES.sub("at 0x<address>", text.replace(scratch, "<out>").replace(str(ROOT), "<tree>"))
    return _TIMES.sub("<time>", text)


def normalise(value: Any, scratch: str) -> Any:
    """A report without its run section and times, its output directory a placeholder."""
    if isinstance(value, dict):
        return {
            k: normalise(v, scratch)
            for k, v in value.items()
            if k != "run" and "seconds" not in k and k not in ("timings", "graphs_per_second")
        }
    if isinstance(value, list):
        return [normalise(v, scratch) for v in value]
    if isinstance(value, str):
        return scrub(value, scratch)
    return value


def drop(value: Any, ignore: set[str]) -> Any:
    """A report without the keys `ignore` names, object addresses made placeholders (recordings
    made before the script scrubbed them)."""
    if isinstance(value, dict):
        return {k: drop(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [drop(v, ignore) for v in value]
    if isinstance(value, str):
        return _ADDRESSES.sub("at 0x<address>", value)
    return value


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two normalised reports differ, as paths with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                found.append(f"{path}.{k}: only in {'after' if k in b else 'before'}")
            else:
                found += differences(a[k], b[k], f"{path}.{k}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:200]!r} != {str(b)[:200]!r}"]


def compare(before: Path, after: Path, ignore: set[str]) -> int:
    """Prints each engine's findings (title, tier, graphs) and whether it is unchanged; 1 if any differs."""
    changed = 0
    for file in sorted(before.glob("*.json")):
        other = after / file.name
        if not other.exists():
            print(f"{file.stem}: missing after")
            changed += 1
            continue
        a, b = drop(json.loads(file.read_text()), ignore), drop(json.loads(other.read_text()), ignore)
        diffs = differences(a, b)
        md_same = _ADDRESSES.sub("", file.with_suffix(".md").read_text()) == _ADDRESSES.sub(
            "", other.with_suffix(".md").read_text()
        )
        tiers: dict[str, int] = {}
        for f in b.get("findings", []):
            tiers[f.get("tier", "?")] = tiers.get(f.get("tier", "?"), 0) + 1
        status = "identical" if not diffs and md_same else f"{len(diffs)} difference(s)"
        if not md_same:
            status += ", summary.md differs"
        print(f"{file.stem}: {len(b.get('findings', []))} finding(s) {tiers}: {status}")
        for d in diffs[:10]:
            print(f"    {d}")
        changed += bool(diffs) or not md_same
    print(f"{changed} engine(s) changed")
    return 1 if changed else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--graphs", type=int, default=300)
    rec.add_argument("--only", default=None, help="comma-separated labels")
    rec.add_argument("--published", type=Path, default=None, help="where the published engines are unpacked")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    cmp.add_argument("--ignore", default="schema_version", help="report keys left out of the comparison")
    args = parser.parse_args()
    if args.command == "record":
        only = set(args.only.split(",")) if args.only else None
        record(args.out, args.graphs, only, args.published)
        return 0
    return compare(args.before, args.after, set(args.ignore.split(",")))


if __name__ == "__main__":
    sys.exit(main())
