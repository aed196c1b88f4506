"""Root pytest configuration: hypothesis profiles shared by every test suite in the repository."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# dev: quick local runs. ci: deterministic (the same examples every run). nightly: a long hunt.
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "nightly",
    max_examples=20_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):
    """`--engine NAME`: the engine the parity suite checks (see gradcheck.engines.load_engine)."""
    parser.addoption(
        "--engine",
        default="minigrad",
        help="engine checked by parity_tests: minigrad (default), minigrad-tensor, micrograd, module:Adapter",
    )
