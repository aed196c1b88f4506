"""This repository's parity tests: the harness's self-check and the regression corpus (data).

The parity suite itself ships with the package as `gradcheck.suite` (a pytest plugin):

    pytest --pyargs gradcheck.suite                                   # minigrad's Value
    pytest --pyargs gradcheck.suite --gradcheck-engine minigrad-tensor  # scalar and tensor graphs
    pytest --pyargs gradcheck.suite --gradcheck-engine micrograd      # PyPI micrograd
    pytest --pyargs gradcheck.suite --gradcheck-engine mypkg.mod:Adapter
    pytest --pyargs gradcheck.suite --gradcheck-corpus out/corpus     # also replay a campaign's findings
    pytest --pyargs gradcheck.suite --gradcheck-conventions subgradient  # kink slopes: warnings
    HYPOTHESIS_PROFILE=ci pytest -n auto --pyargs gradcheck.suite     # deterministic, the CI size

In this repository `--engine` is an alias of `--gradcheck-engine`. A failure prints the shrunk
graph as minigrad and torch code with every figure, and is saved to a temporary directory the run
names; `python -m gradcheck corpus add FILE --to parity_tests/corpus` puts it into this
repository's corpus (shipped as gradcheck/suite/corpus), which every run replays.
"""

from pathlib import Path

# The regression corpus this suite replays (data only: the code is gradcheck.graphs.corpus_format).
CORPUS = Path(__file__).parent / "corpus"
