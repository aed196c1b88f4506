"""Reading a JSON file a user hands the harness (a gate baseline, a report.json to replay) within
limits: at most `max_bytes` (a device or a huge file is not read to the end), nested at most
`max_depth` levels (a file nested 100,000 deep is refused in one line, not a RecursionError), as
graph files are (`gradcheck.graphs.corpus_checks`). Every failure is a CampaignError naming the
file and what is wrong with it: exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gradcheck.campaign.settings import CampaignError

MAX_BYTES = 256 * 2**20
MAX_DEPTH = 64


def read_json(path: Path, what: str, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in `path` (`what` it should be, for messages); FileNotFoundError passes
    through (a missing file may mean something of its own to the caller)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CampaignError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise CampaignError(f"{path}: the {what} is larger than {max_bytes} bytes; not read")
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise CampaignError(f"{path}: the {what} is nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError as exc:
        raise CampaignError(f"{path}: the {what} is not UTF-8 text: {exc}") from None
    except ValueError as exc:  # JSONDecodeError, and integers past Python's digit limit
        raise CampaignError(f"{path}: the {what} is not valid JSON: {exc}") from None
    if depth(value, max_depth) > max_depth:
        raise CampaignError(f"{path}: the {what} is nested deeper than {max_depth} levels")
    return value


def depth(value: Any, limit: int) -> int:
    """How deep `value` nests lists and objects (a scalar is 0), counted without recursion and
    only up to `limit` + 1."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            level += 1
            deepest = max(deepest, level)
            if level > limit:
                return level
            stack.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
    return deepest
