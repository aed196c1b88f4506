"""The shape of ci/baseline.json, checked field by field before any campaign runs.

A baseline that is valid JSON of the wrong shape (a part that is a list, a figure "abc", a
missing key) must stop the gate with one line naming the file and the field, not a traceback
after minutes of campaign.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gradcheck.campaign import CampaignError

SETTINGS_KEYS = ("engine", "graphs", "seed", "tensor", "points")
NON_FINITE = ("nan", "inf", "-inf")  # how report.json writes non-finite figures


class BaselineShapeError(CampaignError):
    """The baseline's field `field` is not what the gate reads there."""

    def __init__(self, path: Path, field: str, expected: str, found: Any) -> None:
        shown = repr(found) if len(repr(found)) <= 60 else repr(found)[:57] + "..."
        super().__init__(
            f"{path}: field {field}: expected {expected}, found {shown}; "
            "fix it or recreate the baseline with --update-baseline"
        )


def check_shape(data: dict, path: Path, figures: Iterable[str]) -> None:
    """Raise BaselineShapeError for the first field of `data` the gate could not read."""
    figures = tuple(figures)
    parts = _get(data, "parts", path)
    _expect(isinstance(parts, dict), path, "parts", "an object of campaign parts", parts)
    for name, part in parts.items():
        where = f"parts.{name}"
        _expect(isinstance(part, dict), path, where, "an object with settings and ops", part)
        settings = _get(part, "settings", path, where)
        _expect(isinstance(settings, dict), path, f"{where}.settings", "an object", settings)
        for key in SETTINGS_KEYS:
            _get(settings, key, path, f"{where}.settings")
        ops = _get(part, "ops", path, where)
        _expect(isinstance(ops, dict), path, f"{where}.ops", "an object of per-op figures", ops)
        for op, entry in ops.items():
            at = f"{where}.ops.{op}"
            _expect(isinstance(entry, dict), path, at, "an object of figures", entry)
            graphs = _get(entry, "graphs", path, at)
            _expect(_is_count(graphs), path, f"{at}.graphs", "a non-negative integer", graphs)
            for metric in figures:
                value = _get(entry, metric, path, at)
                _expect(_is_figure(value), path, f"{at}.{metric}", 'a number, null, "nan" or "inf"', value)


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
