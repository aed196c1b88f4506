"""The accuracy survey judges an engine by the exact values: a 1e-12 error in mul's derivative is a
difference, a correct engine's rounding is not, and the hand check confirms a difference it meets."""

from __future__ import annotations

import numpy as np
from bench_scripts import script

from gradcheck.engines.loading import load_engine
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.testing.broken_engines import MulOffByATrillionth

survey = script("accuracy_survey")
handcheck = script("accuracy_handcheck")


def _mul_graph() -> Graph:
    rng = np.random.default_rng(3)
    points = [rng.uniform(0.5, 2.0, 16), rng.uniform(0.5, 2.0, 16)]
    return Graph([Input("x0", 1.0), Input("x1", 1.0)], [OpNode("mul", (0, 1))], [2], points=points)


def _judged(adapter, graph: Graph) -> survey.Tally:
    tally = survey.Tally()
    ref = survey.reference(graph, "float64", np.random.default_rng(0), hvp=adapter.create_graph)
    subject = survey.Subject(adapter.name, "-", "float64", False)
    survey.survey_graph(subject, adapter, ref, "mul", "ordinary", tally, one_op=True)
    return tally


def test_a_planted_error_differs_and_a_correct_engine_does_not():
    graph = _mul_graph()
    planted = _judged(MulOffByATrillionth(), graph)
    key = ("mul-off-by-1e-12 float64 scalar", "scalar", "mul", "ordinary", "gradient")
    assert planted.counts[key][:2] == [32, 32]
    correct = _judged(load_engine("minigrad"), graph)
    found = {key[-1]: counts[1] for key, counts in correct.counts.items()}
    assert found == {"forward": 0, "gradient": 0, "hvp": 0}


def test_the_hand_check_confirms_a_difference_with_its_own_mpmath_and_the_engine_called_again():
    planted = _judged(MulOffByATrillionth(), _mul_graph())
    record = next(d for d in planted.differences if d["part"] == "gradient")
    found = handcheck.check({**record, "key": ["torch float64 scalar", *record["key"][1:]]})
    assert found["exact_confirmed"] is True
    assert found["engine_again"] != found["engine"]  # torch itself gives the right number


def test_a_derivative_worse_than_its_value_is_listed_as_losing_accuracy():
    tally = survey.Tally()
    tally.ulps[("torch float64 scalar", "scalar", "tanh", "large")] = {"value": 0.5, "gradient": 4e15}
    tally.ulps[("torch float64 scalar", "scalar", "exp", "large")] = {"value": 0.5, "gradient": 0.6}
    assert [key[2] for key, _ in survey.losses(tally)] == ["tanh"]
