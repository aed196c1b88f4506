"""Parity tests of this repository: the engine fixtures and corpus saving come from the gradcheck
pytest plugin (`gradcheck.suite.plugin`); this module keeps the names the tests here import."""

from __future__ import annotations

from gradcheck.suite.plugin import examples, record_failure

# Graphs per hypothesis property: five times the profile's examples (ci 1,000; nightly 100,000).
EXAMPLES = examples()

__all__ = ["EXAMPLES", "record_failure"]
