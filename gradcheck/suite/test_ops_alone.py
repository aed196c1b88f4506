"""Each op of the engine alone, as the campaign's op-isolation pass checks it: one-op graphs at
random points, and, for an op the engine builds others from (`EngineAdapter.built_from`), under a
gradient from above other than 1. First in the suite (`plugin.TIER_ORDER`), so that `-x` stops at
the op that holds a wrong rule, named where the mistake table names it ("mul's backward leaves
out the upstream gradient"), before a random graph of several ops shows it on another (a sub
built from mul). Kink conventions are `test_parity`'s; torch's own faults fail nothing here.
"""

from __future__ import annotations

import pytest

from gradcheck.campaign.findings import failing
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.isolation import check_case, gathered, isolation_cases
from gradcheck.campaign.primitives import fold_into_primitives
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.validation import campaign_ops
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.wording import describe_all
from gradcheck.suite.plugin import conventions


@pytest.fixture(scope="module")
def ops_alone(gradcheck_engine, gradcheck_engine_name, pytestconfig):
    """The engine's ops as its campaign draws them, and the failing findings of the pass over
    them, grouped as the campaign groups them: an op's finding shared with the primitive it is
    built from is the primitive's (`campaign.primitives`)."""
    settings = Settings(engine=gradcheck_engine_name, tensor=bool(gradcheck_engine.tensor))
    ops = campaign_ops(settings, gradcheck_engine)
    built_from = {op: parts for op, parts in gradcheck_engine.built_from.items() if op in ops}
    primitives = {p for parts in built_from.values() for p in parts}
    cases = [case for case in isolation_cases(ops, primitives) if not case.kink]
    findings, _ = gathered([check_case(case, settings, ops, gradcheck_engine) for case in cases])
    grouped = group_findings(fold_into_primitives(group_findings(findings), built_from))
    return ops, failing(grouped, conventions(pytestconfig))


@pytest.mark.parametrize("op", sorted(REGISTRY))
def test_op_alone_matches_torch(op, gradcheck_engine, ops_alone):
    ops, failed = ops_alone
    if op not in ops:
        pytest.skip(f"engine {gradcheck_engine.name} does not support {op}")
    mine = [f for f in failed if f.ops == (op,)]
    if mine:
        lines = [f"finding: {f.title}\n  " + "\n  ".join(describe_all(f.problems)[:3]) for f in mine]
        repro = f"\n# in the engine's own terms\n{mine[0].snippet}" if mine[0].snippet else ""
        pytest.fail(f"{op} alone differs from torch:\n" + "\n".join(lines) + repro, pytrace=False)
