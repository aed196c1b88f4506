"""The three-way parity check of a graph: an engine against torch and the numerical reference."""

from gradcheck.parity.compare import check_graph, check_kinks, kink_graphs
from gradcheck.parity.result import GraphCheck

__all__ = ["GraphCheck", "check_graph", "check_kinks", "kink_graphs"]
