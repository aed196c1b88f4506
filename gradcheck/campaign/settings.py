"""What a campaign is asked to do: its settings, per-graph seeds, and the error for bad input."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class CampaignError(Exception):
    """Bad input to a campaign (unknown engine or op, an engine that raises): exit status 2."""


@dataclass(frozen=True)
class Settings:
    """Everything that determines a campaign's figures (jobs and chunking do not)."""

    engine: str = "minigrad"
    graphs: int = 1000
    seed: int = 0
    ops: tuple[str, ...] | None = None
    tensor: bool = False
    jobs: int = 1
    # candidate graphs the engine may be asked to check while shrinking the failing graphs no
    # finding explains (None: `default_shrink_budget`): counted work, so the findings are the same
    # at any load of the machine
    shrink_budget: int | None = None
    # a safety cap in seconds on shrinking, not a budget (None: `SHRINK_TIME_CAP`); a campaign
    # that reaches it says so in its report (`CampaignResult.cut_short`)
    shrink_time_cap: float | None = None
    points: int = 4
    conventions: str = "torch"  # "subgradient": a convention at a kink is a note, not a failure
    isolation: bool = True  # run the op-isolation pass before the random graphs
    structure: bool = True  # run the structural phase (gradcheck.campaign.structure) first
    edges: bool = False  # run the edge-value phase after settling (`gradcheck run` and the gate do)
    scheduler: str | None = None  # a Dask scheduler's address: run on its workers instead of --jobs
    dtype: str = "float64"  # "float32": tensor engines computing in float32 (gradcheck.parity.float32)
    # the attribute variants drawn, within those the adapter handles (None: all it handles); the
    # gate keeps a baseline to the ones it was recorded with (gradcheck.graphs.surface)
    variants: tuple[str, ...] | None = None
    # ops the campaign stopped drawing: the adapter's spelling of them failed (an `adapter` finding)
    left_out: tuple[str, ...] = ()
    # how the engine's backward sums, as the structural phase found it (`EngineAdapter.accumulation`;
    # None: as its adapter says); and, for one that follows every path, the most paths a graph
    # may have to be run within the graph timeout (the others count in that finding, not run)
    accumulation: str | None = None
    max_paths: int | None = None
    # what the engine's answers are judged against in every phase that checks graphs (`check_graph`'s
    # `reference`): torch's float64 (or float32) answers, or the exact values ("exact"), torch's
    # answers then judged beside the engine's (`gradcheck.parity.against_exact`)
    reference: str = "torch"

    def describe(self) -> str:
        kind = "tensor" if self.tensor else "scalar"
        ops = ", ".join(self.ops) if self.ops else "all the engine supports"
        if self.dtype != "float64":
            kind += f" {self.dtype}"
        if self.left_out:
            ops += f" but {', '.join(self.left_out)} (the adapter's fault)"
        return (
            f"{self.graphs} random {kind} graphs ({self.points} input points each), seed {self.seed}, "
            f"engine {self.engine}, ops: {ops}"
            + (", judged against the exact values" if self.reference == "exact" else "")
        )


# The seconds shrinking may take at most, whatever its budget: a cap for an engine so slow that
# its budget would take hours, not a budget (reaching it makes the report say what it cut short).
SHRINK_TIME_CAP = 600.0


def default_shrink_budget(graphs: int) -> int:
    """The shrink budget of a campaign of `graphs` graphs, in candidate checks: 1,000, and 2 more
    per graph (5,000 for 2,000 graphs). That is what the seconds it replaced (10 s and 20 ms per
    graph) bought on an idle 2-core machine, at 60 to 200 checks a second; explaining failures by
    the findings made is not counted against it."""
    return 1000 + 2 * graphs


def graph_seed(seed: int, index: int) -> int:
    """A 64-bit seed for graph `index` of a campaign seeded `seed`: a pure function of the pair."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0])
