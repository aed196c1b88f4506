"""Rebuilding a graph at other addresses: a twin of an adapter that keeps every graph it
differentiates alive, and leaves made between builds, so that ids and the order of sets of them
change from build to build. What an order following object ids (a learner's sort by `id`, a
`set` of children) does is then seen on some builds and not others (`campaign.structure`,
`campaign.settling`, `gradcheck replay`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.functional import FunctionAdapter

SPARES = 32  # leaves made between two builds (`spare_leaves`)


class Kept(list):
    """What a retaining twin keeps alive (each graph it differentiated, the spare leaves between
    builds), and the rebuild it is on: a rebuild may build its graph once per point, and every
    build of one rebuild is preceded by the same kind of spare leaves (`spare_leaves`)."""

    rebuild = 0


def rebuilds(kept: Kept, runs: int) -> Iterator[int]:
    """0, 1, ..., `runs` - 1, each set as `kept`'s rebuild before its turn."""
    for run in range(runs):
        kept.rebuild = run
        yield run


def retaining(adapter: EngineAdapter) -> tuple[EngineAdapter, Kept]:
    """A twin of `adapter` that keeps every graph it differentiates alive in the returned list, so
    that each rebuild's nodes get fresh ids (a freed graph's memory, and ids, would be reused)."""
    kept = Kept()
    if isinstance(adapter, FunctionAdapter):
        return adapter, kept
    twin = copy.copy(adapter)
    original = adapter.gradients

    def gradients(outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        kept.append((list(outputs), list(inputs)))
        grads = original(outputs, inputs, cotangent)
        kept.append(spare_leaves(adapter, kept.rebuild))
        return grads

    twin.gradients = gradients  # type: ignore[method-assign]
    return twin, kept


def spare_leaves(adapter: EngineAdapter, count: int) -> list[Any]:
    """Leaves made before a build of rebuild `count`, so its nodes sit at other addresses: their
    ids, and the order of sets of them, change from rebuild to rebuild. In odd rebuilds they are
    freed at once in the order they were made, so the build reuses their addresses highest first
    and its nodes' ids fall as they are made; in even ones they are kept, taking up what the last
    release left, so the build's ids rise as in a fresh process."""
    spares = [adapter.leaf(0.0) for _ in range(SPARES + count % 7)]
    if count % 2:
        spares.reverse()  # a list frees its items last first: the first made is freed first
        spares.clear()
    return spares
