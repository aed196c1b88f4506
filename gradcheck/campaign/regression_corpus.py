"""The campaign's side of the regression corpus: read it whole before a run, add shrunk failures after."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcheck.campaign.records import CampaignResult
from gradcheck.campaign.settings import CampaignError
from gradcheck.graphs import corpus_format
from gradcheck.graphs.ir import Graph, GraphFormatError
from gradcheck.parity.problem import Problem


@dataclass
class Corpus:
    """A directory of graph JSON files, every one of which parsed (see `open_corpus`)."""

    directory: Path
    files: dict[str, Graph | dict]  # file name -> Graph (or the graph dict saved this run)


def open_corpus(directory: Path) -> Corpus:
    """Read and validate every *.json graph in `directory` (missing: empty corpus).

    A malformed file is bad input: CampaignError names each such file and its problem, and
    nothing is written, so no entry is lost or skipped silently.
    """
    directory = Path(directory)
    files: dict[str, Graph | dict] = {}
    problems: list[str] = []
    if directory.exists() and not directory.is_dir():
        raise CampaignError(f"corpus {directory}: not a directory")
    for path in corpus_format.corpus_files(directory):
        try:
            files[path.name] = corpus_format.parse(path.read_text(encoding="utf-8"))
        except (GraphFormatError, OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: {exc}")
    if problems:
        raise CampaignError(
            f"the regression corpus has {len(problems)} malformed file(s); fix or remove them "
            "(nothing was run or written): " + "; ".join(problems)
        )
    return Corpus(directory, files)


def save_failures(result: CampaignResult, opened: Corpus) -> CampaignResult:
    """Write each shrunk failure to the corpus (one file per distinct graph); note the file on its record."""
    records = []
    for record in result.records:
        f = record.failure
        if record.passed or f is None or f.shrunk_graph is None:
            records.append(record)  # graphs explained without shrinking are in the report, not saved
            continue
        found_by = f"gradcheck run --seed {result.settings.seed}, graph {record.index}"
        path = _save(opened, f.shrunk_graph, result.settings.engine, found_by, record.problems)
        records.append(dataclasses.replace(record, failure=dataclasses.replace(f, corpus_file=str(path))))
    return dataclasses.replace(result, records=records)


def check_corpus_directory(directory: Path) -> None:
    """Fail before a campaign (CampaignError) when findings could not be saved into `directory`.

    Probes by creating it and a temporary file in it; what the probe created is removed again,
    so a run without findings leaves no trace.
    """
    directory = Path(directory)
    created = [p for p in (directory, *directory.parents) if not p.exists()]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise CampaignError(f"cannot save findings to --corpus {directory}: {exc}") from None
    finally:
        for path in created:  # deepest first
            with contextlib.suppress(OSError):
                path.rmdir()


def save_findings(result: CampaignResult, opened: Corpus) -> list[Path]:
    """Save each finding no saved shrunk graph stands for (e.g. one the isolation pass found).

    Edge-value findings are not saved: their inputs (inf, nan, 1e300) are outside what a corpus
    file may hold, and the edge phase checks them again on every run anyway. Nor are the
    structural phase's: backward twice or a recursion limit is no graph a corpus replays, and the
    phase runs again on every campaign.
    """
    saved_indices = {r.index for r in result.records if r.failure is not None and r.failure.corpus_file}
    paths = []
    for finding in result.findings:
        if finding.phase in ("edges", "structure") or saved_indices & set(finding.graph_indices):
            continue
        found_by = f"gradcheck run --seed {result.settings.seed}, {finding.phase}: {finding.title}"
        paths.append(_save(opened, finding.graph, result.settings.engine, found_by, finding.problems))
    return paths


def _save(
    opened: Corpus, graph: Mapping[str, Any], engine: str, found_by: str, problems: Sequence[Problem]
) -> Path:
    """Write a graph with its meta into the corpus once (one file per distinct graph); its path."""
    data = corpus_format.with_meta(
        graph, engine=engine, found_by=found_by, problems=[str(p) for p in problems]
    )
    name = corpus_format.file_name(data, engine)
    if name not in opened.files:
        corpus_format.write(data, opened.directory / name)
        opened.files[name] = data
    return opened.directory / name


def add_to_corpus(files: list[Path], directory: Path, create: bool = False) -> list[tuple[Path, bool]]:
    """Copy validated graph files into the regression corpus `directory` under corpus file names.

    Every file is checked first; if any is malformed nothing is written (CampaignError naming it).
    A missing `directory` is an error (a mistyped path), or, with `create`, made once the files
    are valid. Returns (destination, newly added) per file.
    """
    if directory.exists() and not directory.is_dir():
        raise CampaignError(f"corpus directory {directory} is not a directory")
    if not directory.exists() and not create:
        raise CampaignError(
            f"corpus directory {directory} does not exist; pass an existing directory to --to, or "
            "leave --to out to add to ./corpus"
        )
    graphs = []
    for path in files:
        try:
            graphs.append(corpus_format.load(path))
        except corpus_format.CorpusFileError as exc:
            raise CampaignError(f"{exc} (nothing was added)") from None
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CampaignError(f"cannot make the corpus directory {directory}: {exc}") from None
    added = []
    for graph in graphs:
        data = graph.to_dict()
        name = corpus_format.file_name(data, str(graph.meta.get("engine", "any")))
        target = directory / name
        new = not target.exists()
        if new:
            corpus_format.write(data, target)
        added.append((target, new))
    return added
