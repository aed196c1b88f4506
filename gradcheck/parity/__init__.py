"""The three-way parity check of a graph: an engine against torch and the numerical reference."""

from gradcheck.parity.compare import GraphCheck, check_graph, check_kinks, kink_graphs

__all__ = ["GraphCheck", "check_graph", "check_kinks", "kink_graphs"]
