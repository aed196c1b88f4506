"""The campaign's side of the regression corpus: read it whole before a run, add shrunk failures after."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from gradcheck.campaign.settings import CampaignError
from gradcheck.campaign.statistics import CampaignResult
from gradcheck.graphs import corpus
from gradcheck.graphs.ir import Graph, GraphFormatError


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
    for path in corpus.corpus_files(directory):
        try:
            files[path.name] = Graph.from_json(path.read_text(encoding="utf-8"))
        except (GraphFormatError, OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: {exc}")
    if problems:
        raise CampaignError(
            f"the regression corpus has {len(problems)} malformed file(s); fix or remove them "
            "(nothing was run or written):\n  " + "\n  ".join(problems)
        )
    return Corpus(directory, files)


def save_failures(result: CampaignResult, opened: Corpus) -> CampaignResult:
    """Write each shrunk failure to the corpus (one file per distinct graph); note the file on its record."""
    records = []
    for record in result.records:
        f = record.failure
        if record.passed or f is None or f.shrunk_graph is None:
            records.append(record)  # failures past --max-shrink are listed in the report, not saved
            continue
        graph = corpus.with_meta(
            f.shrunk_graph,
            engine=result.settings.engine,
            found_by=f"gradcheck run --seed {result.settings.seed}, graph {record.index}",
            problems=list(record.problems),
        )
        name = corpus.file_name(graph, result.settings.engine)
        path = opened.directory / name
        if name not in opened.files:
            corpus.write(graph, path)
            opened.files[name] = graph
        records.append(dataclasses.replace(record, failure=dataclasses.replace(f, corpus_file=str(path))))
    return dataclasses.replace(result, records=records)
