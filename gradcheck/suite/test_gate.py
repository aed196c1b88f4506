"""The gradient-regression gate in the suite: with `--gradcheck-baseline FILE`, the engine under
test is gated against a baseline recorded by `gradcheck gate --update-baseline` or `python -m
ci.gate --update-baseline`: the same fixed campaign as those launchers, compared the same way, so
a baseline recorded through any of them passes here on the same engine. Skipped without it.
"""

from __future__ import annotations

import pytest

from gradcheck.suite.plugin import gate_baseline


def test_the_engine_passes_its_gradient_regression_gate(pytestconfig, gradcheck_engine_name):
    path = gate_baseline(pytestconfig)
    if path is None:
        pytest.skip("no --gradcheck-baseline FILE: the gate is not run")
    from gradcheck.campaign.regression_gate import baseline_parts, run_gate
    from gradcheck.campaign.report_session import CiFiles, report_gate
    from gradcheck.campaign.settings import CampaignError

    try:
        outcome = run_gate(baseline_parts(path, gradcheck_engine_name), path, jobs=1, subset=True)
    except CampaignError as e:
        pytest.fail(f"--gradcheck-baseline: {e}", pytrace=False)
    if not outcome.passed:
        pytest.fail(report_gate(outcome, CiFiles()), pytrace=False)
