"""The harness checks itself: every deliberately broken engine is caught within the ci budget, and
the correct engines raise no alarm over the same budget."""

from __future__ import annotations

import pytest

from gradcheck.backends.base import load_engine
from parity_tests.broken_engines import BROKEN_ENGINES, TinyAdapter
from parity_tests.catching import hypothesis_examples_until_caught, stream_graphs_until_caught
from parity_tests.conftest import EXAMPLES

# the ci profile's budget for the suite's hypothesis property (EXAMPLES is 1,000 under ci)
BUDGET = EXAMPLES


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
    budget = max(50, BUDGET // 5)
    assert hypothesis_examples_until_caught(engine, budget) is None
    assert stream_graphs_until_caught(engine, budget) is None
