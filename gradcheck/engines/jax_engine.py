"""JAX (float64, CPU) as an engine under test: all points of a check in one `vmap` call, scalar
graphs on one program compiled per size (`jax_machine`), tensor graphs run eagerly (XLA takes
longer to compile a graph than a check evaluates it), and the Hessian-vector product forward over
reverse (`jvp` of `grad`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradcheck.engines.functional import Arrays, CompiledGraph, FunctionAdapter, Jvp, graph_function
from gradcheck.engines.jax_machine import GraphMachine
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.spellings import Spelling, adapter_spellings, array_module_spellings
from gradcheck.graphs.surface import LATEST

# The ops JAX spells itself (the rest are numpy spellings through jax.numpy).
_NN_OPS: dict[str, Callable[[Any, Sequence[Any], dict[str, Any]], Any]] = {
    "relu": lambda nn, a, k: nn.relu(a[0]),
    "sigmoid": lambda nn, a, k: nn.sigmoid(a[0]),
    "softmax": lambda nn, a, k: nn.softmax(a[0], axis=k["dim"]),
    "log_softmax": lambda nn, a, k: nn.log_softmax(a[0], axis=k["dim"]),
}


# The other spellings jax.numpy documents for the ops, and the integer exponents `**` takes: a
# Python int (lax.integer_pow) or an integer array (lax.pow with an integer exponent). pow's
# constant exponent is data to the compiled machine, so it is an integer array only.
JAX_SPELLINGS = (
    *array_module_spellings("jnp"),
    Spelling(
        "pow",
        "x ** int array",
        lambda xp, a, k: a[0] ** xp.asarray(a[1]).astype(xp.int64),
        integer_exponent=True,
    ),
)

_MACHINES: dict[tuple[Any, ...], GraphMachine] = {}


def _jax() -> Any:
    import jax

    jax.config.update("jax_enable_x64", True)  # the harness compares in float64
    return jax


class JaxAdapter(FunctionAdapter):
    """jax.numpy arrays; `jax.grad`, `jax.vmap` over the points, `jax.jit` once per size of graph."""

    name = "jax"
    registry_release = LATEST  # a built-in adapter handles every form of its ops
    ops = frozenset(SCALAR_OPS)
    spellings = JAX_SPELLINGS

    def __init__(self) -> None:
        self.jax = _jax()

    @property
    def _machine(self) -> GraphMachine:
        """One machine per spelling of the ops (`op` and `spellings`) and process (the checker and
        the shrinker share it)."""
        spellings = adapter_spellings(self)
        key = (type(self).op, spellings)
        machine = _MACHINES.get(key)
        if machine is None:
            forms = [s.form for s in spellings]
            machine = _MACHINES[key] = GraphMachine(self.jax, self.spelled_op, forms)
        return machine

    def compile_graph(self, graph: Graph) -> CompiledGraph:
        """Scalar graphs run on the shared compiled machine; the rest are traced and compiled each."""
        return self._machine.compile(graph) or super().compile_graph(graph)

    @property
    def xp(self) -> Any:
        return self.jax.numpy

    def grad(self, f: Callable[[Arrays], Any]) -> Callable[[Arrays], Sequence[Any]]:
        return self.jax.grad(f)

    def hessian_vector(self, f: Callable[[Arrays], Any]) -> Callable[[Arrays, Arrays], Sequence[Any]]:
        grad_f = self.jax.grad(f)
        return lambda xs, v: self.jax.jvp(grad_f, (list(xs),), (list(v),))[1]

    def jvp(self, f: Callable[[Arrays], list[Any]]) -> Jvp:
        return lambda xs, v: self.jax.jvp(f, (list(xs),), (list(v),))

    def vectorize(self, f: Callable[..., Any]) -> Callable[..., Any]:
        return self.jax.vmap(f)

    # Scalar graphs are checked compiled (the machine, under `jax.jit`): the eager gradient is the
    # transform, so that each graph's gradient is taken both with and without jit.
    transforms = ("jax eager",)

    def run_transform(
        self, name: str, graph: Graph, points: Sequence[Sequence[Any]], cotangents: Sequence[Sequence[Any]]
    ) -> list[list[Any]]:
        """The gradient at the first point without `jax.jit` ("jax eager")."""
        if name not in self.transforms:
            raise NotImplementedError(f"engine {self.name!r} has no transform {name!r}")
        return [self._gradient(graph, points[0], cotangents[0], compiled=False)]

    def _gradient(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], compiled: bool
    ) -> list[Any]:
        """The cotangent-weighted gradient at one point, eagerly or under `jax.jit`."""
        forward = graph_function(graph, self.spelled_op)
        grad = self.grad(lambda ys, cots: self._weighted_sum(forward(ys), cots))
        at = self.jax.jit(grad) if compiled else grad
        return [self.to_numpy(g) for g in at(self._arrays(values), self._arrays(cotangent))]

    def op(self, name: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if name in _NN_OPS:
            return _NN_OPS[name](self.jax.nn, args, attrs)
        return super().op(name, args, attrs)


class JaxTensorAdapter(JaxAdapter):
    """JAX on tensor graphs (every registry op)."""

    name = "jax-tensor"
    ops = frozenset(TENSOR_OPS)
    tensor = True
    # Tensor graphs are checked eagerly; `jax.jit` of every one would compile each once more, which
    # costs more than its check, so the compiled gradient is the transform of the one-op graphs
    # alone (op isolation, edge values): each op's rules under jit
    transforms = ("jax.jit of one-op graphs",)

    def run_transform(
        self, name: str, graph: Graph, points: Sequence[Sequence[Any]], cotangents: Sequence[Sequence[Any]]
    ) -> list[list[Any]]:
        """The gradient at the first point under `jax.jit`, for a graph of one op."""
        if name not in self.transforms:
            raise NotImplementedError(f"engine {self.name!r} has no transform {name!r}")
        if len(graph.nodes) != 1:
            raise NotImplementedError("jax.jit is checked on one-op tensor graphs only (cost)")
        return [self._gradient(graph, points[0], cotangents[0], compiled=True)]
