"""Function-style engines (JAX, HIPS autograd): the adapter says how to differentiate a function.

Object-style engines build a graph of values and call `backward()`; function-style engines take
`grad` of a Python function. For them the harness compiles each graph once into a function over
arrays (`graph_function`) and evaluates every input point of a check in one vectorised call, so
an engine with a compiler (JAX) traces and compiles once per graph structure.

An adapter subclasses `FunctionAdapter`, names its array namespace (`xp`) and says how to take
`grad`; `vectorize`, `compile`, `hessian_vector` and the op spellings (`op`) have defaults that it
may override with something faster or with the engine's own spelling of an op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.snippets import run_snippet
from gradcheck.graphs.ir import SPELLING, Graph
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.spellings import adapter_spellings, rule_of

Arrays = Sequence[Any]  # one engine array per graph input (or output)
GraphFunction = Callable[[Arrays], list[Any]]
# (inputs, direction) -> (outputs, their derivatives along the direction): a forward-mode J·v
Jvp = Callable[[Arrays, Arrays], tuple[Sequence[Any], Sequence[Any]]]


def graph_function(graph: Graph, op: Callable[[str, Sequence[Any], dict[str, Any]], Any]) -> GraphFunction:
    """`graph` as a Python function from input arrays to output arrays, each op through `op`
    (a node's `spelling` among the attributes `op` gets, when it has one)."""
    steps = [(node, dict(node.attrs)) for node in graph.nodes]
    outputs = list(graph.outputs)

    def evaluate(inputs: Arrays) -> list[Any]:
        values = list(inputs)
        for node, attrs in steps:  # constant operands become Python floats (they broadcast)
            values.append(op(node.op, node.operands(values), attrs))
        return [values[o] for o in outputs]

    return evaluate


@dataclass(frozen=True)
class CompiledGraph:
    """A graph made ready for an engine: all points at once, and one Hessian-vector product.
    Both take float64 numpy arrays.

    points(inputs, cotangents) -> (outputs, gradients): lists of arrays with a leading point axis.
    hvp(inputs, cotangents, direction) -> the HVP at one point, one array per input.
    """

    points: Callable[[Arrays, Arrays], tuple[Sequence[Any], Sequence[Any]]]
    hvp: Callable[[Arrays, Arrays, Arrays], Sequence[Any]]


# The two orders of a Hessian-vector product (`FunctionAdapter.hvp_transforms`).
REVERSE_OVER_REVERSE = "reverse over reverse (grad of grad)"
FORWARD_OVER_REVERSE = "forward over reverse (jvp of grad)"


class FunctionAdapter(EngineAdapter):
    """Drives an engine that differentiates functions over arrays.

    Required: `xp` (the engine's numpy-like module) and `grad`. The harness calls `run_points`
    (all points of a check at once) and `run_hvp`; `leaf`/`build`/`gradients` are not used.
    """

    create_graph = True  # a second derivative is `grad` of a gradient: every such engine has one
    # here a spelling's rule takes (xp, operands, attrs), as the registry's `array` spellings do

    @property
    def xp(self) -> Any:
        """The engine's numpy-like module (`jax.numpy`, `autograd.numpy`) the ops are spelled in."""
        raise NotImplementedError(f"{type(self).__name__}.xp is not implemented")

    def grad(self, f: Callable[[Arrays], Any]) -> Callable[[Arrays], Sequence[Any]]:
        """The gradient of a scalar function of a list of arrays, as a function of that list."""
        raise NotImplementedError(f"{type(self).__name__}.grad is not implemented")

    def hessian_vector(self, f: Callable[[Arrays], Any]) -> Callable[[Arrays, Arrays], Sequence[Any]]:
        """(xs, v) -> the Hessian of scalar `f` at xs times v; by default reverse over reverse."""
        xp = self.xp
        grad_f = self.grad(f)

        def directional(xs: Arrays, v: Arrays) -> Any:
            return sum(xp.sum(g * d) for g, d in zip(grad_f(xs), v))

        def hvp(xs: Arrays, v: Arrays) -> Sequence[Any]:
            return self.grad(lambda ys: directional(ys, v))(xs)

        return hvp

    def jvp(self, f: Callable[[Arrays], list[Any]]) -> Jvp | None:
        """(xs, v) -> (f(xs), the derivative of f's outputs along v) by the engine's forward mode,
        for a function of a list of arrays to a list of arrays; None (the default): the engine has
        no forward mode, and only its reverse mode is checked."""
        return None

    @property
    def forward_mode(self) -> bool:  # type: ignore[override]
        """Whether the adapter gives `jvp` (its forward mode is then checked too)."""
        return type(self).jvp is not FunctionAdapter.jvp

    @property
    def hvp_transforms(self) -> tuple[str, ...]:  # type: ignore[override]
        """The other order of the Hessian-vector product: reverse over reverse beside an adapter's
        own `hessian_vector` (JAX's forward over reverse), or forward over reverse (`jvp` of
        `grad`) beside the default one, for an engine with a forward mode."""
        if type(self).hessian_vector is not FunctionAdapter.hessian_vector:
            return (REVERSE_OVER_REVERSE,)
        return (FORWARD_OVER_REVERSE,) if self.forward_mode else ()

    def vectorize(self, f: Callable[..., Any]) -> Callable[..., Any]:
        """`f` mapped over the leading axis of every argument; by default a loop over the points."""

        def mapped(*args: Arrays) -> Any:
            k = len(args[0][0])
            results = [f(*[[a[p] for a in arg] for arg in args]) for p in range(k)]
            return [
                [np.stack([self.to_numpy(r[i][j]) for r in results]) for j in range(len(results[0][i]))]
                for i in range(len(results[0]))
            ]

        return mapped

    def compile(self, f: Callable[..., Any]) -> Callable[..., Any]:
        """`f` compiled by the engine (e.g. `jax.jit`); by default `f` itself."""
        return f

    def array(self, x: np.ndarray) -> Any:
        """A float64 numpy array (or float) as an engine array."""
        return self.xp.asarray(x, dtype=np.float64)

    def to_numpy(self, a: Any) -> np.ndarray:
        """An engine array as a float64 numpy array."""
        return np.asarray(a, dtype=np.float64)

    def op(self, name: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        """Registry op `name` on engine arrays, spelled with `xp` (the registry entry's `array`)."""
        return REGISTRY[name].array(self.xp, args, attrs)

    def spelled_op(self, name: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        """`op`, or for attributes naming one of the adapter's spellings (`spelling`), that
        spelling's rule; either way without the spelling among the attributes."""
        if SPELLING not in attrs:
            return self.op(name, args, attrs)
        plain = {k: v for k, v in attrs.items() if k != SPELLING}
        return rule_of(adapter_spellings(self), name, attrs[SPELLING]).rule(self.xp, args, plain)

    # --- what the harness calls ------------------------------------------------------------------

    def _weighted_sum(self, outputs: Sequence[Any], cotangent: Arrays) -> Any:
        xp = self.xp
        return sum(xp.sum(c * o) for c, o in zip(cotangent, outputs))

    def compile_graph(self, graph: Graph) -> CompiledGraph:
        """The graph's vectorised (forward, gradient) function and its HVP, made once per graph."""
        forward = graph_function(graph, self.spelled_op)

        def point(xs: Arrays, cots: Arrays) -> tuple[list[Any], Sequence[Any]]:
            return forward(xs), list(self.grad(lambda ys: self._weighted_sum(forward(ys), cots))(xs))

        def hvp(xs: Arrays, cots: Arrays, v: Arrays) -> Sequence[Any]:
            return list(self.hessian_vector(lambda ys: self._weighted_sum(forward(ys), cots))(xs, v))

        points, hvp_at = self.compile(self.vectorize(point)), self.compile(hvp)
        return CompiledGraph(
            lambda xs, cots: points(self._arrays(xs), self._arrays(cots)),
            lambda xs, cots, v: hvp_at(self._arrays(xs), self._arrays(cots), self._arrays(v)),
        )

    def _arrays(self, values: Arrays) -> list[Any]:
        return [self.array(v) for v in values]

    def _compiled(self, graph: Graph) -> CompiledGraph:
        cached = getattr(self, "_cache", None)
        if cached is None or cached[0] is not graph:
            cached = self._cache = (graph, self.compile_graph(graph))
        return cached[1]

    def run_points(
        self, graph: Graph, points: Sequence[Sequence[Any]], cotangents: Sequence[Sequence[Any]]
    ) -> Iterator[tuple[list[Any], list[Any]]]:
        """Every point in one vectorised call; then the (forward, gradients) of each point in turn."""
        if not points:
            return
        inputs = [
            np.stack([np.asarray(p[i], dtype=np.float64) for p in points]) for i in range(len(points[0]))
        ]
        cots = [
            np.stack([np.asarray(c[j], dtype=np.float64) for c in cotangents])
            for j in range(len(cotangents[0]))
        ]
        forward, grads = self._compiled(graph).points(inputs, cots)
        forward = [self.to_numpy(f) for f in forward]
        grads = [self.to_numpy(g) for g in grads]
        for p in range(len(points)):
            yield [f[p] for f in forward], [g[p] for g in grads]

    def run(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        return next(self.run_points(graph, [values], [cotangent]))

    def run_hvp(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any]
    ) -> list[Any]:
        hvp = self._compiled(graph).hvp
        result = hvp(
            *[[np.asarray(x, dtype=np.float64) for x in xs] for xs in (values, cotangent, direction)]
        )
        return [self.to_numpy(h) for h in result]

    def run_jvp(
        self, graph: Graph, values: Sequence[Any], direction: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        jvp = self.jvp(graph_function(graph, self.spelled_op))
        if jvp is None:
            raise NotImplementedError(f"engine {self.name!r} has no forward mode")
        outputs, tangents = jvp(self._arrays(values), self._arrays(direction))
        return [self.to_numpy(o) for o in outputs], [self.to_numpy(t) for t in tangents]

    def run_hvp_transform(
        self,
        name: str,
        graph: Graph,
        values: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        """The Hessian-vector product in the order `name` says, uncompiled (`hvp_transforms`)."""
        forward, cots = graph_function(graph, self.spelled_op), self._arrays(cotangent)

        def weighted(ys: Arrays) -> Any:
            return self._weighted_sum(forward(ys), cots)

        if name not in self.hvp_transforms:
            raise NotImplementedError(f"engine {self.name!r} has no Hessian-vector product by {name!r}")
        xs, v = self._arrays(values), self._arrays(direction)
        if name == REVERSE_OVER_REVERSE:
            result = FunctionAdapter.hessian_vector(self, weighted)(xs, v)
        else:  # forward over reverse, listed only for an adapter with `jvp`
            result = self.jvp(lambda ys: list(self.grad(weighted)(ys)))(xs, v)[1]
        return [self.to_numpy(h) for h in result]

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        """torch's numbers, then this adapter's on the graph through `run` (a function-style
        adapter has no leaves to build the graph from); None without a spec to load it by."""
        return None if self.spec is None else run_snippet(graph, self.spec, second_order)

    def missing_methods(self) -> list[str]:
        return [name for name in ("xp", "grad") if _not_overridden(type(self), FunctionAdapter, name)]


def _not_overridden(cls: type, base: type, name: str) -> bool:
    return getattr(cls, name) is getattr(base, name)
