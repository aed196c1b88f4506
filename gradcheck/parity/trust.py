"""Trust: a disagreement only with the numerical oracle is settled by a more precise one first.

Central differences are the weakest witness of the three: on an ill-conditioned graph their
error can exceed their own error estimate. When the engine agrees with torch and only the
oracle dissents, `settled` asks a higher-precision oracle (mpmath at 40 digits for scalar
graphs; Ridders' extrapolation in float64, about 3e-13 relative, for tensor graphs). If the
engine matches it, the point was a false alarm of the oracle: it is dropped and the graph is
checked again at its other points. Only a disagreement the precise oracle confirms is reported.
`compare.check_graph`, the one check of the library, the pytest suite and the campaign, settles so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.checker.flat import flat_vector
from gradcheck.checker.numerical import ridders
from gradcheck.checker.oracle import mpmath_gradient
from gradcheck.checker.tolerance import policy_for
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.ir import Graph, Input
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity import torch_reference
from gradcheck.parity.errors import NUMERIC_SAFETY, SCALE_FLOOR
from gradcheck.parity.result import GraphCheck


def precise_gradient(graph: Graph, cotangent: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The cotangent-weighted input gradient of a one-point graph by the precise oracle, flattened,
    with an estimate of its absolute error (zero for mpmath)."""
    values = graph.input_values(0)
    if not graph.is_tensor:
        exact = mpmath_gradient(
            _mp_function(graph), np.asarray(values, dtype=np.float64), np.asarray(cotangent)
        )
        if exact is not None and np.all(np.isfinite(exact)):
            return exact, np.zeros_like(exact)
    return _ridders_gradient(graph, values, cotangent)


def _mp_function(graph: Graph) -> Any:
    """The graph as a function of its inputs, for the mpmath oracle: each op applied to its
    operands, the node ones and the constant ones (plain floats, which mpmath takes exactly)."""

    def f(*xs: Any) -> list[Any]:
        nodes = list(xs)
        for node in graph.nodes:
            nodes.append(REGISTRY[node.op].apply(node.operands(nodes), node.attr))
        return [nodes[o] for o in graph.outputs]

    return f


def _ridders_gradient(graph: Graph, values: list[Any], cotangent: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    flat = flat_vector(values)
    weights = flat_vector(cotangent)
    value, error = np.zeros(flat.size), np.zeros(flat.size)
    for i in range(flat.size):

        def difference(h: float, i: int = i) -> np.ndarray:
            rows = np.stack([flat, flat])
            rows[0, i] += h
            rows[1, i] -= h
            f = weights @ _forward(graph, rows)
            return np.array([(f[0] - f[1]) / (rows[0, i] - rows[1, i])])

        estimate = ridders(difference, 2.0**-6 * max(1.0, abs(float(flat[i]))))
        value[i], error[i] = float(estimate.value[0]), float(estimate.error[0])
    return value, error


def _forward(graph: Graph, rows: np.ndarray) -> np.ndarray:
    """Torch's outputs (flattened, one column per row of flat inputs)."""
    k = rows.shape[0]
    if graph.is_tensor:
        batch, start = [], 0
        for inp in graph.inputs:
            size = int(np.prod(inp.shape))
            batch.append(rows[:, start : start + size].reshape(k, *inp.shape))
            start += size
        return torch_reference.forward_values(graph, batch)
    return torch_reference.forward_values(graph, list(rows.T))


def confirmed(check: GraphCheck, adapter: EngineAdapter) -> bool:
    """Whether the precise oracle confirms an oracle-only disagreement (False: a false alarm)."""
    graph = check.failure
    if graph is None:
        return True
    cotangent = list(graph.cotangent) if graph.cotangent is not None else [1.0] * len(graph.outputs)
    try:
        _, grads = adapter.run(graph, graph.input_values(0), cotangent)
        exact, error = precise_gradient(graph, cotangent)
    except Exception:
        return True
    engine_grad = flat_vector(grads)
    if not np.all(np.isfinite(exact)):
        return True
    policy = policy_for(graph.ops())
    scale = max(float(np.abs(exact).max()) if exact.size else 0.0, SCALE_FLOOR)
    allowed = 10.0 * error + NUMERIC_SAFETY * (policy.atol * max(scale, 1.0) + policy.rtol * np.abs(exact))
    return not bool(np.all(np.abs(engine_grad - exact) <= allowed))


def without_point(graph: Graph, point: int) -> Graph | None:
    """`graph` with batch point `point` removed (None when it was the only one)."""
    if graph.points is None or graph.n_points <= 1:
        return None
    points = [np.delete(p, point, axis=0) for p in graph.points]
    first = [p[0] if p.ndim > 1 else float(p[0]) for p in points]
    inputs = [Input(inp.name, v, inp.shape) for inp, v in zip(graph.inputs, first)]
    return Graph(inputs, list(graph.nodes), list(graph.outputs), points, graph.cotangent, dict(graph.meta))


def settled(graph: Graph, adapter: EngineAdapter, check: Callable[[Graph], GraphCheck]) -> GraphCheck:
    """`check(graph)`, with oracle-only disagreements settled by the precise oracle first.

    Each point the precise oracle clears is dropped and the graph checked again at the others;
    the result counts them in `settled_points`.
    """
    settled = 0
    current: Graph | None = graph
    while True:
        result = check(current)
        if not result.oracle_only or confirmed(result, adapter):
            if settled:  # besides any Hessian-vector product entries the check itself settled
                return dataclasses.replace(result, settled_points=settled + result.settled_points)
            return result
        settled += 1
        assert result.failing_point is not None
        current = without_point(current, result.failing_point)
        if current is None:
            return dataclasses.replace(
                result,
                passed=True,
                problems=[],
                failure=None,
                failing_point=None,
                settled_points=settled + result.settled_points,
            )
