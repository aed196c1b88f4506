"""Titles name causes: the op, the form of it a failure needs and the region, never one input's
values (`gradcheck.campaign.variants`); the op surface's variants are titled by those words."""

import itertools

import numpy as np
import pytest

from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.variants import SURFACE_QUALIFIERS, surface_words, variant_of
from gradcheck.graphs import surface
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.surface import VARIANTS
from gradcheck.parity.kinds import Kind

ONE_OP = Sizes(inputs=(1, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)


def tensor_op(op: str, *shapes: tuple[int, ...], consts=(), **attrs) -> Graph:
    inputs = [Input(f"x{i}", np.ones(s), s) for i, s in enumerate(shapes)]
    node = OpNode(op, tuple(range(len(shapes))), tuple(sorted(attrs.items())), consts)
    return Graph(inputs, [node], [len(shapes)], meta={"kind": "tensor"})


def scalar_op(op: str, consts=(), **attrs) -> Graph:
    return Graph([Input("x0", 0.5)], [OpNode(op, (0,), tuple(sorted(attrs.items())), consts)], [1])


@pytest.mark.parametrize(
    ("graph", "variant"),
    [
        (tensor_op("amax", (2, 3), dims=(-2, -1)), ("over a tuple of dims",)),
        (tensor_op("amax", (2, 3), dims=(-1,)), ()),
        (tensor_op("sum", (2, 3), dims=(-1,), keepdim=True), ("keeping the reduced dims",)),
        (tensor_op("matmul", (3,), (3, 2)), ("with a 1-D operand",)),
        (tensor_op("matmul", (2, 3, 4), (4, 2)), ("batched",)),
        (tensor_op("add", (3, 1), (3, 4)), ("broadcasting a size-1 dim",)),
        (tensor_op("mul", (4,), (3, 4)), ("broadcasting over added dims",)),
        (scalar_op("div", consts=(Constant(0, 2.0),)), ("with a number on the left",)),
        (scalar_op("pow_const", exponent=0.0), ("to the power 0",)),
        (scalar_op("pow_const", exponent=-0.5), ("to a negative power", "to a fractional power")),
        (Graph([Input("x0", 0.5)], [OpNode("mul", (0, 0))], [1]), ("with one node on both sides",)),
    ],
    ids=lambda v: v.to_python("torch").splitlines()[-6].split(" = ")[-1] if isinstance(v, Graph) else "",
)
def test_the_forms_of_an_op_a_minimal_graph_shows(graph, variant):
    assert variant_of(graph) == variant


def raised(graph: Graph, index: int) -> Finding:
    problem = "point 0: engine raised TypeError: 'tuple' object cannot be interpreted as an integer"
    ops, graph_dict = tuple(graph.ops()), graph.to_dict()
    return Finding(
        Kind.EXCEPTION, ops, "gradient", graph_dict, problems=sentences((problem,)), graph_indices=(index,)
    )


def test_a_failure_of_one_form_only_is_titled_by_it_never_by_its_values():
    (found,) = group_findings([raised(tensor_op("amax", (2, 2), dims=(-2, -1)), 3)])
    assert found.title == "amax over a tuple of dims — engine raised TypeError"


def test_failures_of_a_form_join_the_plainer_form_when_that_fails_too():
    plain = raised(tensor_op("amax", (2, 2), dims=(-1,)), 1)
    tuples = raised(tensor_op("amax", (2, 2), dims=(-2, -1)), 2)
    (found,) = group_findings([tuples, plain])
    assert (found.title, found.graph_indices) == ("amax — engine raised TypeError", (1, 2))
    keeping = raised(tensor_op("sum", (2, 2), dims=(-2, -1), keepdim=True), 4)
    not_keeping = raised(tensor_op("sum", (2, 2), dims=(-2, -1)), 5)
    (found,) = group_findings([keeping, not_keeping])
    assert found.title == "sum over a tuple of dims — engine raised TypeError"


def test_each_variant_of_the_op_surface_is_the_qualifier_its_findings_are_titled_by():
    # an adapter opts in to `sum.keepdim`; a failure of it is titled "sum keeping the reduced dims"
    assert set(SURFACE_QUALIFIERS) == set(VARIANTS)
    met = set()
    for op, seed in itertools.product(("sum", "mean", "matmul"), range(100)):
        rng = np.random.default_rng(seed)
        graph = random_graph(rng, ops=[op], tensor=True, points=1, sizes=ONE_OP)
        if len(graph.nodes) != 1:
            continue
        node, qualifiers = graph.nodes[0], variant_of(graph)
        for name in surface.variants_of(node.op, node.attr):
            assert SURFACE_QUALIFIERS[name] in qualifiers, (name, node.attr, qualifiers)
            met.add(name)
        for name, variant in VARIANTS.items():
            if variant.op == node.op and name not in surface.variants_of(node.op, node.attr):
                assert SURFACE_QUALIFIERS[name] not in qualifiers, (name, node.attr, qualifiers)
    assert met == set(VARIANTS), "every variant drawn"
    assert surface_words(["sum.keepdim"]) == "sum keeping the reduced dims (sum.keepdim)"
