"""Blame through the engine's own graph: an engine that builds neg, sub and div from its mul
(`gradcheck.testing.built_from_engines`) and whose mul forgets the upstream gradient has one
finding, on mul, saying which ops are built from it; none on neg, sub or div, and no failing
graph left unexplained. The same engine with a correct mul has no finding of the kind."""

from __future__ import annotations

import pytest

from gradcheck.campaign import Settings, real_backend, run_campaign, unexplained
from gradcheck.campaign.explain import Explaining, explain
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.primitives import covered_ops, fold_into_primitives
from gradcheck.engines import load_engine
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.classify import Difference
from gradcheck.parity.kinds import Kind

ENGINES = "gradcheck.testing.built_from_engines"
BUILT = {"neg": frozenset({"mul"}), "sub": frozenset({"add", "mul"}), "div": frozenset({"mul", "pow_const"})}


def campaign(value_class: str):
    settings = Settings(engine=f"{ENGINES}:{value_class}", graphs=150, seed=2, points=2, structure=False)
    return run_campaign(settings, real_backend())


def bugs(result):
    return [f for f in result.findings if f.tier == "bug"]


@pytest.fixture(scope="module")
def mul_no_upstream():
    return campaign("MulNoUpstream")


def test_a_primitive_forgetting_the_upstream_gradient_is_one_finding_on_it(mul_no_upstream):
    first = mul_no_upstream.findings[0]
    assert first.ops == ("mul",) and first.kind is Kind.WRONG_GRADIENT, first.title
    assert "div, neg and sub are built from mul in this engine" in first.covers
    inherited = {i for f in bugs(mul_no_upstream)[1:] for i in f.graph_indices}
    assert set(first.graph_indices) | inherited == {r.index for r in mul_no_upstream.failures}


def test_no_finding_is_on_the_ops_built_from_it(mul_no_upstream):
    others = [f.title for f in bugs(mul_no_upstream)[1:]]  # the inherited `x ** 0` at 0 only
    assert all(title.startswith("`x ** 0` at `x = 0` raises") for title in others), others
    assert not [f.title for f in mul_no_upstream.findings if {"neg", "sub", "div"} & set(f.ops)]
    assert unexplained(mul_no_upstream.records) is None


def test_the_correct_engine_has_no_such_finding():
    result = campaign("Value")  # its `x ** 0` at 0 raises, as the tutorials' does: no finding of mul's
    assert {f.ops for f in bugs(result)} <= {("pow_const",)}
    assert not [f for f in result.findings if f.merged.built_from]


def test_without_the_engines_graph_the_blame_falls_on_the_ops_built_from_mul(monkeypatch):
    """What the engine's graph is for: without it, the same campaign blames neg, sub or div."""
    monkeypatch.setattr(EngineAdapter, "built_from", property(lambda self: {}))
    result = campaign("MulNoUpstream")
    assert any({"neg", "sub", "div"} & set(f.ops) for f in bugs(result))


def finding(ops, kind=Kind.WRONG_GRADIENT, graphs=1, phase="random", culprits=()):
    graph = {"inputs": [{"name": "x0", "value": 0.5}], "nodes": [{"op": op, "args": [0]} for op in ops]}
    return Finding(
        kind=kind,
        ops=tuple(ops),
        check="gradient",
        graph=graph,
        phase=phase,
        graphs=graphs,
        graph_indices=tuple(range(graphs)),
        region="ordinary",
        tier="bug",
        culprits=culprits,
    )


def test_a_finding_on_an_op_built_from_a_primitive_folds_into_the_primitives_finding():
    mul, neg, composed = (
        finding(["mul"], graphs=3),
        finding(["neg"], graphs=5, phase="isolation"),
        finding(["mul", "neg"], graphs=2),
    )
    through_sub = finding(["exp", "sub"], graphs=4, culprits=("sub(c, x)",))
    tanh = finding(["tanh"], graphs=7)
    (folded, kept) = fold_into_primitives([mul, neg, composed, through_sub, tanh], BUILT)
    assert folded.ops == ("mul",) and folded.graphs == 3 + 5 + 2 + 4
    # every op the engine builds from mul, in words
    assert "div, neg and sub are built from mul in this engine" in folded.covers
    assert folded.cases == {"random": 9, "isolation": 5}
    assert kept is tanh


def test_only_the_same_rule_and_a_primitives_own_finding_absorb():
    mul, neg_raises = finding(["mul"]), finding(["neg"], kind=Kind.EXCEPTION)
    assert fold_into_primitives([mul, neg_raises], BUILT) == [mul, neg_raises]  # another rule
    neg, add = finding(["neg"]), finding(["add"])
    assert fold_into_primitives([add, neg], BUILT) == [add, neg]  # neg is not built from add
    assert fold_into_primitives([mul, neg], {}) == [mul, neg]  # an engine exposing no graph


def test_a_primitives_finding_stands_for_the_nodes_of_the_ops_built_from_it():
    assert covered_ops(finding(["mul"]), BUILT) == {"mul", "neg", "sub", "div"}
    assert covered_ops(finding(["tanh"]), BUILT) == frozenset()
    assert covered_ops(finding(["mul"]), {}) == frozenset()


def test_a_primitives_mistake_upstream_of_a_covered_output_is_the_primitives():
    """x1 / exp(x0 / x1) at (0, 1) on a mul that forgets out.grad: the outer div's mul starts from
    out.grad = 1, where the mistake is right, and freezing it leaves nothing computed; with the
    inner div (no output) frozen the graph passes, so the failure is mul's."""
    adapter = load_engine("gradcheck.testing.tutorial_engines:MulNoUpstream")
    nodes = [OpNode("div", (0, 1)), OpNode("exp", (2,)), OpNode("div", (1, 3))]
    failing = Graph([Input("x0", 0.0), Input("x1", 1.0)], nodes, [4], cotangent=[1.0])
    mul = finding(["mul"], graphs=3, phase="isolation")
    cause = Difference(Kind.WRONG_GRADIENT, "gradient")
    explained = explain(failing, cause, Explaining((mul,)), adapter, index=7)
    assert explained.finding is not None and explained.finding.ops == ("mul",)
    assert explained.finding.graph_indices == (7,)
    assert "div, neg and sub are built from mul in this engine" in explained.finding.covers
