"""A graph's input region: where on its ops' domains its point lies, from the registry's facts."""

import numpy as np
import pytest

from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.regions import region_of


def one_op(op: str, *args: float, consts: tuple[Constant, ...] = (), **attrs) -> Graph:
    inputs = [Input(f"x{i}", float(a)) for i, a in enumerate(args)]
    node = OpNode(op, tuple(range(len(args))), tuple(sorted(attrs.items())), consts)
    return Graph(inputs, [node], [len(args)])


@pytest.mark.parametrize(
    ("graph", "region"),
    [
        (one_op("pow_const", 0.0, exponent=0.0), "pole"),  # the power rule's pole, c * x ** (c - 1)
        (one_op("pow_const", -0.0, exponent=0.0), "pole"),
        (one_op("pow_const", 5e-324, exponent=0.0), "pole"),  # 1 / 5e-324 overflows: as good as 0
        (one_op("pow_const", 1e-300, exponent=-1.0), "overflow point"),  # its slope -1e600 overflows
        (one_op("pow_const", 1e300, exponent=2.0), "overflow point"),
        (one_op("pow_const", -1.0, exponent=0.5), "outside the domain"),
        (one_op("pow_const", float("nan"), exponent=0.0), "nan/inf"),
        (one_op("div", float("nan"), 0.0), "pole"),  # a divisor of 0 whatever the numerator
        (one_op("div", 0.0, 2.0), "ordinary"),  # a numerator of 0 is no pole
        (one_op("div", 3.0, consts=(Constant(0, 1e-8),)), "tiny"),
        (one_op("relu", 0.0), "kink"),
        (one_op("relu", 1.75e-7), "tiny"),
        (one_op("tanh", 0.5), "ordinary"),
    ],
    ids=lambda v: v.to_python("torch").splitlines()[-2] if isinstance(v, Graph) else v,
)
def test_regions_of_one_op(graph, region):
    assert region_of(graph) == region


def test_a_tie_is_a_tie_also_between_huge_values():
    inputs = [Input("x0", np.array([1e300]), (1,)), Input("x1", np.array([1e300]), (1,))]
    graph = Graph(inputs, [OpNode("maximum", (0, 1))], [2], meta={"kind": "tensor"})
    assert region_of(graph) == "tie"
    same = Graph(inputs[:1], [OpNode("maximum", (0, 0))], [1], meta={"kind": "tensor"})
    assert region_of(same) == "tie"


def test_a_graph_is_in_its_most_special_nodes_region():
    # relu(x0) / sigmoid(x1) at x1 = -800: sigmoid gives 0, so the division is at its pole
    inputs = [Input("x0", 0.5), Input("x1", -800.0)]
    nodes = [OpNode("relu", (0,)), OpNode("sigmoid", (1,)), OpNode("div", (2, 3))]
    assert region_of(Graph(inputs, nodes, [4])) == "pole"


def test_a_huge_argument_beside_an_infinite_one_is_an_overflow_point():
    # inf / 1e300: squaring the 1e300 is what overflows in a naive derivative
    assert region_of(one_op("div", float("inf"), 1e300)) == "overflow point"
    assert region_of(one_op("div", float("inf"), 2.0)) == "nan/inf"


def test_nan_is_no_kink():
    assert region_of(one_op("relu", float("nan"))) == "nan/inf"


@pytest.mark.parametrize("x", [float("inf"), float("-inf")])
def test_an_infinity_is_no_kink(x):
    # relu at -inf: its nudges are nan, which is no branch change (MyGrad's "relu at a kink" at -inf)
    assert region_of(one_op("relu", x)) == "nan/inf"
