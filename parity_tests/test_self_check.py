"""The harness checks itself: every deliberately broken engine is caught within the ci budget, and
the correct engines raise no alarm over the same budget."""

from __future__ import annotations

import pytest

from gradcheck.engines.adapter import load_engine
from gradcheck.engines.broken import BROKEN_ENGINES, BROKEN_TENSOR_ENGINES, TinyAdapter
from gradcheck.parity.catching import hypothesis_examples_until_caught, stream_graphs_until_caught
from parity_tests.conftest import EXAMPLES

# at least the ci profile's budget for the suite's hypothesis property (EXAMPLES is 1,000 under ci)
BUDGET = max(EXAMPLES, 1000)


@pytest.mark.parametrize("name", sorted(BROKEN_ENGINES))
def test_each_broken_engine_is_caught_by_the_hypothesis_property(name):
    count = hypothesis_examples_until_caught(BROKEN_ENGINES[name](), BUDGET)
    assert count is not None, f"{name} survived {BUDGET} hypothesis examples"
    print(f"{name}: caught after {count} hypothesis examples")


@pytest.mark.parametrize("name", sorted(BROKEN_ENGINES))
def test_each_broken_engine_is_caught_by_the_seeded_stream(name):
    count = stream_graphs_until_caught(BROKEN_ENGINES[name](), BUDGET)
    assert count is not None, f"{name} survived {BUDGET} seeded graphs"
    print(f"{name}: caught after {count} seeded graphs")


@pytest.mark.parametrize("engine", [TinyAdapter(), load_engine("micrograd")], ids=lambda e: e.name)
def test_correct_engines_raise_no_false_alarm(engine):
    budget = max(50, EXAMPLES // 5)
    assert hypothesis_examples_until_caught(engine, budget) is None
    assert stream_graphs_until_caught(engine, budget) is None


@pytest.mark.parametrize("name", sorted(BROKEN_TENSOR_ENGINES))
def test_each_broken_tensor_engine_is_caught(name):
    engine = BROKEN_TENSOR_ENGINES[name]()
    by_hypothesis = hypothesis_examples_until_caught(engine, BUDGET // 5, tensor=True)
    by_stream = stream_graphs_until_caught(engine, BUDGET // 5, tensor=True)
    assert by_hypothesis is not None and by_stream is not None, (by_hypothesis, by_stream)
    print(f"{name}: caught after {by_hypothesis} hypothesis examples, {by_stream} seeded graphs")


def test_the_correct_tensor_engine_raises_no_false_alarm():
    engine = load_engine("minigrad-tensor")
    budget = max(20, EXAMPLES // 10)
    assert hypothesis_examples_until_caught(engine, budget, tensor=True) is None
    assert stream_graphs_until_caught(engine, budget, tensor=True) is None
