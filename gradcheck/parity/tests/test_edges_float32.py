"""The edge-value check and the float32 check: what they accept and what they report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from gradcheck.campaign.edge_phase import edge_findings
from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS
from gradcheck.parity.compare import check_graph
from gradcheck.parity.edge_check import check_edge, check_edges, edge_graph
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Off
from gradcheck.testing.broken_engines import HalfPrecisionAccumulation, TinyAdapter
from minigrad import Tensor


def test_every_scalar_op_has_an_edge_table_with_the_limits_of_float64():
    for op in SCALAR_OPS:
        values = {repr(v) for args, _ in REGISTRY[op].edges for v in args}
        assert {"0.0", "-0.0", "5e-324", "1e+300", "inf", "-inf", "nan"} <= values, op
    for op in ("exp", "tanh", "sigmoid"):
        values = {args[0] for args, _ in REGISTRY[op].edges}
        assert {20.0, 40.0, 355.0, 710.0, -745.0} <= values


def test_minigrads_value_matches_torch_at_every_edge_value_torch_is_not_off_at():
    differences = check_edges(load_engine("minigrad"))
    assert [p.message for p in differences if p.problem.off is not Off.TORCH] == []
    # atan2's gradient where y² + x² underflows or overflows: torch's 0, minigrad's the exact one;
    # pow's d/da at (5e-324, 5e-324), where a ** (b - 1) overflows: torch's inf, minigrad's 1
    assert {p.op for p in differences} <= {"atan2", "pow"}


class PythonFloatDiv(TinyAdapter):
    """Division in Python floats: ZeroDivisionError where torch gives inf."""

    name = "python-div"
    ops = frozenset({"div"})

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        a, b = (x.data if hasattr(x, "data") else float(x) for x in args)
        out = super().apply(op, args, attrs)
        out.data = a / b  # raises at b = 0
        return out


def test_an_engine_that_raises_at_one_over_zero_is_reported_as_an_exception():
    problems = check_edge(PythonFloatDiv(), edge_graph("div", (1.0, 0.0), {}))
    assert [p.kind for p in problems] == [Kind.EXCEPTION]
    assert "ZeroDivisionError" in problems[0].message and problems[0].where == "at (1.0, 0.0)"


class SignlessInf(TinyAdapter):
    """log(0) = +inf instead of -inf: the sign of an infinity matters."""

    name = "signless-inf"
    ops = frozenset({"log"})

    def value(self, node: Any) -> Any:
        return abs(node.data) if node.op == "log" else node.data


def test_the_sign_of_an_infinity_is_compared():
    problems = check_edge(SignlessInf(), edge_graph("log", (0.0,), {}))
    assert [(p.kind, p.check) for p in problems] == [(Kind.NONFINITE, "forward")]


def test_edge_findings_group_cases_per_op_kind_and_check():
    findings = edge_findings(PythonFloatDiv(), ["div"])
    exceptions = [f for f in findings if f.kind is Kind.EXCEPTION]
    assert len(exceptions) == 1 and exceptions[0].phase == "edges" and exceptions[0].graphs > 5
    assert exceptions[0].ops == ("div",) and len(exceptions[0].problems) > 1


def _mixed_graph() -> Graph:
    """(2.0 - x0) * t, t a 0-d float64 constant tensor, x0 a float32 vector in float32 mode."""
    nodes = [
        OpNode("sub", (0,), consts=(Constant(0, 2.0),)),
        OpNode("mul", (1,), consts=(Constant(1, 3.0, tensor=True),)),
    ]
    return Graph([Input("x0", np.array([0.5, -1.25, 3.0]), (3,))], nodes, [2], meta={"kind": "tensor"})


def test_the_correct_tensor_engine_passes_in_float32_with_mixed_operands():
    check = check_graph(_mixed_graph(), load_engine("minigrad-tensor"), dtype="float32")
    assert check.passed, check.report()
    assert 0 < check.max_rel_err_torch < 1e-6 or check.max_rel_err_torch == 0


def test_torch_computes_in_float32_as_an_engine_under_test():
    torch32 = load_engine("gradcheck.engines.torch_engine:TorchAdapter").in_dtype("float32")
    graph = _mixed_graph()
    values = [np.asarray(i.value, dtype=np.float32) for i in graph.inputs]
    forward, grads = torch32.run(graph, values, [np.ones(3, dtype=np.float32)])
    assert forward[0].dtype == np.float32 and grads[0].dtype == np.float32
    check = check_graph(graph, torch32, dtype="float32")
    assert check.passed, check.report()


class PromotesToFloat64(MinigradTensor):
    """Type promotion as numpy's old rules: a 0-d float64 operand makes the result float64."""

    name = "promotes"

    def scalar_tensor(self, value: float) -> Any:
        return np.float64(value)  # a float64 scalar that the engine treats as an array

    def value(self, node: Any) -> np.ndarray:
        return np.asarray(node.data, dtype=np.float64)


def test_a_float64_result_where_torch_keeps_float32_is_a_type_promotion_problem():
    check = check_graph(_mixed_graph(), PromotesToFloat64(), dtype="float32")
    assert not check.passed and any("type promotion" in str(p) for p in check.problems)


def test_float16_accumulation_fails_the_float32_check():
    g = _mixed_graph()
    g.outputs = [2, 1]
    check = check_graph(g, HalfPrecisionAccumulation(), dtype="float32")
    assert not check.passed and any("float32 gradient" in str(p) for p in check.problems)


def test_float32_needs_a_tensor_graph_and_engine():
    scalar = Graph([Input("x0", 0.5)], [OpNode("sin", (0,))], [1])
    with pytest.raises(ValueError, match="needs a tensor graph"):
        check_graph(scalar, load_engine("minigrad-tensor"), dtype="float32")
    with pytest.raises(ValueError, match="computes in"):
        TinyAdapter().in_dtype("float32")


def test_a_value_as_ill_conditioned_as_float32_makes_it_is_not_an_engine_error():
    """sin(exp(x0) - x1) at x0 = 3.75: exp's float32 rounding (an ulp of 42.7) moves the value by
    3e-6, as much as moving x0 by one float32 ulp does; torch's exp happened to round the other way."""
    x1 = np.array([2.3601621851227303, 0.4745406635331901, -0.5904012875144381])
    graph = Graph(
        [Input("x0", np.array(3.7539212415368466), ()), Input("x1", x1, (3,))],
        [OpNode("exp", (0,)), OpNode("sub", (2, 1)), OpNode("sin", (3,))],
        [4],
        meta={"kind": "tensor"},
    )
    check = check_graph(graph, load_engine("minigrad-tensor"), dtype="float32")
    assert check.passed, check.report()
    assert check.max_forward_err > 1e-6  # the error is there, and as large as the conditioning allows


def test_a_graph_torch_refuses_in_float32_is_judged_on_values_without_a_dtype_to_match():
    """0-d float32 + 0-d float64 constant is float64 in torch; expanded into a matmul with a
    float32 operand torch raises (no mixed matmul), so there is no torch dtype to match."""
    graph = Graph(
        [Input("x0", np.array(0.5), ()), Input("x1", np.array([[1.0, 2.0], [0.5, -1.0]]), (2, 2))],
        [
            OpNode("add", (0,), (), (Constant(1, 1.5, True),)),
            OpNode("expand", (2,), (("sizes", (2, 2)),)),
            OpNode("matmul", (3, 1)),
        ],
        [4],
        meta={"kind": "tensor"},
    )
    check = check_graph(graph, load_engine("minigrad-tensor"), dtype="float32")
    assert check.passed and check.points_checked == 1, check.report()


class ExpUlpsLow(MinigradTensor):
    """exp's float32 value `ulps` ulps below minigrad's (numpy's float32 exp is 2 ulps below the
    correctly rounded value at 3.8482680); its derivative rule is right."""

    create_graph = False

    def __init__(self, ulps: float) -> None:
        super().__init__()
        self.ulps = ulps

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        out = super().apply(op, args, attrs)
        if op == "exp" and out.dtype == np.float32:
            return out - Tensor(self.ulps * np.spacing(out.data))
        return out


def test_an_ops_last_ulps_amplified_by_what_follows_are_allowed_as_the_conditioning_allows():
    """sin(exp(x)) at exp(x) = 47: one ulp of exp moves sin by 4e-6 and one ulp of x by 2e-5, so a
    float32 exp a few ulps off (as numpy's) passes; one 1000 ulps off does not."""
    graph = Graph(
        [Input("x0", np.array([3.8482679665165067, 0.5, -1.0]), (3,))],
        [OpNode("exp", (0,)), OpNode("sin", (1,))],
        [2],
        meta={"kind": "tensor"},
    )
    assert check_graph(graph, ExpUlpsLow(2.0), dtype="float32").passed
    far = check_graph(graph, ExpUlpsLow(1000.0), dtype="float32")
    assert not far.passed and any("float32 forward" in str(p) for p in far.problems), far.report()


def test_a_gradient_that_cancels_to_zero_and_is_then_scaled_up_is_allowed_its_rounding():
    """softmax over copies of one value: the gradient sums to 0 over the copies (in float32 to
    a few ulps of the terms), and the x1000 in front scales that residue up. torch's float32
    happened to cancel exactly here; the engine's 3e-5 is within the rounding of the adjoints."""
    copies = Graph.from_dict(
        {
            "format": "minigrad-graph",
            "version": 2,
            "inputs": [
                {"name": "x0", "value": [[0.596, 0.0, -2.773], [-1.504, -3.066, -3.029]], "shape": [2, 3]}
            ],
            "nodes": [
                {"op": "mul", "args": [0], "consts": [{"at": 0, "value": 1000.0, "tensor": True}]},
                {"op": "expand", "args": [1], "attrs": {"sizes": [3, 2, -1]}},
                {"op": "permute", "args": [2], "attrs": {"dims": [-1, -3, -2]}},
                {"op": "softmax", "args": [3], "attrs": {"dim": -2}},
            ],
            "outputs": [4],
        }
    )
    for seed in range(8):
        assert check_graph(copies, load_engine("minigrad-tensor"), dtype="float32", seed=seed).passed


def _linear_over_itself() -> Graph:
    """y = x1 @ x0.T, then y / y (one node on both sides of div): the gradient is exactly 0, but
    div's rule adds two partials to y, g / y and -g * y / y**2, each up to 22.5 here, that cancel;
    linear then scales their float32 residue by x0 (up to 5.9). Campaign finding (seed 5, float32)."""
    x0 = [
        [0.8131682186653668, -5.90717225033975, -0.29739821015963663],
        [-1.6123140456416287, 0.6121897606812616, 0.37502964148282003],
    ]
    x1 = [
        [
            [0.8131682186653668, 0.06952136650264917, 1.0330063103486193],
            [-1.6123140456416287, 0.6121897606812616, 2.853139406796882],
        ],
        [
            [0.8131682186653668, -1.9092523635550915, -0.30733529888942596],
            [-1.6123140456416287, 0.6121897606812616, 0.0],
        ],
    ]
    cot = [
        [[1.2746926546096802, 1.3746976852416992], [-0.7204591035842896, -1.4246147871017456]],
        [[-1.4445009231567383, -1.3640209436416626], [-1.0312272310256958, -1.4024332761764526]],
    ]
    return Graph.from_dict(
        {
            "format": "minigrad-graph",
            "version": 1,
            "inputs": [
                {"name": "x0", "value": x0, "shape": [2, 3]},
                {"name": "x1", "value": x1, "shape": [2, 2, 3]},
            ],
            "nodes": [{"op": "linear_no_bias", "args": [1, 0]}, {"op": "div", "args": [2, 2]}],
            "outputs": [3],
            "cotangent": [cot],
        }
    )


class GradientOff(MinigradTensor):
    """Minigrad's gradients with `off` added to the first input's: a wrong gradient."""

    create_graph = False

    def __init__(self, off: float) -> None:
        super().__init__()
        self.off = off

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        grads = super().gradients(outputs, inputs, cotangent)
        grads[0] = Tensor(self.plain(grads[0]) + np.asarray(self.off, dtype=self.dtype))
        return grads


def test_a_rules_partials_that_cancel_on_a_repeated_argument_are_allowed_their_rounding():
    """The terms a gradient sums include each use's contribution before the uses are summed: the
    adjoint of y is ~0, but div's two contributions to it are 22.5 in size, and minigrad's
    float32 residue of 1e-5 (torch's cancelled exactly) is within a few ulps of them. A gradient
    2e-4 off (2.5 times the allowance) still fails."""
    graph = _linear_over_itself()
    for seed in range(4):
        check = check_graph(graph, load_engine("minigrad-tensor"), dtype="float32", seed=seed)
        assert check.passed, check.report()
    assert check.max_abs_err_torch > 1e-6  # the residue is there
    off = check_graph(graph, GradientOff(2e-4), dtype="float32")
    assert not off.passed and any("float32 gradient x0" in str(p) for p in off.problems), off.report()
