"""gradcheck()'s slow mode (every Jacobian entry against central differences) beside its fast
mode (one backward, one directional difference) under pytest-benchmark, on a scalar function of
30 and of 100 minigrad Values.

    pytest benchmarks/test_gradcheck_modes.py --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from gradcheck import gradcheck


def chain_function(*xs: minigrad.Value) -> minigrad.Value:
    """A scalar function touching every input: sum of tanh(x_i x_{i+1}) + exp(x_i / 4) / n."""
    total = xs[0] * 0.0
    n = len(xs)
    for i in range(n):
        total = total + (xs[i] * xs[(i + 1) % n]).tanh() + (xs[i] * 0.25).exp() * (1.0 / n)
    return total


@pytest.mark.parametrize("mode", ["slow", "fast"])
@pytest.mark.parametrize("inputs", [30, 100])
def test_gradcheck_mode(benchmark, mode, inputs):
    benchmark.group = f"gradcheck() of a chain of {inputs} Values"
    values = [minigrad.Value(float(v)) for v in np.random.default_rng(0).uniform(-1, 1, inputs)]
    result = benchmark(gradcheck, chain_function, values, fast_mode=mode == "fast")
    assert result.passed
    # slow mode evaluates the function for every input (4 each), fast mode a few times in all
    assert (result.evaluations < inputs) == (mode == "fast")
