"""The regression corpus: every failing graph is saved as JSON and replayed by every later run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from gradcheck.graph import Graph, GraphFormatError

CORPUS = Path(__file__).parent / "corpus"


class CorpusFileError(Exception):
    """A corpus file that cannot be read as a graph; the message names the file and the problem."""


def corpus_files(directory: Path = CORPUS) -> list[Path]:
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def load(path: Path) -> Graph:
    """The graph in a corpus file, or CorpusFileError naming the file and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusFileError(f"corpus file {path}: cannot be read: {e}") from e
    try:
        return Graph.from_json(text)
    except GraphFormatError as e:
        raise CorpusFileError(f"corpus file {path}: {e}") from e


def save(graph: Graph, engine: str, problems: list[str], found_by: str, directory: Path = CORPUS) -> Path:
    """Write a failing graph (one file per distinct graph and engine); returns its path."""
    data: dict[str, Any] = graph.to_dict()
    core = json.dumps(
        {k: data[k] for k in ("inputs", "nodes", "outputs", "cotangent") if k in data}, sort_keys=True
    )
    digest = hashlib.sha256(core.encode()).hexdigest()[:16]
    slug = "".join(c if c.isalnum() else "-" for c in engine).strip("-").lower()
    data["meta"] = {**data.get("meta", {}), "engine": engine, "found_by": found_by, "problems": problems}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"failure-{slug}-{digest}.json"
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path
