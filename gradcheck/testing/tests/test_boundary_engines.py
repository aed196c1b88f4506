"""The engines whose problem sits where the adapter meets the engine: each has the one problem it
says, and nothing else wrong."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.testing.boundary_engines import ComplexPower, FloatValue, KeepdimNotPassed


def test_the_float_engine_is_right_on_worked_examples():
    x, y = FloatValue(2.0), FloatValue(3.0)
    z = x * y + x
    z.backward()
    assert (z.data, x.grad, y.grad) == (8.0, 4.0, 2.0)
    w = (x - 1.0) ** 3.0 - (-y) * 2.0  # (x - 1)^3 + 2y
    w.backward()
    assert (w.data, x.grad, y.grad) == (7.0, 4.0 + 3.0, 2.0 + 2.0)  # leaves accumulate, as in torch


def test_a_negative_base_to_a_fractional_power_is_the_engines_complex_number():
    engine = ComplexPower()
    root = engine.apply("pow_const", [engine.leaf(-4.0)], {"exponent": 0.5})
    assert isinstance(root.data, complex) and abs(root.data - 2j) < 1e-15
    with pytest.raises(TypeError, match="complex"):
        engine.value(root)  # the adapter's float() raises: the engine's answer is not a real number


def test_the_power_rule_is_micrograds_and_raises_at_zero_for_exponent_zero():
    power = FloatValue(0.0) ** 0.0
    assert power.data == 1.0
    with pytest.raises(ZeroDivisionError):
        power.backward()  # d/dx x ** 0 = 0 * 0.0 ** -1, where torch's gradient is 0


def test_keepdim_is_dropped_by_the_adapter_not_the_engine():
    engine = KeepdimNotPassed()
    x = engine.leaf(np.ones((2, 3)))
    for op in ("sum", "mean"):
        kept = engine.apply(op, [x], {"dims": (-1,), "keepdim": True})
        assert kept.shape == (2,)  # torch: (2, 1)
        assert getattr(x, op)((-1,), keepdim=True).shape == (2, 1)  # the engine itself keeps them
