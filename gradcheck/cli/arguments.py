"""The command line's parsers, option types and the options several commands share.

A parser error exits 2 and says what to do next; a count, a seed or an op list that is wrong
names the value given and what is expected.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gradcheck.choices import CONVENTIONS, DEFAULT_TIMEOUT, REFERENCES

if TYPE_CHECKING:  # the rest of the campaign is imported when a command runs, not to parse it
    from gradcheck.campaign.cluster import Cluster
    from gradcheck.campaign.pool import Inline
    from gradcheck.campaign.supervisor import Supervisor


def refuse_unknown_engine(name: str | None) -> None:
    """CampaignError (exit 2) for an engine name that is neither built in nor a spec: said at once,
    before a command imports the campaign."""
    from gradcheck.campaign.settings import CampaignError
    from gradcheck.engines.loading import unknown_engine

    unknown = unknown_engine(name) if name else None
    if unknown is not None:
        raise CampaignError(unknown)


def exit_statuses(fails: str, passed: str = "every check passed") -> str:
    """The exit statuses, for a command's --help; `passed` and `fails`: what 0 and 1 mean for it."""
    text = (
        f"Exit status: 0 {passed}; 1 {fails}; 2 bad input or a file that cannot be read "
        "or written (an unknown engine or op, an engine that cannot be imported or ends its process "
        "while loading, a malformed or too deeply nested file, a full disk, a directory or read-only "
        "path where a file is wanted); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM). Every "
        "status but 0 and 1 ends with one line on stderr (gradcheck: error: ..., interrupted, "
        "terminated), never a traceback."
    )
    return textwrap.fill(text, 96) + "\n"


# How --engine is named, for every command that takes one.
ENGINE_HELP = (
    "minigrad | minigrad-tensor | micrograd | torch | jax | jax-tensor | autograd | autograd-tensor | "
    "module:Adapter | path/engine.py:Class, where Class is an adapter or a micrograd-style value "
    "class, inspected to build its adapter"
)


# Where a shared option is added: a command's parser or one of its groups of options (`run`'s).
Options = argparse.ArgumentParser | argparse._ArgumentGroup


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


def check_count(text: str) -> int:
    """An argparse type: a number of candidate checks, 0 or more (a whole number: a budget of
    work; `--shrink-budget` counted seconds before, so a fraction says so)."""
    expected = "a whole number of candidate checks from 0"
    try:
        return _integer(text, 0, expected)
    except argparse.ArgumentTypeError as bad:
        try:
            value = float(text)
            fraction = 0 < value < float("inf") and not value.is_integer()
        except ValueError:
            fraction = False
        if not fraction:
            raise bad from None
        raise argparse.ArgumentTypeError(
            f"expected {expected}, got {text} (the budget is counted in checks of the engine now, "
            "not in seconds)"
        ) from None


def _integer(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """An argparse type: a positive number of seconds (a time limit)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def index_int(text: str) -> int:
    """An argparse type: an index into a list, from 0."""
    return _integer(text, 0, "an index from 0 (0 is the first)")


def op_list(text: str) -> tuple[str, ...]:
    """An argparse type: a comma-separated list of op names."""
    ops = tuple(op.strip() for op in text.split(",") if op.strip())
    if not ops:
        raise argparse.ArgumentTypeError("expected a comma-separated list of op names, e.g. tanh,mul")
    return ops


def conventions_option(parser: Options) -> None:
    """--conventions, shared by `run` and `replay`."""
    parser.add_argument(
        "--conventions",
        choices=CONVENTIONS,
        default="torch",
        help="torch (default): a slope at a kink that is not torch's choice fails; subgradient: "
        "it is a note when it lies between the one-sided derivatives",
    )


def reference_option(parser: Options, default: str | None = "torch") -> None:
    """--reference, shared by `run` and `replay` (`replay`'s default: the report's)."""
    said = "default" if default == "torch" else "default: the report's, else torch"
    parser.add_argument(
        "--reference",
        choices=REFERENCES,
        default=default,
        help=f"what the engine is judged against: torch ({said}): torch.autograd's float64 answers; "
        "exact: the exact values (mpmath, rounded once), each entry allowed the rounding of any "
        "correct evaluation, with torch's answers judged beside the engine's (who is off)",
    )


UNSUPERVISED = "GRADCHECK_UNSUPERVISED"


def engine_workers(jobs: int, timeout: float | None) -> Supervisor | Inline:
    """The watched worker processes a command runs engine code in (at any --jobs): the engine's
    exit, crash or hang is then a finding or one line, never the end of gradcheck. With
    GRADCHECK_UNSUPERVISED=1, this process instead (`Inline`: to step into the engine with a
    debugger; an engine that exits or hangs then takes gradcheck with it). The tests of what the
    commands print swap `Inline` in too."""
    from gradcheck.campaign.pool import Inline
    from gradcheck.campaign.supervisor import Supervisor

    if os.environ.get(UNSUPERVISED) == "1":
        return Inline()
    return Supervisor(jobs, timeout)


@contextlib.contextmanager
def engine_cluster(
    address: str | None, engine: str, workers: Supervisor | Inline, timeout: float | None
) -> Iterator[Cluster | None]:
    """The Dask cluster at `address` (--scheduler), checked to have `engine` on every worker,
    running the random graphs beside `workers` with their quarantine and `timeout`; None
    without --scheduler."""
    from gradcheck.campaign.cluster import Cluster

    if address is None:
        yield None
        return
    with Cluster(address, timeout, getattr(workers, "quarantine", None)) as cluster:
        cluster.check_engine(engine)
        yield cluster


def graph_timeout_option(parser: Options) -> None:
    """--graph-timeout, shared by `run` and `gate`."""
    parser.add_argument(
        "--graph-timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"the longest one graph (or case) may run in the engine before it is a timeout finding, "
        f"not counting time spent waiting for a CPU on a busy machine (default {DEFAULT_TIMEOUT:g})",
    )


def ci_output_options(parser: Options) -> None:
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
    """Fail before the campaign, not after it, when an output file cannot be written: its
    directory is missing or not writable (the file is written beside it, then renamed), or the
    path is a directory or a file that is not writable."""
    from gradcheck.campaign.outputs import check_free_space
    from gradcheck.campaign.settings import CampaignError

    for path in paths:
        if path is None:
            continue
        parent = path.parent
        if not parent.is_dir():
            raise CampaignError(f"cannot write {path}: its directory {parent} does not exist")
        if path.is_dir():
            raise CampaignError(f"cannot write {path}: it is a directory")
        if path.exists() and not os.access(path, os.W_OK):
            raise CampaignError(f"cannot write {path}: permission denied")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CampaignError(f"cannot write {path}: its directory {parent} is not writable")
        check_free_space(parent, "the directory of")
