"""The structural phase in the suite: the engine's graph code against torch, whatever its ops.

Marked `structure`: shared nodes, diamonds, backward() twice, gradients reset and taken again,
interior gradients and deep chains (the campaign's structural phase, `gradcheck.campaign.phases`).
An engine with a known limit (micrograd's recursive sort) deselects them with `-m "not structure"`.
"""

from __future__ import annotations

import pytest

from gradcheck.campaign.phases import structure_phase

pytestmark = pytest.mark.structure


@pytest.fixture(scope="module")
def structure_report(gradcheck_engine):
    return structure_phase(gradcheck_engine)


def test_each_structural_check_matches_torch(structure_report):
    failed = [c for c in structure_report.cases if c.status == "failed"]
    if failed:
        lines = [f"{c.name}: {c.detail} (fails {c.failures} of {c.runs} rebuilds)" for c in failed]
        names = "; ".join(f.where for f in structure_report.findings)
        repros = [
            f"\n# {f.where}: in the engine's own terms\n{f.snippet}"
            for f in structure_report.findings
            if f.snippet
        ]
        pytest.fail(
            f"the engine's graph code differs from torch ({names}):\n" + "\n".join(lines + repros),
            pytrace=False,
        )


def test_the_structural_checks_apply_to_object_style_engines(gradcheck_engine, structure_report):
    from gradcheck.campaign.structure import object_style

    if object_style(gradcheck_engine):
        pytest.skip(f"{object_style(gradcheck_engine)}: only the graph cases apply")
    skipped = [
        c.name for c in structure_report.cases if c.status == "not applicable" and c.cause != "interior"
    ]
    assert not skipped, f"checks the adapter could not express: {skipped}"
