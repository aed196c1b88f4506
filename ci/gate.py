"""This repository's gradient-regression gate: `gradcheck gate` over minigrad's three parts.

    python -m ci.gate                       # compare with ci/baseline.json; exit 1 on a regression
    python -m ci.gate --update-baseline     # rewrite the baseline on purpose (review the diff)
    python path/to/ci/gate.py               # the same from any directory

The module form runs from the repository root (where `ci` is importable); the script form runs
from anywhere and imports the checkout it belongs to. One baseline holds three parts: scalar
graphs on `minigrad`, tensor graphs on `minigrad-tensor`, and tensor graphs in float32 (each
with `gradcheck gate`'s fixed graph count and seed). minigrad has no accepted finding: the
baseline cannot be recorded while any graph fails. Exit status and thresholds: see
`gradcheck.campaign.regression_gate`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as `python path/to/ci/gate.py`: import this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from gradcheck.campaign.regression_gate import Part, part_for
from gradcheck.campaign.settings import CampaignError
from gradcheck.cli.arguments import ci_output_options, positive_int
from gradcheck.cli.gate import run_parts_gate
from gradcheck.parity.wording import printable

BASELINE = Path(__file__).with_name("baseline.json")


def parts(graphs: int | None = None, tensor_graphs: int | None = None) -> list[Part]:
    """The gate's parts: minigrad's scalar engine, its tensor engine in float64 and in float32."""
    return [
        part_for("minigrad", graphs=graphs),
        part_for("minigrad-tensor", tensor=True, graphs=tensor_graphs),
        part_for("minigrad-tensor", tensor=True, dtype="float32", graphs=tensor_graphs),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ci.gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, default=BASELINE, help=f"baseline file (default {BASELINE})")
    parser.add_argument("--update-baseline", action="store_true", help="rewrite the baseline on purpose")
    parser.add_argument(
        "--jobs", type=positive_int, default=2, help="worker processes (default 2, at most the CPUs)"
    )
    parser.add_argument(
        "--graphs", type=positive_int, default=None, help="scalar graphs instead of the fixed count"
    )
    parser.add_argument(
        "--tensor-graphs", type=positive_int, default=None, help="tensor graphs instead of the fixed counts"
    )
    ci_output_options(parser)
    args = parser.parse_args(argv)
    try:
        return run_parts_gate(
            parts(args.graphs, args.tensor_graphs),
            args.baseline,
            args.update_baseline,
            args.jobs,
            Console(highlight=False),
            accept_findings=False,
            junit_xml=args.junit_xml,
            summary_md=args.summary_md,
        )
    except CampaignError as exc:
        print(f"gate: error: {printable(str(exc))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
