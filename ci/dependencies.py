"""A pytest plugin for this repository's CI: under GRADCHECK_REQUIRE_TEST_DEPS=1 (scripts/test.sh
sets it), a test skipped because a test dependency is missing fails instead, naming the module.
A test that CI always skips checks nothing; on a developer's machine the skip stays a skip."""

from __future__ import annotations

import os
from typing import Any

import pytest

# How `pytest.importorskip` words its skip: "could not import 'junitparser': No module named ..."
MISSING_DEPENDENCY = "could not import"
SWITCH = "GRADCHECK_REQUIRE_TEST_DEPS"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get(SWITCH) != "1" or not report.skipped:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if MISSING_DEPENDENCY in reason:
        report.outcome = "failed"
        report.longrepr = (
            f"{reason}\nA test dependency is missing: add it to the `test` extra in pyproject.toml "
            f"({SWITCH}=1 turns such skips into failures)."
        )
