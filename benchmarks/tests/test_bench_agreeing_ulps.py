"""bench_agreeing_ulps measures each entry's allowance in ulps of itself."""

from __future__ import annotations

import numpy as np
from bench_scripts import script

bench = script("bench_agreeing_ulps")


def test_allowances_are_measured_in_ulps_of_each_entry() -> None:
    ulps = bench.allowance_in_ulps(graphs=10, points=2, seed=3)
    assert ulps.size > 20 and np.all(ulps >= 0)
    # most entries round somewhere, and are allowed more than the shortcut passes unexamined
    assert np.mean(ulps >= bench.AGREEING_ULPS) > 0.8
