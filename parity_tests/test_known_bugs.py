"""Known engine bugs excuse only the failures they describe."""

from __future__ import annotations

from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.compare import GraphCheck
from parity_tests.known_bugs import known_bug

HVP = "point 0 (x0=0.0): second derivatives: Hessian-vector product entry 0: engine nan, torch -0.0"


def _check(engine: str, ops: tuple[str, ...], *problems: str, exponent: float = 0.0) -> GraphCheck:
    graph = Graph([Input("x0", 0.0)], [OpNode(ops[0], (0,), (("exponent", exponent),))], [1])
    return GraphCheck(engine, ops, 1, 1, passed=False, problems=list(problems), failure=graph)


def test_a_failure_every_problem_of_which_the_bug_explains_is_known():
    assert known_bug(_check("minigrad-tensor", ("pow_const",), HVP)) is not None


def test_any_other_failure_is_not():
    wrong = "point 0 (x0=0.5): gradient of x0: engine 1.0, torch 2.0 (abs err 1 > allowed 1e-9)"
    assert known_bug(_check("minigrad-tensor", ("pow_const",), HVP, wrong)) is None
    assert known_bug(_check("minigrad", ("pow_const",), HVP)) is None
    assert known_bug(_check("minigrad-tensor", ("sin",), HVP)) is None
    assert known_bug(_check("minigrad-tensor", ("pow_const",), HVP, exponent=2.0)) is None
