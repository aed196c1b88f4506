"""The command line: `gradcheck run | gate | replay | corpus add` (also `python -m gradcheck ...`).

One module per command (`run`, `gate`, `replay`, `corpus`), each with its options and what it
does; the parser in `parser`, the options several commands share in `arguments`, and everything
drawn on the console (rich) in `console`. The campaign itself is `gradcheck.campaign.phases`.

Exit status: 0 when nothing fails, 1 when some finding fails (or a replayed graph still fails, or
the gate finds something worse), 2 on bad input (an unknown engine or op, a malformed corpus
file or baseline, an unusable --out or --corpus, an engine adapter that raises), 130 when
interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console

from gradcheck.campaign.settings import CampaignError
from gradcheck.cli import corpus, gate, replay, run
from gradcheck.cli.parser import build_parser
from gradcheck.printable import printable


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    console = Console(highlight=False)
    try:
        if args.command == "replay":
            return replay.command(args, console)
        if args.command == "corpus":
            return corpus.command(args, console)
        if args.command == "gate":
            return gate.command(args, console)
        return run.command(args, argv, console)
    except CampaignError as exc:
        # unwrapped: logs and tests grep it
        print(f"gradcheck: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gradcheck: interrupted", file=sys.stderr)
        return 130


__all__ = ["build_parser", "main"]
