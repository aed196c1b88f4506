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

import sys
from collections.abc import Sequence

from rich.console import Console

from gradcheck.atomic import WriteError
from gradcheck.campaign.settings import CampaignError
from gradcheck.cli import corpus, gate, replay, run
from gradcheck.cli.parser import build_parser
from gradcheck.interrupts import INTERRUPTED, TERMINATED, Terminated, terminable
from gradcheck.printable import printable


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        with terminable():
            if args.command == "replay":
                return replay.command(args, console)
            if args.command == "corpus":
                return corpus.command(args, console)
            if args.command == "gate":
                return gate.command(args, console)
            return run.command(args, argv, console)
    except CampaignError as exc:
        return _error(str(exc))  # unwrapped: logs and tests grep it
    except WriteError as exc:
        return _error(str(exc))
    except OSError as exc:  # a read or write the command did not expect to fail
        where = f"{exc.filename}: " if exc.filename else ""
        return _error(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        print("\ngradcheck: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Terminated:
        print("\ngradcheck: terminated", file=sys.stderr)
        return TERMINATED


def _error(message: str) -> int:
    print(f"gradcheck: error: {printable(message)}", file=sys.stderr)
    return 2


__all__ = ["build_parser", "main"]
