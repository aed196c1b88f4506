"""The command line: `gradcheck run | gate | replay | corpus add` (also `python -m gradcheck ...`).

One module per command (`run`, `gate`, `replay`, `corpus`), each with its options and what it
does; the parser in `parser`, the options several commands share in `arguments`, and everything
drawn on the console (rich) in `console`. The campaign itself is `gradcheck.campaign.phases`.

Exit status (`EXIT_STATUSES`, also in each command's --help): 0 every check passed; 1 some
finding fails (or a replayed graph still fails, or the gate finds something worse); 2 bad input
or an unusable environment (an unknown engine or op, an engine that cannot be imported or ends
its process while loading, a malformed corpus file or baseline, a file that cannot be read or
written: a full disk, a directory or a read-only path where a file is wanted); 130 interrupted
(SIGINT, Ctrl-C); 143 terminated (SIGTERM). Each ends with one line saying why, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import gradcheck.command_clock  # noqa: F401 - first: where /proc is missing, its import is the start
from gradcheck.interrupts import INTERRUPTED, TERMINATED, Terminated, terminable

# The commands that run an engine: a worker process starts for them before anything else.
ENGINE_COMMANDS = ("run", "gate", "replay")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status. Ctrl-C and SIGTERM end it with one line, 130 or 143."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with terminable():
            args = build_parser().parse_args(argv)  # --help and bad arguments end here, importing no harness
            if _runs_an_engine(argv):
                from gradcheck.campaign.supervisor import prestart

                prestart()  # its start-up (numpy, torch, the engine: seconds) overlaps ours
            return _command(args, argv)
    except KeyboardInterrupt:
        print("gradcheck: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Terminated:
        print("gradcheck: terminated", file=sys.stderr)
        return TERMINATED


def _runs_an_engine(argv: list[str]) -> bool:
    """Whether the command will start a worker (not for --help, nor unsupervised)."""
    if os.environ.get("GRADCHECK_UNSUPERVISED") == "1":  # gradcheck.cli.arguments.engine_workers
        return False
    return bool(argv[:1]) and argv[0] in ENGINE_COMMANDS and not {"-h", "--help"} & set(argv)


def _command(args: Any, argv: list[str]) -> int:
    """Run the parsed command; bad input and failed reads or writes are one line and exit 2."""
    from rich.console import Console

    from gradcheck.atomic import WriteError
    from gradcheck.campaign.settings import CampaignError
    from gradcheck.cli import corpus, gate, replay, run
    from gradcheck.parity.wording import printable

    console = Console(highlight=False)
    try:
        if args.command == "replay":
            return replay.command(args, console)
        if args.command == "corpus":
            return corpus.command(args, console)
        if args.command == "gate":
            return gate.command(args, console)
        return run.command(args, argv, console)
    except (CampaignError, WriteError) as exc:
        message = str(exc)  # unwrapped: logs and tests grep it
    except OSError as exc:  # a read or write the command did not expect to fail
        message = f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc.strerror or exc)
    print(f"gradcheck: error: {printable(message)}", file=sys.stderr)
    return 2


def build_parser() -> Any:
    """The command line's parser (`gradcheck.cli.parser`)."""
    from gradcheck.cli.parser import build_parser as build

    return build()


__all__ = ["build_parser", "main"]
