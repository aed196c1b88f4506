"""A structural finding's repro in the engine's own terms (`with_engine_repro`): the engine's
snippet of the finding's graph with the structural step done as the check did it, a second
backward(), every node's grad reset, or the chain looped as deep as the one that failed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gradcheck.campaign.findings import Finding
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.snippets import ON_RAISE, VERDICT_MARK
from gradcheck.graphs.ir import Graph
from gradcheck.parity.wording import printable


def with_engine_repro(finding: Finding, adapter: EngineAdapter) -> Finding:
    """`finding` with a repro in the engine's own terms: the engine's snippet of the finding's graph
    with the structural step done as the check did it (a second backward(), every node's grad
    reset, the chain built as deep as the limit), headed by what the check saw against torch."""
    code = adapter.snippet(Graph.from_dict(finding.graph))
    if code is None:
        return finding
    engine_part = code.split("# the engine under test\n", 1)[-1].split(VERDICT_MARK, 1)[0]
    engine_part = engine_part.replace(ON_RAISE, "").replace("numbers(", "(")  # no torch part here
    lines = engine_part.strip("\n").splitlines()
    graph = Graph.from_dict(finding.graph)
    cause = finding.structural_cause
    at = next((i for i, line in enumerate(lines) if line.strip().endswith(".backward()")), None)
    if at is not None and cause in ("backward-twice", "zero-grad", "reset"):
        # backward() of the output itself, as the check calls it (not of a weighted loss node)
        output = graph.name_of(graph.outputs[0])
        weighted = lines[at].split(".backward()")[0].strip()
        call = f"{output}.backward()"
        lines = [
            call if i == at else line
            for i, line in enumerate(lines)
            if weighted == output or not line.startswith(f"{weighted} = ")
        ]
        at = lines.index(call)
        if cause == "backward-twice":
            step = [
                f"{call}  # a second backward(): torch (retain_graph=True) adds each leaf's gradient again"
            ]
        else:
            every = [graph.name_of(i) for i in range(graph.n_inputs + len(graph.nodes))]
            step = [
                f"for node in [{', '.join(every)}]:",
                "    node.grad = 0.0  # zero_grad on every node, interior ones too",
                f"{call}  # again: torch gives the same gradients as the first time",
            ]
        lines[at + 1 : at + 1] = step
    elif at is not None and cause == "depth" and graph.nodes:
        lines = _deep_chain(lines, graph, finding.graph_code.depth if finding.graph_code else None, at)
    header = [f"# {printable(problem)}" for problem in finding.problems]  # an engine's text, escaped
    return replace(finding, snippet="\n".join([*header, "", *lines]) + "\n")


def _deep_chain(lines: list[str], graph: Graph, depth: int | None, at: int) -> list[str]:
    """The engine's chain snippet with its op lines made a loop as deep as the chain that failed."""
    ids = range(graph.n_inputs, graph.n_inputs + len(graph.nodes))
    first, last = graph.name_of(ids[0]), graph.name_of(ids[-1])
    names = {graph.name_of(i) for i in ids}
    out: list[str] = []
    for line in lines[:at]:
        target = line.split(" = ")[0]
        if target == first and depth is not None:
            step = re.sub(rf"\b{graph.name_of(0)}\b", "v", line.split(" = ", 1)[1])
            out += [
                f"v = {graph.name_of(0)}",
                f"# {depth} ops failed inside the harness; a script's own frames are fewer, so twice as many",
                f"for _ in range({2 * depth}):",
                f"    v = {step}",
            ]
        elif target not in names:
            out.append(re.sub(rf"\b{last}\b", "v", line))
    call = re.sub(rf"\b{last}\b", "v", lines[at])  # the chain's last op, or a loss node weighting it
    return [*out, f"{call}  # raises RecursionError here; torch's backward() is iterative"]
