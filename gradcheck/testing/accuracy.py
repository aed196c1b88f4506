"""The registry's accuracy figures (`OpSpec.accuracy`), measured.

Each op is evaluated alone, at many points of its domain, by engines whose math is each of the
libraries engines are written with: torch (its kernels and autograd), Python's `math` (minigrad's
Value, micrograd, and `TextbookValue`: the textbook derivative formulas in Python floats,
`1 / cosh(x) ** 2` for tanh, `x ** -1` for division, as hand-written engines spell them), numpy
(`TinyValue`: the registry's numpy forward and derivatives; minigrad's Tensor) and JAX and HIPS
autograd. Their forward values, cotangent-weighted gradients and (engines with second
derivatives) Hessian-vector products are compared with the exact ones (`testing.exact`: mpmath
for scalar ops, long-double HIPS autograd for tensor ops).

`measure(op)` gives each engine's largest error as a multiple of the bound `parity.bound`
computes for the one-op graph from the registry's figures (at most 1 when the figures hold;
Hessian-vector products at most `errors.HVP_SAFETY`) and the figures each engine needs;
`graphs/tests/test_op_accuracy.py` fails when a figure is understated, and
`benchmarks/op_accuracy.py` prints the table the figures were chosen from.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import load_engine
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.opspec import Accuracy
from gradcheck.graphs.registry import MAX_MAGNITUDE, REGISTRY, SCALAR_OPS, in_domain
from gradcheck.graphs.shapes import graph_shapes
from gradcheck.parity.bound import entry_bounds
from gradcheck.parity.runs import random_cotangent
from gradcheck.testing import exact
from gradcheck.testing.broken_engines import TinyAdapter, TinyValue

# The engines measured, by the library their math comes from.
SCALAR_ENGINES: dict[str, str] = {
    "torch": "gradcheck.engines.torch_engine:TorchAdapter",
    "math (minigrad)": "minigrad",
    "math (micrograd)": "gradcheck.engines.micrograd:MicrogradFixedAdapter",
    "math (textbook)": "gradcheck.testing.accuracy:TextbookAdapter",
    "numpy (registry)": "gradcheck.testing.accuracy:NumpyAdapter",
    "jax": "jax",
    "autograd": "autograd",
}
TENSOR_ENGINES: dict[str, str] = {
    "torch": "gradcheck.engines.torch_engine:TorchAdapter",
    "numpy (minigrad)": "minigrad-tensor",
    "jax": "jax-tensor",
    "autograd": "autograd-tensor",
}
# Scalar points: magnitudes log-uniform over the range graph nodes take (tiny inputs to
# MAX_MAGNITUDE), and as many of the generator's own O(1) draws.
MAGNITUDES = (-12.0, math.log10(MAX_MAGNITUDE))


class TextbookValue(TinyValue):
    """A scalar engine in Python floats with the textbook formulas hand-written engines use."""

    __slots__ = ()
    FORWARD: ClassVar[dict[str, Any]] = {
        "div": lambda a, b: a * b**-1.0,
        "sqrt": lambda x: x**0.5,
        "tanh": math.tanh,
        "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
        "exp": math.exp,
        "log": math.log,
        "sin": math.sin,
        "cos": math.cos,
        "atan": math.atan,
        "atan2": math.atan2,
        "pow": lambda a, b: a**b,
    }
    GRADS: ClassVar[dict[str, Any]] = {
        "div": lambda a, b, out: (b**-1.0, -a * b**-2.0),
        "sqrt": lambda x, out: (0.5 * x**-0.5,),
        "tanh": lambda x, out: (1.0 / math.cosh(x) ** 2,),
        "sigmoid": lambda x, out: (math.exp(-x) / (1.0 + math.exp(-x)) ** 2,),
        "exp": lambda x, out: (math.exp(x),),
        "log": lambda x, out: (x**-1.0,),
        "sin": lambda x, out: (math.cos(x),),
        "cos": lambda x, out: (-math.sin(x),),
        "atan": lambda x, out: (1.0 / (1.0 + x**2),),
        "atan2": lambda y, x, out: (x / (x**2 + y**2), -y / (x**2 + y**2)),
        "pow": lambda a, b, out: (b * a ** (b - 1.0), out * math.log(a)),
    }

    @classmethod
    def apply(cls, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> TinyValue:
        if op not in cls.FORWARD:
            return super().apply(op, args, attrs)
        nodes = tuple(a if isinstance(a, TinyValue) else cls(float(a)) for a in args)
        node = cls(float(cls.FORWARD[op](*[a.data for a in nodes])), op, nodes, attrs)
        node.reflected = len(args) == 2 and not isinstance(args[0], TinyValue)
        return node

    def local_grads(self) -> tuple[float, ...]:
        if self.op not in self.GRADS:
            return super().local_grads()
        return self.GRADS[self.op](*[a.data for a in self.args], self.data)


class TextbookAdapter(TinyAdapter):
    """`TextbookValue` through the adapter protocol."""

    name = "textbook"
    value_type = TextbookValue


class NumpyAdapter(TinyAdapter):
    """The registry's numpy forward and local derivatives (numpy float64 scalars)."""

    name = "numpy"


@dataclass
class Measured:
    """One op and engine: the worst error as a multiple of the bound (value, each operand's
    gradient and Hessian-vector product entry: none for an engine without second derivatives),
    and the figures the engine needs (`Accuracy.value`, `Accuracy.grads`)."""

    op: str
    engine: str
    points: int
    value_ratio: float
    grad_ratio: tuple[float, ...]
    value_needed: float
    grads_needed: tuple[float, ...]
    hvp_ratio: tuple[float, ...] = ()


def measure(
    op: str, engines: dict[str, str] | None = None, points: int = 400, seed: int = 0
) -> list[Measured]:
    """Each engine's errors on op `op` alone at `points` points of its domain (several graphs
    when the op draws attributes), against the exact results."""
    spec = REGISTRY[op]
    scalar = op in SCALAR_OPS
    if engines is None:
        engines = SCALAR_ENGINES if scalar else TENSOR_ENGINES
    rng = np.random.default_rng(seed)
    graphs = scalar_graphs(op, rng, points) if scalar else tensor_graphs(op, rng, points)
    found: list[Measured] = []
    for label, name in engines.items():
        adapter = load_engine(name)
        if op not in adapter.ops:
            continue
        parts = [_errors(graph, adapter, scalar) for graph in graphs]
        parts = [p for p in parts if p is not None]
        if not parts:
            continue
        found.append(_summary(op, label, parts, spec.arity))
    return found


@dataclass
class _Errors:
    """One graph's errors and the bound's parts at each point."""

    points: int
    value_error: np.ndarray  # (K,)
    grad_error: np.ndarray  # (n_in, K): the gradient of each graph input
    positions: list[int]  # the operand position of each flattened gradient entry
    bound: Any  # EntryBounds with the registry's figures
    value_unit: np.ndarray  # the forward bound per ulp of `value`
    grad_base: np.ndarray  # the gradient bound with `value` 1 and no `grads`
    grad_unit: list[np.ndarray]  # per operand position: the gradient bound per ulp of `grads[j]`
    grad_none: np.ndarray  # the gradient bound with no figures at all (sums of terms only)
    value_none: np.ndarray  # the forward bound with no figures at all
    hvp: _HvpErrors | None = None


@dataclass
class _HvpErrors:
    """One graph's Hessian-vector product errors and their bound."""

    error: np.ndarray  # (n_in, K)
    bound: np.ndarray


def _errors(graph: Graph, adapter: EngineAdapter, scalar: bool) -> _Errors | None:
    spec = REGISTRY[graph.nodes[0].op]
    k = graph.n_points
    rng = np.random.default_rng(k)
    if scalar:
        cot = random_cotangent(rng, (1, k))
        points = [[float(p[i]) for p in graph.points] for i in range(k)]
        cotangents = [[float(cot[0, i])] for i in range(k)]
        batch: list[Any] = [np.asarray(p) for p in graph.points]
        cot_batch: Any = cot
    else:
        shape = graph_shapes(graph)[graph.outputs[0]]
        cot_batch = [random_cotangent(rng, (k, *shape))]
        batch = [np.asarray(p) for p in graph.points]
        points = [[np.array(b[i]) for b in batch] for i in range(k)]
        cotangents = [[np.array(cot_batch[0][i])] for i in range(k)]
    try:
        results = list(adapter.run_points(graph, points, cotangents))
    except Exception:  # an engine that cannot take these points is measured elsewhere
        return None
    forward = np.array([np.ravel(np.asarray(r[0][0], dtype=np.float64)) for r in results])  # (K, F)
    grads = np.array(
        [np.concatenate([np.ravel(np.asarray(g, dtype=np.float64)) for g in r[1]]) for r in results]
    )
    reference = exact.mp_exact if scalar else exact.long_double_exact
    exact_forward, exact_grads = reference(graph, batch, cot_batch)
    with np.errstate(invalid="ignore"):  # in long double: the exact results keep their last bits
        value_error = np.abs(forward.astype(np.longdouble) - exact_forward).astype(np.float64).T
        grad_error = np.abs(grads.astype(np.longdouble) - exact_grads).astype(np.float64).T
    node = graph.nodes[0]
    position_of = dict(zip(node.args, _positions(node)))
    positions = [  # the operand position of each flattened gradient entry (-1: an unused input)
        position_of.get(i, -1) for i, inp in enumerate(graph.inputs) for _ in range(math.prod(inp.shape))
    ]
    figures = spec.accuracy
    arity = spec.arity
    with _accuracy(spec.name, dataclasses.replace(figures, value=1.0, grads=(0.0,) * arity)):
        unit = entry_bounds(graph, batch, cot_batch)
    with _accuracy(spec.name, dataclasses.replace(figures, value=0.0, grads=(0.0,) * arity)):
        none = entry_bounds(graph, batch, cot_batch)
    grad_unit = []
    for j in range(arity):
        grads_j = tuple(1.0 if i == j else 0.0 for i in range(arity))
        with _accuracy(spec.name, dataclasses.replace(figures, value=0.0, grads=grads_j)):
            grad_unit.append(entry_bounds(graph, batch, cot_batch).grads - none.grads)
    hvp = _hvp_errors(graph, adapter, batch, cot_batch, rng, scalar) if adapter.create_graph else None
    return _Errors(
        hvp=hvp,
        points=k,
        value_error=value_error,
        grad_error=grad_error,
        positions=positions,
        bound=entry_bounds(graph, batch, cot_batch),
        value_unit=unit.forward - none.forward,
        grad_base=unit.grads - none.grads,
        grad_unit=grad_unit,
        grad_none=none.grads,
        value_none=none.forward,
    )


def _hvp_errors(
    graph: Graph, adapter: EngineAdapter, batch: list[Any], cot: Any, rng: np.random.Generator, scalar: bool
) -> _HvpErrors | None:
    """The engine's Hessian-vector products along random directions against the exact ones."""
    k = graph.n_points
    direction = [rng.normal(size=np.shape(b)) for b in batch]
    products = []
    try:
        for p in range(k):
            values = [float(b[p]) if scalar else np.array(b[p]) for b in batch]
            cotangent = [float(c) for c in cot[:, p]] if scalar else [np.array(c[p]) for c in cot]
            dirs = [float(d[p]) if scalar else np.array(d[p]) for d in direction]
            hvp = adapter.run_hvp(graph, values, cotangent, dirs)
            products.append(np.concatenate([np.ravel(np.asarray(h, dtype=np.float64)) for h in hvp]))
    except Exception:  # an engine without these second derivatives is measured elsewhere
        return None
    truth = (exact.mp_exact_hvp if scalar else exact.long_double_exact_hvp)(graph, batch, cot, direction)
    with np.errstate(invalid="ignore"):
        error = np.abs(np.array(products).astype(np.longdouble) - truth).astype(np.float64).T
    return _HvpErrors(error, entry_bounds(graph, batch, cot, direction=direction).grads)


def _positions(node: OpNode) -> list[int]:
    """The operand position each argument node (graph input) of a one-op graph takes."""
    taken = {c.at for c in node.consts}
    return [i for i in range(node.arity) if i not in taken]


def _summary(op: str, label: str, parts: list[_Errors], arity: int) -> Measured:
    figures = REGISTRY[op].accuracy
    value_ratio, value_needed = 0.0, 0.0
    grad_ratio, grads_needed = [0.0] * arity, [0.0] * arity
    hvp_ratio = [0.0] * arity
    for e in parts:
        with np.errstate(divide="ignore", invalid="ignore"):
            value_ratio = max(value_ratio, _worst(e.value_error, e.bound.forward))
            unexplained = np.maximum(e.value_error - e.value_none, 0.0)
            value_needed = max(value_needed, _worst(unexplained, e.value_unit))
            for i, j in enumerate(e.positions):
                if j < 0:
                    continue
                grad_ratio[j] = max(grad_ratio[j], _worst(e.grad_error[i : i + 1], e.bound.grads[i : i + 1]))
                explained = e.grad_none[i] + figures.value * e.grad_base[i]
                need = _worst(np.maximum(e.grad_error[i] - explained, 0.0)[None], e.grad_unit[j][i][None])
                grads_needed[j] = max(grads_needed[j], need)
                if e.hvp is not None:
                    hvp_ratio[j] = max(hvp_ratio[j], _worst(e.hvp.error[i : i + 1], e.hvp.bound[i : i + 1]))
    return Measured(
        op,
        label,
        sum(e.points for e in parts),
        value_ratio,
        tuple(grad_ratio),
        value_needed,
        tuple(grads_needed),
        tuple(hvp_ratio) if any(e.hvp is not None for e in parts) else (),
    )


def _worst(error: np.ndarray, bound: np.ndarray) -> float:
    """The largest error / bound (0 / 0 counts as 0; an error where the bound is 0 as inf)."""
    error = np.where(np.isfinite(error), error, 0.0)
    ratio = np.where(error == 0, 0.0, error / np.where(bound == 0, 0.0, bound))
    ratio = np.where((error > 0) & (bound == 0), np.inf, ratio)
    return float(ratio.max()) if ratio.size else 0.0


@contextlib.contextmanager
def _accuracy(op: str, accuracy: Accuracy) -> Iterator[None]:
    """The registry entry of `op` with other accuracy figures, for the duration."""
    spec = REGISTRY[op]
    REGISTRY[op] = dataclasses.replace(spec, accuracy=accuracy)
    try:
        yield
    finally:
        REGISTRY[op] = spec


# --- points ----------------------------------------------------------------------------------


def scalar_graphs(op: str, rng: np.random.Generator, points: int) -> list[Graph]:
    """One-op graphs of scalar op `op` holding `points` points in its domain between them: one
    per attribute value, and for binary ops with a number on either side too."""
    spec = REGISTRY[op]
    attr_sets = [dict(zip(spec.attrs, values)) for values in _product(list(spec.attrs.values()))] or [{}]
    layouts: list[tuple[Constant, ...]] = [()]
    if spec.arity == 2 and spec.number_operands:
        layouts += [(Constant(0, 0.0),), (Constant(1, 0.0),)]
    graphs = []
    each = max(8, -(-points // (len(attr_sets) * len(layouts))))
    for attrs in attr_sets:
        for consts in layouts:
            graph = _scalar_graph(spec.name, attrs, consts, rng, each)
            if graph is not None:
                graphs.append(graph)
    return graphs


def _product(options: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    result: list[tuple[Any, ...]] = [()]
    for values in options:
        result = [(*r, v) for r in result for v in values]
    return result


def _scalar_graph(
    op: str, attrs: dict[str, Any], consts: tuple[Constant, ...], rng: np.random.Generator, n: int
) -> Graph | None:
    spec = REGISTRY[op]
    n_args = spec.arity - len(consts)
    values: list[np.ndarray] = [np.zeros(0) for _ in range(spec.arity)]
    for _ in range(50):
        draw = [_draw(rng, 4 * n) for _ in range(spec.arity)]
        for c in consts:  # a constant: one value for all points, drawn like the others
            draw[c.at] = np.full(4 * n, float(draw[c.at][0]))
        with np.errstate(all="ignore"):
            out = spec.numpy(draw, attrs)
        ok = in_domain(spec, draw, attrs, np.asarray(out, dtype=np.float64))
        values = [np.concatenate([v, d[ok]]) for v, d in zip(values, draw)]
        if values[0].size >= n:
            break
        if consts:  # another constant
            continue
    if values[0].size == 0:
        return None
    values = [v[:n] for v in values]
    taken = {c.at for c in consts}
    consts = tuple(Constant(c.at, float(values[c.at][0])) for c in consts)
    args = [values[i] for i in range(spec.arity) if i not in taken]
    inputs = [Input(f"x{i}", float(a[0])) for i, a in enumerate(args)]
    node = OpNode(op, tuple(range(n_args)), tuple(sorted(attrs.items())), consts)
    return Graph(inputs, [node], [n_args], points=args)


def _draw(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of either sign: half log-uniform over MAGNITUDES, half the generator's O(1) draws."""
    wide = 10.0 ** rng.uniform(*MAGNITUDES, size=n)
    usual = rng.uniform(0.0, 2.0, size=n) * 10.0 ** rng.uniform(-0.7, 0.7, size=n)
    magnitude = np.where(rng.integers(0, 2, size=n) == 0, wide, usual)
    return magnitude * np.where(rng.integers(0, 2, size=n) == 0, -1.0, 1.0)


def tensor_graphs(op: str, rng: np.random.Generator, points: int) -> list[Graph]:
    """One-op tensor graphs of op `op`, 4 points each, `points` in all (as the generator draws
    them: shapes, attributes and values in the op's domain)."""
    sizes = Sizes(nodes=(1, 1), tensor_nodes=(1, 1), outputs=(1, 1), deep_every=0)
    graphs = []
    while sum(g.n_points for g in graphs) < points:
        graph = random_graph(rng, ops=[op], tensor=True, points=4, sizes=sizes)
        node = graph.nodes[0] if len(graph.nodes) == 1 else None
        if (
            node is not None
            and node.op == op
            and graph.outputs == [graph.n_inputs]
            and len(set(node.args)) == len(node.args)
        ):
            graphs.append(graph)
    return graphs
