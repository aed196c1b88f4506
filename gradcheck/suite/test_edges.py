"""The edge-value phase in the suite: each op of the engine at the edges of float64, against torch.

Marked `edges`: an engine that knowingly differs from torch there (Python floats raise at 1 / 0
where torch gives inf) deselects them with `-m "not edges"` and still gates on everything else.
"""

from __future__ import annotations

import pytest

from gradcheck.campaign.phases import edge_phase
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.problem import Off

pytestmark = pytest.mark.edges


@pytest.mark.parametrize("op", sorted(name for name, spec in REGISTRY.items() if spec.edges))
def test_op_matches_torch_at_its_edge_values(gradcheck_engine, op):
    engine = gradcheck_engine
    if op not in engine.ops:
        pytest.skip(f"engine {engine.name} does not support {op}")
    # where torch alone is off (judged by the exact value) the engine is right: not its failure
    problems = [p for p in edge_phase(engine, [op]).problems if p.problem.off is not Off.TORCH]
    if problems:
        lines = [f"{p.kind.value} ({p.check}) {p.where}: {p.message}" for p in problems]
        pytest.fail(
            f"{op}: {len(problems)} edge case(s) differ from torch:\n" + "\n".join(lines), pytrace=False
        )
