"""The values a campaign's options choose among, and their defaults: what an engine is judged
against, the conventions at a kink, how long one graph may run. Plain values importing nothing,
so the command line builds its parser (`--help`, an argument error) without numpy or torch."""

from __future__ import annotations

# What the engine is judged against: torch.autograd's float64 answers, or the exact values.
REFERENCES = ("torch", "exact")
# How a slope at a kink that is not torch's choice counts: a failure, or a note between the
# one-sided derivatives.
CONVENTIONS = ("torch", "subgradient")
DEFAULT_TIMEOUT = 60.0  # seconds a unit (one graph) may run without a sign of progress
