"""Spellings (`gradcheck.graphs.spellings`): an adapter's other ways of writing an op are drawn as
variants, recorded on the node, kept by JSON and the shrinker, and applied by the adapter."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.campaign.variants import variant_of
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import SPELLING, Constant, Graph, Input, OpNode
from gradcheck.graphs.shrink import shrink_graph
from gradcheck.graphs.spellings import Form, Spelling, adapter_spellings, applicable, forms_of, spelling_of
from gradcheck.testing.spelling_engines import AbsoluteThroughSqrt, IntegerPowerKeepsSlope

OPS = ["add", "mul", "abs", "pow_const", "pow", "tanh"]
FORMS = {
    "abs": (Form("abs", "abs(x)"),),
    "pow_const": (Form("pow_const", "x ** int", integer_exponent=True),),
    "pow": (Form("pow", "x ** int", integer_exponent=True),),
}


def graphs(forms=None, n=200):
    return [random_graph(np.random.default_rng(i), ops=OPS, forms=forms) for i in range(n)]


def spelled_nodes(gs):
    return [node for g in gs for node in g.nodes if spelling_of(node) is not None]


def test_an_adapter_listing_no_spellings_gets_the_same_graphs_as_before():
    assert [g.to_json() for g in graphs(None, 50)] == [g.to_json() for g in graphs({}, 50)]
    assert not spelled_nodes(graphs(None))


def test_listed_spellings_are_drawn_beside_the_default_and_recorded_on_the_node():
    nodes = spelled_nodes(graphs(FORMS))
    assert {(n.op, spelling_of(n)) for n in nodes} == {
        ("abs", "abs(x)"),
        ("pow_const", "x ** int"),
        ("pow", "x ** int"),
    }
    all_abs = [n for g in graphs(FORMS) for n in g.nodes if n.op == "abs"]
    assert 0 < len([n for n in all_abs if spelling_of(n)]) < len(all_abs)  # the default is drawn too


def test_an_integer_exponent_spelling_is_drawn_only_for_an_exponent_of_integer_value():
    for node in spelled_nodes(graphs(FORMS)):
        if node.op == "pow_const":
            assert float(node.attr["exponent"]).is_integer()
        if node.op == "pow":
            assert any(c.at == 1 and float(c.value).is_integer() for c in node.consts)
    fractional = OpNode("pow_const", (0,), (("exponent", 0.5),))
    assert applicable(FORMS["pow_const"], fractional) == []
    node_power = OpNode("pow", (0, 1))  # the exponent is a node: no integer to pass
    assert applicable(FORMS["pow"], node_power) == []
    assert applicable(FORMS["pow"], OpNode("pow", (0,), consts=(Constant(1, 2.0),))) == list(FORMS["pow"])


def test_the_op_math_never_sees_the_spelling_but_the_json_keeps_it():
    node = OpNode("pow_const", (0,), (("exponent", 2.0), (SPELLING, "x ** int")))
    assert node.attr == {"exponent": 2.0}
    graph = Graph([Input("x0", 1.5)], [node], [1])
    again = Graph.from_json(graph.to_json())
    assert spelling_of(again.nodes[0]) == "x ** int" and again.nodes == graph.nodes


def test_a_title_names_the_spelling_before_the_other_qualifiers():
    node = OpNode("pow_const", (0,), (("exponent", 0.0), (SPELLING, "x ** int")))
    assert variant_of(Graph([Input("x0", 1.5)], [node], [1])) == ("as x ** int", "to the power 0")


def test_the_shrinker_keeps_the_spelling_of_the_node_that_fails():
    def fails(g: Graph) -> bool:
        return any(spelling_of(n) == "abs(x)" for n in g.nodes)

    big = next(g for g in graphs(FORMS) if fails(g) and len(g.nodes) > 3)
    small = shrink_graph(big, fails)
    assert len(small.nodes) == 1 and spelling_of(small.nodes[0]) == "abs(x)"


def test_an_object_style_adapter_applies_the_spelling_a_node_records():
    adapter = AbsoluteThroughSqrt()
    node = OpNode("abs", (0,), ((SPELLING, "absolute(x)"),))
    spelled = Graph([Input("x0", 0.0)], [node], [1])
    default = Graph([Input("x0", 0.0)], [OpNode("abs", (0,))], [1])
    assert np.isnan(adapter.run(spelled, [0.0], [1.0])[1][0])
    assert adapter.run(default, [0.0], [1.0])[1][0] == 0.0


def test_a_campaign_draws_the_spellings_only_of_its_ops():
    forms = forms_of(adapter_spellings(IntegerPowerKeepsSlope()), ["add", "abs"])
    assert forms == {}
    assert forms_of(adapter_spellings(IntegerPowerKeepsSlope()), ["pow_const"]) == {
        "pow_const": (Form("pow_const", "x ** int", True),)
    }


def test_a_subclass_that_spells_ops_its_own_way_does_not_inherit_its_base_spellings():
    class OwnApply(MinigradValue):
        def apply(self, op, args, attrs):
            return super().apply(op, args, attrs)

    class OwnApplyAndSpellings(OwnApply):
        spellings = (Spelling("abs", "abs(x)", lambda a, k: abs(a[0])),)

    assert adapter_spellings(MinigradValue()) != ()
    assert adapter_spellings(OwnApply()) == ()
    assert [s.name for s in adapter_spellings(OwnApplyAndSpellings())] == ["abs(x)"]


def test_a_malformed_list_of_spellings_is_refused_naming_the_adapter_and_the_spelling():
    class Twice(MinigradValue):
        spellings = (Spelling("abs", "abs(x)", abs), Spelling("abs", "abs(x)", abs))

    class NotExponent(MinigradValue):
        spellings = (Spelling("abs", "abs(int)", abs, integer_exponent=True),)

    class NotSpelling(MinigradValue):
        spellings = (("abs", "abs(x)"),)

    with pytest.raises(ValueError, match="Twice lists the spelling 'abs\\(x\\)' of abs twice"):
        adapter_spellings(Twice())
    with pytest.raises(ValueError, match="NotExponent: spelling 'abs\\(int\\)' of abs has integer_exponent"):
        adapter_spellings(NotExponent())
    with pytest.raises(ValueError, match="NotSpelling: spellings must be Spelling entries"):
        adapter_spellings(NotSpelling())


def test_tensor_graphs_draw_spellings_too():
    forms = {"abs": (Form("abs", "abs(x)"),)}
    gs = [
        random_graph(np.random.default_rng(i), ops=["add", "abs"], tensor=True, sizes=Sizes(), forms=forms)
        for i in range(60)
    ]
    assert spelled_nodes(gs)


def test_the_shrinker_puts_a_node_back_in_its_default_spelling_when_the_failure_needs_none():
    def fails(g: Graph) -> bool:
        return any(n.op == "abs" for n in g.nodes)

    big = next(g for g in graphs(FORMS) if any(spelling_of(n) == "abs(x)" for n in g.nodes))
    small = shrink_graph(big, fails)
    assert [(n.op, spelling_of(n)) for n in small.nodes] == [("abs", None)]
