"""How many graphs the harness needs to catch an engine's bug (used by the self-check and benchmarks)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.strategies import engine_graphs, engine_tensor_graphs
from gradcheck.graphs.generate import random_graph
from gradcheck.parity.compare import check_graph
from gradcheck.parity.problem import What
from gradcheck.parity.result import GraphCheck


def stream_graphs_until_caught(
    engine: EngineAdapter,
    budget: int,
    seed: int = 0,
    points: int = 16,
    tensor: bool = False,
    raises: bool = False,
    dtype: str = "float64",
) -> int | None:
    """Graphs of the seeded campaign stream checked until the first failure (None: never in budget).

    raises: the engine's bug is an exception (micrograd's `x ** 0`), so a crash counts as caught.
    dtype: "float32" checks a tensor engine in float32 (`check_graph`'s dtype).
    """
    ops = sorted(engine.ops)
    for index in range(budget):
        rng = np.random.default_rng([seed, index])
        graph = random_graph(rng, ops=ops, points=4 if tensor else points, tensor=tensor)
        if _caught(check_graph(graph, engine, seed=index, dtype=dtype), raises):
            return index + 1
    return None


def _caught(result: GraphCheck, raises: bool = False) -> bool:
    """False when the check passed; raises when the engine itself crashed (a broken test engine),
    unless raising is the bug being caught."""
    crashes = [p for p in result.problems if p.what is What.RAISED and not p.by_adapter]
    if crashes and not raises:
        raise RuntimeError(
            f"engine {result.engine} crashed instead of computing a wrong gradient: {crashes[0]}"
        )
    return not result.passed


def hypothesis_examples_until_caught(
    engine: EngineAdapter,
    budget: int,
    points: int = 8,
    tensor: bool = False,
    raises: bool = False,
    dtype: str = "float64",
) -> int | None:
    """Examples of the suite's hypothesis property (ci-style: derandomized) until the first failure."""
    count = [0]

    @settings(
        max_examples=budget,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(engine_tensor_graphs(engine, points=4) if tensor else engine_graphs(engine, points=points))
    def prop(graph):
        count[0] += 1
        assert not _caught(check_graph(graph, engine, seed=0, dtype=dtype), raises)

    try:
        prop()
    except AssertionError:
        return count[0]
    return None
