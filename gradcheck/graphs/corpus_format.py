"""The regression corpus: failing graphs saved as JSON files (the graph format of `ir.py`) and
replayed by every later run. One naming scheme for every writer: a file per graph and engine."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gradcheck.atomic import write_text
from gradcheck.graphs.corpus_checks import check_graph_data
from gradcheck.graphs.ir import Graph, GraphFormatError

# The parts of a graph that make it the same failure (meta, points and names aside).
_IDENTITY = ("inputs", "nodes", "outputs", "cotangent")


class CorpusFileError(Exception):
    """A corpus file that cannot be read as a graph; the message names the file and the problem."""


def corpus_files(directory: Path) -> list[Path]:
    """The corpus files of `directory`, sorted (none when it does not exist)."""
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


def load(path: Path) -> Graph:
    """The graph in a corpus file, every field checked (`corpus_checks`), or CorpusFileError
    naming the file, the field and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusFileError(f"corpus file {path}: cannot be read: {e}") from e
    try:
        return parse(text)
    except GraphFormatError as e:
        raise CorpusFileError(f"corpus file {path}: {e}") from e


def parse(text: str, non_finite: bool = False) -> Graph:
    """A corpus graph from JSON text: checked field by field, then built (GraphFormatError);
    `non_finite` admits inf and nan inputs (a report's edge-value findings)."""
    data = check_graph_data(text, non_finite)
    try:
        return Graph.from_dict(data)
    except (GraphFormatError, RecursionError) as e:
        raise GraphFormatError(str(e)) from e


def file_name(graph: Mapping[str, Any], engine: str) -> str:
    """A file name fixed by the graph's content and engine, so saving a failure twice writes one file."""
    core = {k: graph[k] for k in _IDENTITY if k in graph}
    digest = hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]
    slug = "".join(c if c.isalnum() else "-" for c in engine).strip("-").lower()
    return f"failure-{slug}-{digest}.json"


def with_meta(graph: Mapping[str, Any], engine: str, found_by: str, problems: list[str]) -> dict[str, Any]:
    """A graph dict carrying who failed on it, how it was found, and what was wrong."""
    data = dict(graph)
    data["meta"] = {**data.get("meta", {}), "engine": engine, "found_by": found_by, "problems": problems}
    return data


def write(graph: Mapping[str, Any], path: Path) -> None:
    """Write a graph dict as a corpus file, atomically (creating its directory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(graph, indent=1) + "\n")


def save(graph: Graph, engine: str, problems: list[str], found_by: str, directory: Path) -> Path:
    """Write a failing graph (one file per distinct graph and engine); returns its path."""
    data = with_meta(graph.to_dict(), engine, found_by, problems)
    path = directory / file_name(data, engine)
    write(data, path)
    return path
