"""The gate's baseline file: per campaign part, its settings, per-op figures and accepted findings.

Layout (schema_version 2):
- `factor`, `floors`: the thresholds of the gradcheck that wrote it (for the reader; the gate
  applies its own);
- `parts`: one object per campaign part ("scalar", "tensor", "tensor-float32"), each with
  `settings` (engine, graphs, seed, tensor, points, dtype: what determines the figures), `totals`,
  `ops` (per op: graphs, failures, failing_graphs and the figures of report.json), `findings`
  (the failing findings present when it was recorded: signature, variant (the form of the op its
  title names; an entry without it is matched on its signature alone), tier, title, graphs) and `surface`
  (the registry release that recorded it, the ops its campaign drew from, some perhaps never
  drawn, and the attribute variants of those ops). A part without `surface` was recorded
  before baselines said it, by registry release 2 (`LEGACY_RELEASE`): it gates that release's
  ops and variants.

It is written by `gradcheck gate --update-baseline` and checked field by field before any
campaign runs: a baseline of the wrong shape (a part that is a list, a figure "abc", a missing
key) stops the gate with one line naming the file and the field, not a traceback after minutes
of campaign.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gradcheck.atomic import write_text
from gradcheck.campaign.json_input import read_json
from gradcheck.campaign.settings import CampaignError
from gradcheck.graphs.surface import of_ops, release_ops, release_variants

SCHEMA_VERSION = 2
SETTINGS_KEYS = ("engine", "graphs", "seed", "tensor", "points", "dtype")
DTYPES = ("float64", "float32")
NON_FINITE = ("nan", "inf", "-inf")  # how report.json writes non-finite figures
MAX_BYTES = 32 * 2**20  # a baseline holds per-op figures and findings: a few hundred KB
# The registry release current when baselines began to record their surface (26 Nov 2026): a
# part without `surface` was recorded by it.
LEGACY_RELEASE = 2


class BaselineShapeError(CampaignError):
    """The baseline's field `field` is not what the gate reads there."""

    def __init__(self, path: Path, field: str, expected: str, found: Any) -> None:
        shown = repr(found) if len(repr(found)) <= 60 else repr(found)[:57] + "..."
        super().__init__(
            f"{path}: field {field}: expected {expected}, found {shown}; "
            "fix it or recreate the baseline with --update-baseline"
        )


def load_baseline(path: Path, figures: Iterable[str]) -> dict:
    """The baseline at `path`, checked to hold every field the gate reads (`figures` per op)."""
    try:
        data = read_json(path, "baseline", max_bytes=MAX_BYTES)  # size and nesting limited
    except FileNotFoundError:
        raise CampaignError(f"{path}: no baseline yet; create it with --update-baseline") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        raise CampaignError(
            f"{path}: not a gate baseline of schema_version {SCHEMA_VERSION} (found {found!r}); "
            "recreate it with --update-baseline"
        )
    check_shape(data, path, figures)
    return data


def write_baseline(path: Path, data: dict) -> None:
    """Write `data` sorted and indented, so that a regenerated baseline diffs line by line."""
    write_text(path, json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n")


def check_shape(data: dict, path: Path, figures: Iterable[str]) -> None:
    """Raise BaselineShapeError for the first field of `data` the gate could not read."""
    figures = tuple(figures)
    parts = _get(data, "parts", path)
    _expect(isinstance(parts, dict) and parts, path, "parts", "a non-empty object of campaign parts", parts)
    for name, part in parts.items():
        where = f"parts.{name}"
        _expect(isinstance(part, dict), path, where, "an object with settings, ops and findings", part)
        _check_settings(_get(part, "settings", path, where), path, f"{where}.settings")
        ops = _get(part, "ops", path, where)
        _expect(isinstance(ops, dict), path, f"{where}.ops", "an object of per-op figures", ops)
        for op, entry in ops.items():
            at = f"{where}.ops.{op}"
            _expect(isinstance(entry, dict), path, at, "an object of figures", entry)
            for count in ("graphs", "failures"):
                value = _get(entry, count, path, at)
                _expect(_is_count(value), path, f"{at}.{count}", "a non-negative integer", value)
            for metric in figures:
                value = _get(entry, metric, path, at)
                _expect(_is_figure(value), path, f"{at}.{metric}", 'a number, null, "nan" or "inf"', value)
        findings = _get(part, "findings", path, where)
        _expect(isinstance(findings, list), path, f"{where}.findings", "a list of findings", findings)
        for i, finding in enumerate(findings):
            at = f"{where}.findings[{i}]"
            _expect(isinstance(finding, dict), path, at, "an object with signature and title", finding)
            signature = _get(finding, "signature", path, at)
            _expect(isinstance(signature, list) and signature, path, f"{at}.signature", "a list", signature)
            title = _get(finding, "title", path, at)
            _expect(isinstance(title, str), path, f"{at}.title", "a string", title)
        if "surface" in part:
            surface = part["surface"]
            _expect(isinstance(surface, dict), path, f"{where}.surface", "an object with variants", surface)
            for key in ("variants", "ops") if "ops" in surface else ("variants",):
                names = _get(surface, key, path, f"{where}.surface")
                _expect(
                    isinstance(names, list) and all(isinstance(v, str) for v in names),
                    path,
                    f"{where}.surface.{key}",
                    f"a list of {key[:-1]} names",
                    names,
                )


def recorded_ops(part: dict, ops_now: Iterable[str]) -> frozenset[str]:
    """The ops a baseline part's campaign drew from (see the module docstring); of `ops_now`,
    those of release 2 or before for a part that records no surface."""
    surface = part.get("surface")
    if surface is None or "ops" not in surface:
        return frozenset(release_ops(LEGACY_RELEASE)) & frozenset(ops_now)
    return frozenset(surface["ops"])


def recorded_variants(part: dict) -> frozenset[str]:
    """The attribute variants a baseline part was recorded with (see the module docstring)."""
    surface = part.get("surface")
    if surface is None:
        return of_ops(release_variants(LEGACY_RELEASE), part["ops"])
    return frozenset(surface["variants"])


def _check_settings(settings: Any, path: Path, where: str) -> None:
    _expect(isinstance(settings, dict), path, where, "an object", settings)
    for key in SETTINGS_KEYS:
        _get(settings, key, path, where)
    engine, dtype = settings["engine"], settings["dtype"]
    _expect(isinstance(engine, str) and engine, path, f"{where}.engine", "an engine name", engine)
    _expect(dtype in DTYPES, path, f"{where}.dtype", f"one of {DTYPES}", dtype)
    _expect(
        isinstance(settings["tensor"], bool), path, f"{where}.tensor", "true or false", settings["tensor"]
    )
    for key in ("graphs", "points"):
        value = settings[key]
        _expect(_is_count(value) and value > 0, path, f"{where}.{key}", "a positive integer", value)
    _expect(_is_count(settings["seed"]), path, f"{where}.seed", "a non-negative integer", settings["seed"])


def _get(obj: dict, key: str, path: Path, parent: str = "") -> Any:
    if key not in obj:
        raise BaselineShapeError(path, f"{parent}.{key}" if parent else key, "a value", "nothing")
    return obj[key]


def _expect(ok: bool, path: Path, field: str, expected: str, found: Any) -> None:
    if not ok:
        raise BaselineShapeError(path, field, expected, found)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_figure(value: Any) -> bool:
    if value is None or value in NON_FINITE:
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
