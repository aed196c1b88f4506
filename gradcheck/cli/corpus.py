"""`gradcheck corpus add FILE...`: validated graph files into a regression corpus, on purpose."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from gradcheck.cli.arguments import Subparser, exit_statuses

if TYPE_CHECKING:
    from rich.console import Console

# Where `corpus add` writes without --to: ./corpus (made when missing), the directory
# `pytest --pyargs gradcheck.suite --gradcheck-corpus corpus` replays.
DEFAULT_CORPUS = Path("corpus")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The `corpus` subcommand and its `add`."""
    corpus_cmd = sub.add_parser("corpus", help="manage a regression corpus the parity suite replays")
    corpus_sub = corpus_cmd.add_subparsers(dest="corpus_command", required=True, parser_class=Subparser)
    add = corpus_sub.add_parser(
        "add",
        help="add graph files (e.g. out/corpus/*.json) to a regression corpus, validated",
        description="Validate each graph file and copy it into a regression corpus directory (one "
        "file per distinct graph): --to DIR, or ./corpus in the current directory. Nothing is written "
        "if any file is malformed.",
        epilog=exit_statuses("is not used (a malformed file: 2, nothing written)", "every file added"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("files", type=Path, nargs="+", help="graph JSON files")
    add.add_argument(
        "--to",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"an existing corpus directory (default: ./{DEFAULT_CORPUS} in the current directory, made "
        "when missing); the suite replays it with pytest --pyargs gradcheck.suite --gradcheck-corpus DIR",
    )


def command(args: argparse.Namespace, console: Console) -> int:
    """`corpus add`; returns the exit status."""
    from rich.text import Text

    from gradcheck.campaign.regression_corpus import add_to_corpus

    directory = args.to if args.to is not None else DEFAULT_CORPUS
    for target, new in add_to_corpus(list(args.files), directory, create=args.to is None):
        console.print(Text(f"{'added' if new else 'already in the corpus'}: {target}"), soft_wrap=True)
    return 0
