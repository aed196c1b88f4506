"""The zoo: autograd engines published on PyPI, each pinned, adapted as docs/adapters.md tells a
user to, and checked by one command (`bash scripts/zoo.sh`) against findings written by hand
(`zoo.expectations`). docs/zoo.md shows its table."""
