"""An engine's answer that is not a number of the expected shape is the engine's problem, named as
such (`wrong-type`), never an exception of the harness or a refusal of the adapter."""

import numpy as np
import pytest

from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.classify import classify_check
from gradcheck.parity.compare import check_graph, wrong_type
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import What
from gradcheck.testing.field_engines import NodeInData, Scalar

TANH = Graph([Input("x0", 0.5)], [OpNode("tanh", (0,))], [1])


def test_a_node_inside_data_is_a_wrong_type_finding_of_the_forward_value():
    check = check_graph(TANH, NodeInData())
    assert not check.passed
    (problem,) = check.problems
    assert (problem.what, problem.output, problem.input) == (What.NOT_A_NUMBER, 0, None)
    assert "wrong type: output 0 is Scalar <gradcheck.testing.field_engines.Scalar" in str(problem)
    difference = classify_check(check, NodeInData())
    assert (difference.kind, difference.check) == (Kind.WRONG_TYPE, "forward")


class _Answers(MinigradValue):
    """minigrad's Value whose tanh answers are replaced: forward by `value`, gradients by `grad`."""

    def __init__(self, value=None, grad=None):
        self.forward_answer, self.grad_answer = value, grad

    def run(self, graph, values, cotangent, program=None):
        forward, grads = super().run(graph, values, cotangent)
        if self.forward_answer is not None:
            forward = [self.forward_answer(f) for f in forward]
        if self.grad_answer is not None:
            grads = [self.grad_answer(g) for g in grads]
        return forward, grads


@pytest.mark.parametrize(
    ("engine", "words", "check"),
    [
        (_Answers(value=lambda f: None), "output 0 is NoneType None, not a number", "forward"),
        (_Answers(value=lambda f: [f]), "output 0 is list", "forward"),
        (_Answers(value=lambda f: np.array([f])), "output 0 has shape (1,), expected ()", "forward"),
        (_Answers(grad=lambda g: Scalar(Scalar(g))), "the gradient of x0 is Scalar", "gradient"),
    ],
)
def test_none_a_list_a_wrong_shape_or_a_node_is_wrong_type(engine, words, check):
    result = check_graph(TANH, engine)
    assert not result.passed
    assert f"wrong type: {words}" in str(result.problems[0])
    assert classify_check(result, engine).check == check


def test_tensor_answers_must_have_the_shapes_of_the_outputs_and_inputs():
    out_shapes, inputs = [(2,)], [("x0", (2, 3))]
    assert wrong_type([np.zeros(2)], [np.zeros((2, 3))], out_shapes, inputs) is None
    shape = wrong_type([np.zeros(2)], [np.zeros((2, 2, 3))], out_shapes, inputs)
    assert (shape.what, shape.input, shape.shape, shape.expected) == (
        What.WRONG_SHAPE,
        "x0",
        (2, 2, 3),
        (2, 3),
    )
    assert str(shape) == "wrong type: the gradient of x0 has shape (2, 2, 3), expected (2, 3)"
    objects = wrong_type([np.zeros(2, dtype=object)], [np.zeros((2, 3))], out_shapes, inputs)
    assert (objects.what, objects.output) == (What.NOT_A_NUMBER, 0)
    assert str(objects).startswith("wrong type: output 0 is ndarray")
    count = wrong_type([np.zeros(2)] * 2, [np.zeros((2, 3))], out_shapes, inputs)
    assert (count.what, count.counts) == (What.WRONG_COUNT, (2, 1, 1, 1))
    assert "gave 2 output(s)" in str(count)
    boolean = wrong_type([np.zeros(2)], [True], out_shapes, inputs)
    assert str(boolean) == "wrong type: the gradient of x0 is bool True, not a number"
