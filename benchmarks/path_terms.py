"""A gradient's exact value beside the terms an evaluation of it may sum: is a difference from
torch the rounding of another valid evaluation, or a wrong gradient?

The chain rule writes each input's gradient as a sum over the paths from the outputs down to it of
the cotangent times the product of the local derivatives along the path. `exact_paths` evaluates
a scalar graph in mpmath (60 digits: its values, each op's partial derivatives by `mpmath.diff`)
and gives, per input, that sum (the exact gradient), the sum of the paths' absolute values
(Σ|terms|), how many paths there are and the longest. Whatever the order in which an engine
multiplies and adds those terms (a topological order, path by path, last first), Higham's bound
holds: a float64 evaluation errs by at most about (paths - 1 + longest · k) · u · Σ|terms|
(u = 2^-53, k the ulps of a local derivative). `hand_check` puts an engine's and torch's gradients
in those units: a correct engine stays well within them, a wrong one does not.

    python benchmarks/bench_false_alarms.py --engines reordered ... --exact   # every bug-tier finding
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import mpmath
import numpy as np

from gradcheck.checker.oracle import MPValue
from gradcheck.engines.loading import load_engine
from gradcheck.engines.torch_engine import TorchAdapter
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY

DIGITS = 60
UNIT = 2.0**-53  # u: the unit roundoff of float64


class PathTerms(NamedTuple):
    """One input's gradient as a sum over paths: its exact value, Σ|terms|, the number of paths
    and the longest (in ops)."""

    exact: Any
    absolute: Any
    paths: int
    longest: int


def exact_paths(graph: Graph, values: Sequence[float], cotangent: Sequence[float]) -> list[PathTerms]:
    """Per input of the scalar `graph` at `values`, its cotangent-weighted gradient as a path sum."""
    with mpmath.workdps(DIGITS):
        nodes: list[Any] = [mpmath.mpf(v) for v in values]
        partials: list[list[tuple[int, Any]]] = []  # per op node: (operand node, d node / d operand)
        for node in graph.nodes:
            operands = node.operands(nodes, lambda c: mpmath.mpf(c.value))
            sources = node.operands(list(range(len(nodes))), lambda c: None)
            spec, attrs = REGISTRY[node.op], node.attr

            def f(*args: Any, spec: Any = spec, attrs: dict[str, Any] = attrs) -> Any:
                return spec.apply([MPValue(a) for a in args], attrs).data

            partials.append(
                [(src, _partial(f, operands, i)) for i, src in enumerate(sources) if src is not None]
            )
            nodes.append(f(*operands))
        n = len(nodes)
        signed, absolute = [mpmath.mpf(0)] * n, [mpmath.mpf(0)] * n
        paths, longest = [0] * n, [0] * n
        for out, c in zip(graph.outputs, cotangent):
            signed[out] += c
            absolute[out] += abs(c)
            paths[out] += 1
        for k in range(n - 1, graph.n_inputs - 1, -1):  # op nodes, each after every node that uses it
            if not paths[k]:
                continue
            for src, d in partials[k - graph.n_inputs]:
                signed[src] += signed[k] * d
                absolute[src] += absolute[k] * abs(d)
                paths[src] += paths[k]
                longest[src] = max(longest[src], longest[k] + 1)
        return [PathTerms(signed[i], absolute[i], paths[i], longest[i]) for i in range(graph.n_inputs)]


def _partial(f: Any, operands: Sequence[Any], i: int) -> Any:
    def along(t: Any) -> Any:
        args = list(operands)
        args[i] = t
        return f(*args)

    return mpmath.diff(along, operands[i])


class HandCheck(NamedTuple):
    """One input's gradient by the engine and by torch, the exact path sum, and each one's
    distance from the exact value in units of u · Σ|terms|."""

    name: str
    engine: float
    torch: float
    terms: PathTerms

    def units(self, value: float) -> float:
        if not self.terms.absolute:
            return 0.0 if value == 0 else float("inf")
        return float(abs(mpmath.mpf(value) - self.terms.exact) / (UNIT * self.terms.absolute))

    def line(self) -> str:
        return (
            f"{self.name}: engine {self.engine!r}, torch {self.torch!r}, exact "
            f"{mpmath.nstr(self.terms.exact, 17)}; Σ|terms| {float(self.terms.absolute):.3g} over "
            f"{self.terms.paths} paths (longest {self.terms.longest}): engine {self.units(self.engine):.3g} "
            f"u·Σ|terms| from the exact value, torch {self.units(self.torch):.3g}"
        )


def hand_check(graph: Mapping[str, Any], engine: str, point: int = 0) -> list[HandCheck]:
    """Each input of a finding's graph (its JSON) at `point`, by `engine`, torch and mpmath."""
    g = Graph.from_dict(graph)
    values = g.input_values(point)
    cotangent = [float(c) for c in (g.cotangent or [1.0] * len(g.outputs))]
    _, ours = load_engine(engine).run(g, values, cotangent)
    _, theirs = TorchAdapter().run(g, values, cotangent)
    terms = exact_paths(g, values, cotangent)
    return [
        HandCheck(inp.name, float(np.asarray(e)), float(np.asarray(t)), term)
        for inp, e, t, term in zip(g.inputs, ours, theirs, terms)
    ]
