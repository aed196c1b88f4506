"""What the structural phase judges an engine's numbers by: torch's answers (the default) or, with
`--reference exact`, the exact values (`gradcheck.parity.exact`), at the one point each check is
built at.

The checks' graphs are small and scalar. An exact value that cannot be had there (an op without an
exact spelling, a branch the exact evaluation cannot decide) leaves torch's answer standing, as in
the other phases. Interior nodes' exact gradients are read through a probe: an input of value 0
added to the node, whose gradient is the node's (`probed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph, Input, OpNode


@dataclass(frozen=True)
class Reference:
    """A judge of the structural checks: `name` ("torch" or "exact") is the word a check's detail
    gives its numbers under ("engine 2.0, exact 1.5"), `theirs` what "k times ..." and "differs
    from ... alone" say."""

    name: str = "torch"

    @property
    def theirs(self) -> str:
        return "torch's" if self.name == "torch" else "the exact value"

    @property
    def alone(self) -> str:
        return "torch" if self.name == "torch" else "the exact value"

    def answers(self, graph: Graph, values: Sequence[float], cotangent: Sequence[float]) -> np.ndarray:
        """The forward values then the inputs' gradients of scalar `graph` at `values`, one flat vector."""
        forward, grads = self._at(graph, values, cotangent)
        return np.concatenate([forward, grads])

    def gradients(self, graph: Graph, values: Sequence[float], cotangent: Sequence[float]) -> np.ndarray:
        """The inputs' gradients of scalar `graph` at `values`."""
        return self._at(graph, values, cotangent)[1]

    def observed(self, graph: Graph, cause: str) -> np.ndarray:
        """What an object check (`structure.OBJECT_CHECKS`, by its cause) should observe on `graph`:
        the leaves' gradients after backward() twice (accumulated: twice each), after a reset and
        another backward() (once each), or the interior nodes' gradients."""
        values, cotangent = graph.input_values(0), list(graph.cotangent or [1.0])
        if cause == "interior":
            interior = range(graph.n_inputs, graph.n_inputs + len(graph.nodes) - 1)
            probes = [probed(graph, k) for k in interior]
            return np.array([self.gradients(p, [*values, 0.0], cotangent)[-1] for p in probes])
        grads = self.gradients(graph, values, cotangent)
        return 2 * grads if cause == "backward-twice" else grads

    def _at(self, graph: Graph, values: Sequence[float], cotangent: Sequence[float]) -> tuple[Any, Any]:
        from gradcheck.parity.classify import torch_at  # imports torch: only when a check runs

        if self.name == "exact":
            exact = _exact_at(graph, values, cotangent)
            if exact is not None:
                return exact
        torch = torch_at(graph, list(values), list(cotangent))
        return torch.forward[:, 0], torch.grads[:, 0]


TORCH = Reference("torch")
EXACT = Reference("exact")


def reference_named(name: str) -> Reference:
    """The judge a campaign's `Settings.reference` names."""
    if name not in ("torch", "exact"):
        raise ValueError(f"structural phase: reference {name!r} is neither 'torch' nor 'exact'")
    return EXACT if name == "exact" else TORCH


def _exact_at(
    graph: Graph, values: Sequence[float], cotangent: Sequence[float]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact forward values and gradients at one point, None where they cannot be had."""
    from gradcheck.parity.exact import run_exact

    try:
        exact = run_exact(
            graph, [np.array([float(v)]) for v in values], np.asarray(cotangent, dtype=np.float64)[:, None]
        )
    except ValueError:  # an op without an exact spelling
        return None
    if bool(exact.undecided[0]):
        return None
    return exact.forward[:, 0], exact.grads[:, 0]


def probed(graph: Graph, node_id: int) -> Graph:
    """`graph` with a last input "probe" of value 0 added to node `node_id` before any use of it:
    the probe's gradient is that node's, and every value is as before (x + 0 is x)."""
    n_in = graph.n_inputs
    probe = n_in
    ids = {i: i for i in range(n_in)}
    nodes: list[OpNode] = []
    for j, node in enumerate(graph.nodes):
        nodes.append(node.with_args(tuple(ids[a] for a in node.args)))
        ids[n_in + j] = n_in + len(nodes)
        if n_in + j == node_id:
            nodes.append(OpNode("add", (ids[n_in + j], probe)))
            ids[n_in + j] = n_in + len(nodes)
    inputs = [*graph.inputs, Input("probe", 0.0)]
    return Graph(inputs, nodes, [ids[o] for o in graph.outputs], cotangent=graph.cotangent)
