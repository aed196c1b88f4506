"""The command line's parser: `gradcheck run | replay | corpus add | gate`, each command's options
in its own module."""

from __future__ import annotations

import argparse

from gradcheck.cli import corpus, gate, replay, run
from gradcheck.cli.arguments import Parser, Subparser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="gradcheck", description="gradcheck: prove an autograd engine's gradients.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Subparser)
    for command in (run, replay, corpus, gate):
        command.add_parser(sub)
    return parser
