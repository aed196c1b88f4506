"""The generator's fast paths decide as the plain ones do: the same graphs for every seed.

Generation judges candidates with as few numpy calls as it can (a float comparison at one point,
no magnitude test for a bounded op) and draws from the raw PCG64 stream; here the same graphs
come out of the plain path, each candidate judged by `in_domain` and each choice drawn by numpy.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from gradcheck.graphs import generate
from gradcheck.graphs.generate import (
    TINY_EVERY,
    TINY_EXPONENTS,
    ZERO_EVERY,
    Sizes,
    random_graph,
    sample_points,
)
from gradcheck.graphs.registry import in_domain
from gradcheck.graphs.rng_stream import RngChooser


def plain_row_ok(spec, args, attr, out, magnitude=True):
    return bool(in_domain(spec, args, attr, out).all())


def plain_valid_rows(spec, args, attr, outs, magnitude=True):
    return np.flatnonzero(in_domain(spec, args, attr, outs))


@contextlib.contextmanager
def numpy_draws(rng):
    yield RngChooser(rng)


@pytest.fixture
def plain_generator(monkeypatch):
    def make(rng, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(generate, "_row_ok", plain_row_ok)
            m.setattr(generate, "_valid_rows", plain_valid_rows)
            m.setattr(generate, "stream_chooser", numpy_draws)
            return random_graph(rng, **kwargs)

    return make


@pytest.mark.parametrize("points", [1, 4, 16])
@pytest.mark.parametrize("sizes", [Sizes(), Sizes(deep_every=1), Sizes(nodes=(30, 30), deep_every=0)])
def test_fast_and_plain_generation_make_the_same_graphs(plain_generator, points, sizes):
    for seed in range(25):
        fast_rng, plain_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        fast = random_graph(fast_rng, points=points, sizes=sizes)
        plain = plain_generator(plain_rng, points=points, sizes=sizes)
        assert fast.to_json() == plain.to_json()
        assert fast_rng.bit_generator.state == plain_rng.bit_generator.state


def test_one_point_draws_its_tiny_value_and_zero_as_numpy_draws_an_array_of_one():
    for seed in range(300):
        fast, plain = np.random.default_rng(seed), np.random.default_rng(seed)
        values = sample_points(fast, 3, 1)
        expected = []
        for _ in range(3):
            scale = 10.0 ** plain.uniform(-0.7, 0.7, size=1)
            v = plain.uniform(-2.0, 2.0, size=1) * scale
            v[plain.integers(ZERO_EVERY, size=1) == 0] = 0.0
            tiny = np.flatnonzero(plain.integers(TINY_EVERY, size=1) == 0)
            v[tiny] = np.copysign(10.0 ** plain.uniform(*TINY_EXPONENTS, size=tiny.size), v[tiny])
            expected.append(v)
        assert all(np.array_equal(a, b) for a, b in zip(values, expected))
        assert fast.bit_generator.state == plain.bit_generator.state
