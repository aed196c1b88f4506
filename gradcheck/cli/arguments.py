"""The command line's parsers, option types and the options several commands share.

A parser error exits 2 and says what to do next; a count, a seed or an op list that is wrong
names the value given and what is expected.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gradcheck.campaign.findings import CONVENTIONS
from gradcheck.campaign.settings import CampaignError


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too; say what to do next
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


class Subparser(Parser):
    """A subcommand's parser: it rejects unknown flags itself, so the error shows its own usage."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def positive_int(text: str) -> int:
    """An argparse type: a count of at least 1 (graphs, jobs, points), with the reason when not."""
    return _integer(text, 1, "a positive integer")


def seed_int(text: str) -> int:
    """An argparse type: a seed, any integer from 0."""
    return _integer(text, 0, "a non-negative integer seed")


def _integer(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def op_list(text: str) -> tuple[str, ...]:
    """An argparse type: a comma-separated list of op names."""
    ops = tuple(op.strip() for op in text.split(",") if op.strip())
    if not ops:
        raise argparse.ArgumentTypeError("expected a comma-separated list of op names, e.g. tanh,mul")
    return ops


def conventions_option(parser: argparse.ArgumentParser) -> None:
    """--conventions, shared by `run` and `replay`."""
    parser.add_argument(
        "--conventions",
        choices=CONVENTIONS,
        default="torch",
        help="torch (default): a slope at a kink that is not torch's choice fails; subgradient: "
        "it is a note when it lies between the one-sided derivatives",
    )


def ci_output_options(parser: argparse.ArgumentParser) -> None:
    """--junit-xml and --summary-md, shared by `run` and `gate`."""
    parser.add_argument(
        "--junit-xml", type=Path, default=None, metavar="FILE", help="write a JUnit XML report here"
    )
    parser.add_argument(
        "--summary-md",
        type=Path,
        default=None,
        metavar="FILE",
        help="write a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)",
    )


def check_output_files(*paths: Path | None) -> None:
    """Fail before the campaign, not after it, when an output file's directory does not exist."""
    for path in paths:
        if path is not None and not path.parent.is_dir():
            raise CampaignError(f"cannot write {path}: its directory {path.parent} does not exist")
