"""Scalar graphs on one compiled JAX program, so a campaign compiles a handful of times, not per graph.

`jax.jit` compiles per function, and every random graph is a new function: compiling took ~0.4 s
a graph, far more than checking it. Here a scalar graph becomes data (an op code and two argument
slots per node) for one program that steps through the nodes with `lax.scan`; the program is
compiled once per padded size (up to 4 inputs, 128 nodes and 4 outputs: one size for every
graph a campaign draws; larger ones round up to powers of two).

Each step runs the node's op through `lax.switch` over every op the machine knows, each spelled
by the adapter (`op`). The op code is the same at every point (only the values are mapped over),
so the switch stays a real branch: only the node's op runs, and its gradient is JAX's own rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.engines.functional import Arrays, CompiledGraph
from gradcheck.graphs.ir import SPELLING, Graph
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS
from gradcheck.graphs.spellings import Form

SAFE = 1.0  # the value of a padding input (its gradient is dropped)

Branch = tuple[str, dict[str, Any]]


def branches(forms: Sequence[Form] = ()) -> list[Branch]:
    """The machine's op codes: each scalar op, and pow_const once per exponent the generator
    draws; then each of the adapter's spellings `forms` of them likewise (an integer exponent's
    at the integer exponents alone)."""
    out: list[Branch] = []
    spelled: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in SCALAR_OPS]
    spelled += [(f.op, {SPELLING: f.name}) for f in forms if f.op in SCALAR_OPS]
    integer = {f.name for f in forms if f.integer_exponent}
    for name, extra in spelled:
        if name == "pow_const":
            exponents = REGISTRY[name].attrs["exponent"]
            if extra.get(SPELLING) in integer:
                exponents = tuple(c for c in exponents if float(c).is_integer())
            out += [(name, {"exponent": c, **extra}) for c in exponents]
        else:
            out.append((name, extra))
    return out


def _bucket(n: int, *sizes: int) -> int:
    """The first of `sizes` that holds n, else the next power of two (few sizes: few compilations)."""
    fits = [s for s in sizes if s >= n]
    return fits[0] if fits else 1 << max(0, n - 1).bit_length()


def _operand_ids(graph: Graph) -> list[list[int]]:
    """Each node's operands as ids: graph ids for arguments, -k - 1 for the graph's k-th constant."""
    count = iter(range(sum(len(node.consts) for node in graph.nodes)))
    ids = list(range(graph.n_inputs + len(graph.nodes)))
    return [node.operands(ids, lambda c: -next(count) - 1) for node in graph.nodes]


class GraphMachine:
    """Compiled once per padded size; `compile(graph)` returns the graph's functions, or None when the
    graph uses something the machine does not have (tensors, an exponent it has no code for)."""

    def __init__(
        self, jax: Any, op: Callable[[str, Sequence[Any], dict[str, Any]], Any], forms: Sequence[Form] = ()
    ) -> None:
        self.jax, self.op = jax, op
        self.branches = branches(forms)
        self.codes = {
            (name, tuple(sorted(attrs.items()))): i for i, (name, attrs) in enumerate(self.branches)
        }
        lax = jax.lax
        jnp = jax.numpy

        def branch(name: str, attrs: dict[str, Any]) -> Callable[[Any, Any], Any]:
            arity = REGISTRY[name].arity
            return lambda x, y: self.op(name, [x, y][:arity], attrs)

        table = [branch(name, attrs) for name, attrs in self.branches]

        def step(values: Any, node: Any) -> tuple[Any, None]:
            slot, code, first, second = node
            out = lax.switch(code, table, values[first], values[second])  # only the node's op runs
            return values.at[slot].set(out), None

        def forward(xs: Any, program: tuple[Any, ...]) -> Any:
            slots, codes, first, second, outputs, constants = program
            values = jnp.concatenate([xs, constants, jnp.zeros(slots.shape[0], dtype=xs.dtype)])
            values, _ = lax.scan(step, values, (slots, codes, first, second))
            return values[outputs]

        def loss(xs: Any, cots: Any, program: tuple[Any, ...]) -> Any:
            return jnp.sum(cots * forward(xs, program))

        def point(xs: Any, cots: Any, program: tuple[Any, ...]) -> tuple[Any, Any]:
            return forward(xs, program), jax.grad(loss)(xs, cots, program)

        def hvp(xs: Any, cots: Any, v: Any, program: tuple[Any, ...]) -> Any:
            return jax.jvp(lambda ys: jax.grad(loss)(ys, cots, program), (xs,), (v,))[1]

        self._points = jax.jit(jax.vmap(point, in_axes=(0, 0, None)))
        self._hvp = jax.jit(hvp)

    def compile(self, graph: Graph) -> CompiledGraph | None:
        if graph.is_tensor:
            return None
        codes = []
        for node in graph.nodes:
            code = self.codes.get((node.op, tuple(sorted(node.attrs))))
            if code is None:
                return None
            codes.append(code)
        n_in, n_out = graph.n_inputs, len(graph.outputs)
        constants = [c.value for node in graph.nodes for c in node.consts]
        width, length, out_width = _bucket(n_in, 4), _bucket(len(codes), 128), _bucket(n_out, 4)
        const_width = _bucket(len(constants), 64)
        operands = _operand_ids(graph)

        def slot(i: int) -> int:  # an operand id (inputs, constants, nodes) as a slot of the values
            if i < 0:  # constant number -i - 1
                return width - i - 1
            return i if i < n_in else width + const_width + i - n_in

        pad = length - len(codes)
        neg = self.codes[("neg", ())]
        program = (
            np.arange(width + const_width, width + const_width + length, dtype=np.int32),
            np.array(codes + [neg] * pad, dtype=np.int32),
            np.array([slot(ids[0]) for ids in operands] + [0] * pad, dtype=np.int32),
            np.array([slot(ids[-1]) for ids in operands] + [0] * pad, dtype=np.int32),
            np.array([slot(o) for o in graph.outputs] + [0] * (out_width - n_out), dtype=np.int32),
            np.array(constants + [SAFE] * (const_width - len(constants)), dtype=np.float64),
        )

        def padded(columns: Arrays, size: int, fill: float) -> np.ndarray:
            stacked = np.stack([np.asarray(c, dtype=np.float64) for c in columns], axis=-1)
            extra = np.full((*stacked.shape[:-1], size - stacked.shape[-1]), fill)
            return np.concatenate([stacked, extra], axis=-1)

        def points(inputs: Arrays, cotangents: Arrays) -> tuple[list[Any], list[Any]]:
            out, grads = self._points(
                padded(inputs, width, SAFE), padded(cotangents, out_width, 0.0), program
            )
            out, grads = np.asarray(out), np.asarray(grads)
            return [out[:, j] for j in range(n_out)], [grads[:, i] for i in range(n_in)]

        def hvp(xs: Arrays, cots: Arrays, v: Arrays) -> list[Any]:
            result = self._hvp(
                padded(xs, width, SAFE), padded(cots, out_width, 0.0), padded(v, width, 0.0), program
            )
            return [np.asarray(result)[i] for i in range(n_in)]

        return CompiledGraph(points, hvp)
