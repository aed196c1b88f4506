"""`flat_vector`: every engine result the harness compares becomes one float64 vector the same way."""

from __future__ import annotations

import numpy as np

from gradcheck.checker.flat import flat_vector


def test_numbers_and_arrays_join_in_order_each_array_in_c_order():
    flat = flat_vector([1.5, np.array([[1, 2], [3, 4]]), np.float32(0.25), 7])
    assert flat.dtype == np.float64
    assert flat.tolist() == [1.5, 1.0, 2.0, 3.0, 4.0, 0.25, 7.0]


def test_a_scalar_engines_floats_and_no_values_at_all():
    assert flat_vector((0.5, -2.0)).tolist() == [0.5, -2.0]
    assert flat_vector([]).shape == (0,)


def test_a_missing_value_is_nan_so_no_comparison_passes_it():
    assert np.isnan(flat_vector([1.0, None])).tolist() == [False, True]
