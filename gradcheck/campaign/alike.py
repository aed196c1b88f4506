"""Whether graphs fail like a given failure, and whether they pass: the one place the shrinker and
the explainer ask it, a list of graphs at a time (so that a batched judge can evaluate a list in
one go; here they are checked one by one, stopping at the first that answers).

"Fails like" a failure means: the engine disagrees with torch or the oracle at a checkable point,
for a reason other than torch and the oracle disagreeing with each other; the difference is of
the same kind in the same check (no drift to another bug); and it is about as far outside its
allowance (at least `STRENGTH_KEPT` of the original's excess), so that a tanh derivative 26% off
does not shrink into a graph where it is barely outside its allowance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gradcheck.campaign.blame import Diagnosed
from gradcheck.campaign.settling import passes
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Graph
from gradcheck.parity.classify import Difference, cause_of
from gradcheck.parity.compare import failing_check

# A candidate fails "about as strongly" when its excess is at least this part of the original's.
STRENGTH_KEPT = 0.5
# Why a failing graph shrinking cannot stand for is unexplained: checked again, it passed.
DID_NOT_FAIL_AGAIN = "it did not fail its way again when shrunk"


@dataclass(frozen=True)
class Likeness:
    """What a failure must look like to count as the original one: its difference (None: any
    failure, left unclassified) and how far outside its allowance it was (None: any strength)."""

    difference: Difference | None
    excess: float | None = None

    def strong_enough(self, excess: float | None) -> bool:
        """Whether a failure `excess` outside its allowance is about as strong as the original."""
        if self.excess is None or excess is None:
            return True
        return excess >= STRENGTH_KEPT * self.excess


def first_alike(
    graphs: Sequence[Graph], like: Likeness, adapter: EngineAdapter, dtype: str = "float64"
) -> tuple[int, Diagnosed] | None:
    """The first of `graphs` (one point each) that fails like `like`, with its failure diagnosed;
    None when none does."""
    for i, graph in enumerate(graphs):
        check = failing_check(graph, adapter, dtype=dtype)
        if check is None or check.failure is None or not like.strong_enough(check.failing_excess):
            continue
        if like.difference is None:
            return i, Diagnosed.of(check)
        difference = cause_of(check.problems, check.failure, adapter)
        if difference == like.difference:
            return i, Diagnosed.of(check, difference)
    return None


def passing(
    graphs: Sequence[Graph], adapter: EngineAdapter, dtype: str = "float64", runs: int = 1
) -> list[bool]:
    """For each of `graphs`, whether the engine agrees on it at a checkable point on each of
    `runs` fresh builds (`settling.passes`)."""
    return [passes(graph, adapter, runs, dtype) for graph in graphs]


def first_passing(
    graphs: Sequence[Graph], adapter: EngineAdapter, dtype: str = "float64", runs: int = 1
) -> int | None:
    """The first of `graphs` the engine agrees on at a checkable point, on each of `runs` fresh
    builds (`settling.passes`); None when it fails them all."""
    return next((i for i, graph in enumerate(graphs) if passes(graph, adapter, runs, dtype)), None)
