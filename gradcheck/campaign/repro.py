"""How a report shows one finding to a reader: its replay command, its problems and the code that
reproduces it (the engine's own spelling when the adapter has one, torch's otherwise)."""

from __future__ import annotations

from gradcheck.campaign.findings import Finding
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.parity.wording import printable

# How many of a finding's problems a report lists.
SHOWN_PROBLEMS = 3


def finding_code(finding: Finding) -> str:
    """Python that reproduces the finding's minimal graph (a comment saying so for a finding met
    outside any graph, as a unit of settling lost with its worker)."""
    if finding.snippet:
        return finding.snippet
    if not finding.graph:  # a death outside any graph (the structural phase, settling): nothing to run
        return f"# no graph reproduces it: {finding.problems[0] if finding.problems else finding.title}"
    graph = Graph.from_dict(finding.graph)
    return graph_snippet(graph, "torch", second_order=finding.check == "second-derivative")


def finding_text(finding: Finding) -> str:
    """The finding as a failure message: title, what it covers, problems, repro command, code."""
    lines = [f"{finding.title} [{finding.tier}; {finding.kind.value}, {finding.check}]", finding.covers]
    if finding.fix:
        lines.append(f"fix: {finding.fix}")
    lines += [printable(p) for p in finding.problems[:SHOWN_PROBLEMS]]
    if finding.repro:
        lines.append(f"reproduce: {finding.repro}")
    lines += ["", finding_code(finding)]
    return "\n".join(lines)
