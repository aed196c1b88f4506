"""The parity suite: random expression graphs through an engine, torch and numerics.

    pytest parity_tests                              # minigrad's Value
    pytest parity_tests --engine minigrad-tensor     # minigrad's Tensor (scalar and tensor graphs)
    pytest parity_tests --engine micrograd           # PyPI micrograd through its adapter
    pytest parity_tests --engine mypkg.mod:Adapter   # any engine with an EngineAdapter
    HYPOTHESIS_PROFILE=ci pytest -n auto parity_tests  # deterministic, the CI size

    pytest parity_tests --corpus out/corpus          # also replay a campaign's findings
    pytest parity_tests --conventions subgradient    # a valid one-sided slope at a kink is a warning

A failure prints the shrunk graph as minigrad and torch code with every figure, and is saved to
a temporary directory the run names; `python -m gradcheck corpus add FILE` puts it into
parity_tests/corpus/, which every run replays.
"""

from pathlib import Path

# The regression corpus this suite replays (data only: the code is gradcheck.graphs.corpus).
CORPUS = Path(__file__).parent / "corpus"
