"""The parity suite as an installable pytest plugin: `pytest --pyargs gradcheck.suite
--gradcheck-engine NAME` checks an engine on random graphs, kink cases and the shipped corpus."""
