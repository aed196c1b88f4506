"""A finding says what happened and whose it is: a complex number the engine gave is the engine's
answer, not its adapter's fault; an answer of the wrong shape is "wrong shape", with the attribute
the adapter may not pass on; tiny magnitudes only where an input is tiny; an adapter's fix never
hides an op's own findings."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.campaign import Settings, real_backend, run_campaign, tiers
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.engines.origin import Frame, FrameKind, Producer, Raised
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.regions import ORDINARY, TINY, region_of
from gradcheck.parity.compare import check_graph
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What
from gradcheck.testing.boundary_engines import ComplexPower, KeepdimNotPassed

BOUNDARY = "gradcheck.testing.boundary_engines"


def test_a_complex_result_read_by_the_adapter_is_the_engines_answer_off_the_domain():
    # (-2) ** 0.5 is complex in Python, nan in torch; the adapter's float() refuses it
    graph = Graph([Input("x0", -2.0)], [OpNode("pow_const", (0,), (("exponent", 0.5),))], [1])
    (problem, *_) = check_graph(graph, ComplexPower(), numeric=False, second_order=False).problems
    assert problem.what is What.NOT_A_NUMBER and "complex" in problem.answer and problem.raised is None


def test_a_campaign_on_an_engine_with_complex_powers_has_no_adapter_fault_and_keeps_its_real_bug():
    settings = Settings(engine=f"{BOUNDARY}:ComplexPower", graphs=200, seed=1, edges=True)
    findings = run_campaign(settings, real_backend()).findings
    assert not [f for f in findings if f.tier == tiers.ADAPTER], [f.title for f in findings]
    off_domain = [f for f in findings if f.kind is Kind.WRONG_TYPE]
    assert off_domain and all(f.tier == tiers.EDGE and "outside its domain" in f.title for f in off_domain)
    assert any(f.tier == tiers.BUG and f.ops == ("pow_const",) for f in findings), "x ** 0 at 0 raises"


def test_an_ignored_keepdim_is_a_wrong_shape_that_names_the_attribute():
    x = np.arange(6.0).reshape(2, 3) / 7
    node = OpNode("sum", (0,), (("dims", (-1,)), ("keepdim", True)))
    graph = Graph([Input("x0", x, (2, 3))], [node], [1], meta={"kind": "tensor"})
    check = check_graph(graph, KeepdimNotPassed(), numeric=False, second_order=False)
    (problem,) = check.problems
    assert problem.what is What.WRONG_SHAPE and problem.shape == (2,) and problem.expected == (2, 1)
    assert problem.unpassed == "keepdim"


@pytest.mark.usefixtures("shallow_chains")  # tensor chains 10^3 deep only
def test_a_campaign_titles_an_ignored_keepdim_as_a_wrong_shape_the_adapter_may_cause():
    settings = Settings(
        engine=f"{BOUNDARY}:KeepdimNotPassed",
        graphs=60,
        seed=1,
        tensor=True,
        ops=("sum", "mean", "add", "mul"),
    )
    findings = run_campaign(settings, real_backend()).findings
    shapes = [f for f in findings if f.kind is Kind.WRONG_SHAPE]
    assert shapes and all("wrong shape (the adapter may not pass keepdim on)" in f.title for f in shapes)
    assert not [f for f in findings if "not a number" in f.title]


def test_tiny_magnitudes_only_where_an_input_is_tiny():
    # sin(x) - x at 1e-3 is -1.7e-10: tiny, but the input is not
    nodes = [OpNode("sin", (0,)), OpNode("sub", (1, 0)), OpNode("exp", (2,))]
    assert region_of(Graph([Input("x0", 1e-3)], nodes, [3])) == ORDINARY
    assert region_of(Graph([Input("x0", 1e-9)], nodes, [3])) == TINY


def _adapter_fault(op: str) -> Finding:
    frame = Frame(FrameKind.ADAPTER_METHOD, "MyAdapter.apply")
    raised = Raised("TypeError", "bad", Producer.ADAPTER, frame)
    graph = Graph([Input("x0", 0.5)], [OpNode(op, (0,))], [1]).to_dict()
    return Finding(Kind.EXCEPTION, (op,), "gradient", graph, problems=(Problem(What.RAISED, raised=raised),))


def test_an_adapters_fix_never_says_to_leave_out_an_op_with_findings_of_its_own():
    (alone,) = group_findings([_adapter_fault("tanh")])
    assert alone.tier == tiers.ADAPTER and "leave tanh out of `ops`" in alone.fix
    graph = Graph([Input("x0", 0.5)], [OpNode("tanh", (0,))], [1]).to_dict()
    bug = Finding(Kind.WRONG_GRADIENT, ("tanh",), "gradient", graph, region=ORDINARY, tier=tiers.BUG)
    (fault,) = [f for f in group_findings([_adapter_fault("tanh"), bug]) if f.tier == tiers.ADAPTER]
    assert "leave" not in fault.fix and "tanh has findings of its own" in fault.fix
