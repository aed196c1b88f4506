"""The structural phase judges by the campaign's reference: torch's answers, or the exact values
with `--reference exact`, which hold where torch's do not."""

from __future__ import annotations

import pytest

from gradcheck.campaign.pool import EngineState
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.structure import tree_graph
from gradcheck.campaign.structure_findings import run_structure
from gradcheck.campaign.structure_reference import EXACT, TORCH, probed, reference_named
from gradcheck.campaign.tasks import structure
from gradcheck.engines import load_engine
from gradcheck.graphs.ir import Graph, Input, OpNode

STRUCTURAL = "gradcheck.testing.structural_engines"


def test_an_interior_nodes_gradient_is_its_probes():
    # (x0 * x1 + x2) * x3: both interior nodes' gradient is x3 = 2.25
    tree = tree_graph("mul", "add")
    assert tree.input_values(0)[3] == 2.25
    for reference in (TORCH, EXACT):
        assert reference.observed(tree, "interior").tolist() == [2.25, 2.25]
        leaves = reference.gradients(tree, tree.input_values(0), [1.0])
        assert reference.observed(tree, "backward-twice").tolist() == (2 * leaves).tolist()
        assert reference.observed(tree, "reset").tolist() == leaves.tolist()


def test_a_probe_changes_no_value():
    tree = tree_graph("mul", "add")
    values = tree.input_values(0)
    assert EXACT.answers(probed(tree, 5), [*values, 0.0], [1.0])[0] == EXACT.answers(tree, values, [1.0])[0]


def test_the_exact_reference_holds_where_torch_is_off():
    # atan2's gradient once x * x + y * y overflows: torch's is 0, the exact one is not
    graph = Graph([Input("x0", 1e155), Input("x1", 2.0)], [OpNode("atan2", (0, 1))], [2], cotangent=[1.0])
    values = graph.input_values(0)
    torch, exact = TORCH.gradients(graph, values, [1.0]), EXACT.gradients(graph, values, [1.0])
    assert torch[1] == 0.0
    assert exact[1] == pytest.approx(-1e-155, rel=1e-12)


def test_the_reference_is_named_by_the_settings():
    assert reference_named("exact") is EXACT and reference_named("torch") is TORCH
    with pytest.raises(ValueError, match="reference 'numpy' is neither 'torch' nor 'exact'"):
        reference_named("numpy")


def test_a_graph_code_bug_is_the_same_finding_judged_by_the_exact_values_and_says_so():
    adapter = load_engine(f"{STRUCTURAL}:DoubledSharedAdapter")
    (by_torch,) = run_structure(adapter).findings
    (by_exact,) = run_structure(adapter, reference=EXACT).findings
    assert by_exact.where == by_torch.where
    details = [p.note for p in by_exact.problems]
    assert any(", exact " in d for d in details) and not any(", torch " in d for d in details), details


@pytest.mark.parametrize("reference", ["torch", "exact"])
def test_the_campaigns_structural_task_judges_by_its_reference(reference):
    settings = Settings(engine=f"{STRUCTURAL}:DoubledSharedAdapter", reference=reference)
    (report,) = structure(EngineState(None, settings), [None])
    failed = [c for c in report.cases if c.status == "failed"]
    assert failed and all(f", {reference} " in c.detail for c in failed)


def test_correct_engines_pass_every_structural_check_against_the_exact_values():
    report = run_structure(load_engine("minigrad"), reference=EXACT)
    assert report.findings == []
    assert {c.status for c in report.cases} <= {"passed", "not applicable"}
