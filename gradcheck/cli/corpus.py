"""`gradcheck corpus add FILE...`: validated graph files into a regression corpus, on purpose."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.text import Text

from gradcheck.campaign.corpus import add_to_corpus
from gradcheck.cli.arguments import Subparser

# `corpus add` copies findings into the regression corpus the parity suite replays.
SUITE_CORPUS = Path("parity_tests/corpus")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The `corpus` subcommand and its `add`."""
    corpus_cmd = sub.add_parser("corpus", help="manage the regression corpus the parity suite replays")
    corpus_sub = corpus_cmd.add_subparsers(dest="corpus_command", required=True, parser_class=Subparser)
    add = corpus_sub.add_parser(
        "add",
        help="add graph files (e.g. out/corpus/*.json) to the regression corpus, validated",
        description="Validate each graph file and copy it into the regression corpus (one file per "
        "distinct graph). Nothing is written if any file is malformed.",
    )
    add.add_argument("files", type=Path, nargs="+", help="graph JSON files")
    add.add_argument(
        "--to", type=Path, default=SUITE_CORPUS, help=f"corpus directory (default {SUITE_CORPUS})"
    )


def command(args: argparse.Namespace, console: Console) -> int:
    """`corpus add`; returns the exit status."""
    for target, new in add_to_corpus(list(args.files), args.to):
        console.print(Text(f"{'added' if new else 'already in the corpus'}: {target}"))
    return 0
