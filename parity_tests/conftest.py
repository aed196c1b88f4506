"""Parity tests of this repository: the engine fixtures, options and findings directory come from
the gradcheck pytest plugin (`gradcheck.suite.plugin`); this module keeps the names the tests here
import."""

from __future__ import annotations

import pytest

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.suite.plugin import examples, record_failure

EXAMPLES = examples()

__all__ = ["EXAMPLES", "record_failure"]


@pytest.fixture(scope="session")
def engine(gradcheck_engine: EngineAdapter) -> EngineAdapter:
    return gradcheck_engine
