"""Each kind of difference is named as such: classify re-evaluates a failing check's instance."""

import numpy as np
import pytest

from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.classify import cause_of, classify_check
from gradcheck.parity.compare import check_graph, kink_graphs
from gradcheck.parity.kinds import Kind
from gradcheck.testing import cause_engines, kind_engines, triage_engines


def one_op(op: str, x: float, **attrs) -> Graph:
    return Graph([Input("x0", x)], [OpNode(op, (0,), tuple(sorted(attrs.items())))], [1])


def in_graph(op: str, x: float) -> Graph:
    """op applied inside a small graph: y = op(x0) * x1 + x1."""
    nodes = [OpNode(op, (0,)), OpNode("mul", (2, 1)), OpNode("add", (3, 1))]
    return Graph([Input("x0", x), Input("x1", 1.5)], nodes, [4])


@pytest.mark.parametrize(
    ("engine", "graph", "kind", "check"),
    [
        (kind_engines.ReluTimesTwo(), in_graph("relu", 0.7), Kind.WRONG_GRADIENT, "gradient"),
        (
            kind_engines.TanhFirstOrderOnly(),
            in_graph("tanh", 0.4),
            Kind.WRONG_SECOND_DERIVATIVE,
            "second-derivative",
        ),
        (kind_engines.TanhValueOff(), in_graph("tanh", 0.4), Kind.WRONG_VALUE, "forward"),
        (kind_engines.SqrtNanSlope(), in_graph("sqrt", 2.0), Kind.NONFINITE, "gradient"),
        (kind_engines.ExpRaises(), in_graph("exp", 0.3), Kind.EXCEPTION, "gradient"),
    ],
    ids=lambda v: getattr(v, "name", None) or str(v),
)
def test_each_kind_of_difference_is_named(engine, graph, kind, check):
    result = check_graph(graph, engine)
    assert not result.passed
    difference = classify_check(result, engine)
    assert (difference.kind, difference.check) == (kind, check)


def test_a_slope_between_the_one_sided_derivatives_at_a_kink_is_a_convention():
    engine = kind_engines.ReluHalfAtZero()
    (at_zero, _) = [g for g in kink_graphs(["relu"])]
    result = check_graph(at_zero, engine, numeric=False, second_order=False)
    assert not result.passed
    assert classify_check(result, engine).kind is Kind.CONVENTION


def test_a_slope_outside_the_one_sided_derivatives_at_a_kink_is_a_wrong_gradient():
    engine = kind_engines.ReluTimesTwo()  # at 0.5 the slope 2 is outside [1, 1]: no kink there
    result = check_graph(one_op("relu", 0.5), engine, second_order=False)
    assert classify_check(result, engine).kind is Kind.WRONG_GRADIENT


def test_the_same_engine_away_from_the_kink_agrees():
    assert check_graph(in_graph("relu", 0.7), kind_engines.ReluHalfAtZero()).passed


def test_a_passing_check_has_nothing_to_classify():
    result = check_graph(one_op("tanh", 0.2), load_engine("minigrad"))
    with pytest.raises(ValueError, match="no failing instance"):
        classify_check(result, MinigradValue())


class AnswersNothing(kind_engines.ReluTimesTwo):
    """ReluTimesTwo, whose answers when asked again are no numbers at all."""

    def run(self, graph, values, cotangent):
        return object(), object()


def test_a_failure_that_cannot_be_classified_again_has_no_cause_rather_than_an_error():
    engine, graph = kind_engines.ReluTimesTwo(), one_op("relu", 0.7)
    check = check_graph(graph, engine)
    assert cause_of(check.problems, check.failure, engine).kind is Kind.WRONG_GRADIENT
    assert cause_of(check.problems, check.failure, AnswersNothing()) is None


def test_nonfinite_means_a_different_pattern_of_nan_and_inf():
    from gradcheck.parity.classify import _same_pattern

    nan, inf = float("nan"), float("inf")
    assert _same_pattern(np.array([nan, inf, 1.0]), np.array([nan, inf, 2.0]))
    assert not _same_pattern(np.array([inf]), np.array([-inf]))
    assert not _same_pattern(np.array([nan]), np.array([1.0]))


def tensor_graph(op: str, values: list, args: tuple[int, ...], **attrs) -> Graph:
    inputs = [Input(f"x{i}", np.asarray(v, dtype=np.float64), np.shape(v)) for i, v in enumerate(values)]
    node = OpNode(op, args, tuple(sorted(attrs.items())))
    return Graph(
        inputs, [node], [len(inputs)], cotangent=[np.ones(np.shape(values[0]))], meta={"kind": "tensor"}
    )


def kind_of(engine, graph: Graph) -> Kind:
    result = check_graph(graph, engine, numeric=False, second_order=False)
    assert not result.passed
    return classify_check(result, engine).kind


@pytest.mark.parametrize(
    ("engine", "kind"),
    [
        (cause_engines.MaximumZeroAtTie(), Kind.WRONG_GRADIENT),
        (cause_engines.MaximumFirstAtTie(), Kind.CONVENTION),
    ],
    ids=["zero-zero", "one-zero"],
)
def test_a_tie_is_a_convention_only_when_its_partials_are_a_subgradient(engine, kind):
    # maximum(x0, x1) at x0 = x1: partials (1, 0) are a subgradient, not torch's (1/2, 1/2);
    # (0, 0) is none: moving both together moves the maximum with slope 1, the partials sum to 0
    assert kind_of(engine, tensor_graph("maximum", [1.5, 1.5], (0, 1))) is kind


def test_maximum_of_a_node_with_itself_has_slope_one_whatever_the_tie_rule():
    # maximum(x0, x0) = x0: no kink at all, so partials summing to 0 are a wrong gradient
    assert (
        kind_of(cause_engines.MaximumZeroAtTie(), tensor_graph("maximum", [0.25], (0, 0)))
        is Kind.WRONG_GRADIENT
    )
    assert check_graph(tensor_graph("maximum", [0.25], (0, 0)), cause_engines.MaximumFirstAtTie()).passed


class _AmaxTiedShare(MinigradTensor):
    """amax over the last dim whose gradient gives each tied maximum `share` (torch: 1 / the number
    tied); its value is right."""

    share = 0.0

    def apply(self, op, args, attrs):
        if op != "amax":
            return super().apply(op, args, attrs)
        x = args[0]
        top = x.data.max(axis=-1)
        winners = (x.data == top[..., None]).astype(np.float64)
        weights = np.where(winners.sum(axis=-1, keepdims=True) > 1, self.share * winners, winners)
        return (x * weights).sum(dim=-1) + (top - (x.data * weights).sum(axis=-1))


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_tied_maxima_must_share_a_total_of_one(share):
    engine = type("AmaxShare", (_AmaxTiedShare,), {"share": share})()
    graph = tensor_graph("amax", [[1.0, 1.0, 0.5]], (0,), dims=(-1,))
    graph = Graph(graph.inputs, graph.nodes, graph.outputs, cotangent=[np.ones(1)], meta=graph.meta)
    assert kind_of(engine, graph) is Kind.WRONG_GRADIENT
    torch_like = type("AmaxHalf", (_AmaxTiedShare,), {"share": 0.5})()
    assert check_graph(graph, torch_like, numeric=False, second_order=False).passed


def test_a_jump_is_no_kink_so_a_slope_off_the_continuous_side_is_a_wrong_gradient():
    # atan2 at (0, -1) sits on its branch cut: from above the slope in y is -1, from below atan2
    # jumps by 2*pi. Swapped partials give +1: no convention at a kink, a wrong gradient
    engine = triage_engines.Atan2PartialsSwapped()
    graph = Graph([Input("x0", 0.0), Input("x1", -1.0)], [OpNode("atan2", (0, 1))], [2])
    assert kind_of(engine, graph) is Kind.WRONG_GRADIENT


@pytest.mark.parametrize(
    ("engine", "kind"),
    [
        (cause_engines.MaximumZeroAtTie(), Kind.WRONG_GRADIENT),
        (cause_engines.MaximumFirstAtTie(), Kind.CONVENTION),
    ],
    ids=["zero-zero", "one-zero"],
)
def test_a_tie_with_a_constant_is_judged_with_the_constant_made_an_input(engine, kind):
    # maximum(x, 0.0) at x = 0: slope 0 for x alone looks like relu's convention, but partials
    # (0, 0) are no subgradient of maximum(x0, x1); (1, 0) are
    node = OpNode("maximum", (0,), consts=(Constant(1, 0.0, tensor=True),))
    inputs = [Input("x0", np.array([0.0, 0.5]), (2,))]
    graph = Graph(inputs, [node], [1], cotangent=[np.array([1.0, 1.0])], meta={"kind": "tensor"})
    assert kind_of(engine, graph) is kind
