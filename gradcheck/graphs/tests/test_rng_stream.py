"""StreamChooser: numpy's own integer draws from the raw stream, the Generator left as numpy leaves it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcheck.graphs.generate import Sizes, build_graph, random_graph, resolve_ops, sample_points
from gradcheck.graphs.rng_stream import RngChooser, StreamChooser, stream_chooser

ranges = st.lists(
    st.tuples(st.integers(-10, 10), st.sampled_from([0, 1, 2, 3, 5, 11, 29, 64, 1000, 2**31 - 1, 2**32 - 3])),
    max_size=300,
)


@given(seed=st.integers(0, 2**32 - 1), spans=ranges, before=st.integers(0, 3))
def test_the_same_integers_as_numpy_and_the_same_state_after(seed, spans, before):
    numpy_rng, stream_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    for rng in (numpy_rng, stream_rng):  # draws before: a saved 32-bit half, doubles
        rng.integers(0, 7, size=before)
        rng.uniform(size=before)
    plain = RngChooser(numpy_rng)
    with stream_chooser(stream_rng) as fast:
        assert isinstance(fast, StreamChooser)
        drawn = [fast.integer(lo, lo + span) for lo, span in spans]
    assert drawn == [plain.integer(lo, lo + span) for lo, span in spans]
    assert stream_rng.bit_generator.state == numpy_rng.bit_generator.state
    assert stream_rng.integers(0, 10**6) == numpy_rng.integers(0, 10**6)


def test_choice_draws_like_numpy():
    plain, options = RngChooser(np.random.default_rng(3)), list("abcdefg")
    with stream_chooser(np.random.default_rng(3)) as fast:
        assert [fast.choice(options) for _ in range(200)] == [plain.choice(options) for _ in range(200)]


def test_other_bit_generators_keep_numpy_calls():
    rng = np.random.Generator(np.random.MT19937(5))
    with stream_chooser(rng) as chooser:
        assert isinstance(chooser, RngChooser)


def test_ranges_numpy_draws_with_64_bits_are_refused():
    with stream_chooser(np.random.default_rng(0)) as fast, pytest.raises(ValueError, match="2\\*\\*32"):
        fast.integer(0, 2**33)


def test_random_graphs_are_those_numpy_draws_make():
    """The campaign's graphs do not depend on how the choices are drawn."""
    for seed in range(40):
        fast_rng, plain_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        sizes = Sizes(deep_every=2)
        fast = random_graph(fast_rng, points=4, sizes=sizes)
        chooser = RngChooser(plain_rng)
        n_inputs = chooser.integer(*sizes.inputs)
        deep = chooser.integer(1, sizes.deep_every) == 1
        n_nodes = chooser.integer(*(sizes.deep_nodes if deep else sizes.nodes))
        n_outputs = chooser.integer(*sizes.outputs)
        points = sample_points(plain_rng, n_inputs, 4)
        plain = build_graph(chooser, points, resolve_ops(None), n_nodes, n_outputs, chain=deep)
        assert (fast.inputs, fast.nodes, fast.outputs) == (plain.inputs, plain.nodes, plain.outputs)
        assert np.array_equal(fast.points, plain.points)
        assert fast_rng.bit_generator.state == plain_rng.bit_generator.state
