"""Random expression graphs, built from a stream of choices so that any source of randomness works.

`build_graph` makes every decision through a `Chooser`: `random_graph` feeds it a seeded numpy
Generator (fast, for campaigns), `gradcheck.graphs.strategies` feeds it hypothesis draws (so hypothesis
shrinks graphs). Each node is evaluated on all K input points as it is added, and an op is only
applied to arguments that keep it inside its domain, away from its kinks and within sane
magnitudes at every point; so every generated graph is checkable at every point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.opspec import CONSTANTS
from gradcheck.graphs.registry import MAX_MAGNITUDE, REGISTRY, TENSOR_OPS, Chooser, in_domain, resolve_ops
from gradcheck.graphs.rng_stream import RngChooser, stream_chooser
from gradcheck.graphs.shapes import RANK, pad
from gradcheck.graphs.spellings import Forms, draw_form
from gradcheck.graphs.surface import allows


@dataclass(frozen=True)
class Sizes:
    """Size ranges (inclusive) of a random graph and how often it is a deep chain."""

    inputs: tuple[int, int] = (1, 4)
    nodes: tuple[int, int] = (1, 30)
    outputs: tuple[int, int] = (1, 3)
    deep_nodes: tuple[int, int] = (52, 70)
    deep_every: int = 10  # about one graph in this many is a deep chain (0: never)
    tensor_nodes: tuple[int, int] = (1, 20)  # tensor graphs (capped by `nodes`): arrays, keep them shorter


# About one input value in this many is exactly 0 (where `x ** 0` and friends have their bugs);
# ops whose domain excludes 0 are simply not applied there.
ZERO_EVERY = 12
# About one binary op node in this many takes a constant operand instead of a second node.
CONSTANT_EVERY = 3
# About one input value in this many is tiny, 1e-12 to 1e-6 in size beside the ordinary ones:
# where a formula that cancels (an exp-based tanh, (e^2x - 1) / (e^2x + 1)) loses its digits.
TINY_EVERY = 10
TINY_EXPONENTS = (-12.0, -6.0)
# About one tensor input in this many holds two equal entries along its last dim (ties).
TIE_EVERY = 6
# About one binary op node in this many takes the same node on both sides (x / x, x * x, and a
# tie of maximum(x, x)), where a rule that reads its operands apart has its bugs.
SAME_NODE_EVERY = 8


def sample_points(rng: np.random.Generator, n_inputs: int, k: int, tiny: bool = True) -> list[np.ndarray]:
    """K input points per input: mostly O(1) values of either sign, sometimes larger or smaller,
    sometimes exactly 0, and with `tiny` sometimes 1e-12 to 1e-6 in size (`TINY_EVERY`)."""
    points = []
    for _ in range(n_inputs):
        scale = 10.0 ** rng.uniform(-0.7, 0.7, size=k)
        values = rng.uniform(-2.0, 2.0, size=k) * scale
        if k == 1:  # the same draws as with size=1, at a quarter of numpy's cost
            if rng.integers(ZERO_EVERY) == 0:
                values[0] = 0.0
            if tiny and rng.integers(TINY_EVERY) == 0:  # numpy's power, as on the arrays below
                values = np.copysign(10.0 ** rng.uniform(*TINY_EXPONENTS, size=1), values)
        else:
            values[rng.integers(ZERO_EVERY, size=k) == 0] = 0.0
            if tiny:
                small = np.flatnonzero(rng.integers(TINY_EVERY, size=k) == 0)
                magnitudes = 10.0 ** rng.uniform(*TINY_EXPONENTS, size=small.size)
                values[small] = np.copysign(magnitudes, values[small])
        points.append(values)
    return points


def build_graph(
    chooser: Chooser,
    points: list[np.ndarray],
    ops: Sequence[str],
    n_nodes: int,
    n_outputs: int,
    chain: bool = False,
    variants: frozenset[str] | None = None,
    forms: Forms | None = None,
) -> Graph:
    """A graph over inputs with the given batch of `points` (one (K,) array per input).

    Every choice goes through `chooser`; choice 0 always means the simpler thing (the first op,
    the most recent node), so a shrinking chooser shrinks toward short chains of simple ops.
    `chain=True` builds a deep residual chain: each block applies a random op to the newest
    node h and then adds (or subtracts) the result back onto h, so gradients neither vanish nor
    skip the deep path. `variants`: the attribute variants an op may be drawn in
    (`gradcheck.graphs.surface`; None: all of them). `forms`: op -> the adapter's other
    spellings a node of it may be drawn in (`gradcheck.graphs.spellings`; None: none).
    """
    n_in = len(points)
    k = np.asarray(points[0]).shape[0]
    buf = np.empty((n_in + n_nodes + 1, k))
    for i, p in enumerate(points):
        buf[i] = p
    n = n_in
    nodes: list[OpNode] = []
    specs = [REGISTRY[op] for op in ops]
    residual = [REGISTRY[op] for op in ("add", "sub") if op in ops] if chain else []
    block_input = n_in - 1
    # with sane inputs every value is (nodes by their checks), and so is a bounded op's result
    # inside its domain (outside it the domain test rejects the candidate anyway)
    sane = _sane(buf[:n_in])
    attempts = 0
    begin_node = getattr(chooser, "begin_node", None)  # a chooser that can (hypothesis) draws a node at once
    with np.errstate(all="ignore"):  # out-of-domain candidates are computed, then rejected
        while len(nodes) < n_nodes and attempts < 4 * n_nodes + 8:
            attempts += 1
            if begin_node is not None:
                begin_node()
            grow = residual and nodes and nodes[-1].op not in ("add", "sub") and block_input != n - 1
            if grow and _append_residual(residual, buf, n, block_input, nodes):
                n += 1
                block_input = n - 1
                continue
            spec = chooser.choice(specs)
            if spec.attrs:
                attrs = spec.draw_attrs(chooser)
                attr = dict(attrs)
                if not allows(variants, spec.name, attr):
                    continue
            else:
                attrs, attr = (), _NO_ATTRS
            first = n - 1 if chain else _pick_recent(chooser, n)
            row = buf[first : first + 1]
            if spec.arity == 1:
                out = spec.numpy([row], attr)
                if not _row_ok(spec, [row], attr, out, not (sane and spec.bounded)):
                    continue
                args: tuple[int, ...] = (first,)
                new = out[0]
            else:
                left = chooser.integer(0, 1) == 0  # is the chosen node the left operand?
                if spec.number_operands and chooser.integer(1, CONSTANT_EVERY) == CONSTANT_EVERY:
                    c = Constant(1 if left else 0, chooser.choice(CONSTANTS))
                    made = with_constant(spec, row, c, attr)
                    if made is None:
                        continue
                    nodes.append(draw_form(chooser, forms, OpNode(spec.name, (first,), attrs, (c,))))
                    buf[n] = made
                    n += 1
                    continue
                if chooser.integer(1, SAME_NODE_EVERY) == SAME_NODE_EVERY:
                    pair = [row, row]
                    out = spec.numpy(pair, attr)
                    if _row_ok(spec, pair, attr, out):
                        nodes.append(draw_form(chooser, forms, OpNode(spec.name, (first, first), attrs)))
                        buf[n] = out[0]
                        n += 1
                        continue
                values = buf[:n]  # every node as the other operand, at once
                pair = [row, values] if left else [values, row]
                outs = spec.numpy(pair, attr)
                if outs.shape != values.shape:
                    outs = np.broadcast_to(outs, values.shape)
                candidates = _valid_rows(spec, pair, attr, outs, not (sane and spec.bounded))
                if candidates.size == 0:
                    continue
                other = int(candidates[-1 - chooser.integer(0, candidates.size - 1)])
                args = (first, other) if left else (other, first)
                new = outs[other]
            nodes.append(draw_form(chooser, forms, OpNode(spec.name, args, attrs)))
            buf[n] = new
            n += 1
    _end_nodes(chooser)
    n_total = n_in + len(nodes)
    if not nodes:
        outputs = [0]
    else:
        outputs = [n_total - 1]
        for _ in range(n_outputs - 1):
            o = n_in + chooser.integer(0, len(nodes) - 1)
            if o not in outputs:
                outputs.append(o)
    inputs = [Input(f"x{i}", float(points[i][0])) for i in range(n_in)]
    batch = [np.asarray(p, dtype=np.float64).copy() for p in points]
    return Graph(inputs, nodes, outputs, batch if batch[0].shape[0] > 1 else None)


# The attributes of an op without any (shared: the ops only read them).
_NO_ATTRS: dict[str, Any] = {}


def with_constant(spec: Any, row: np.ndarray, c: Constant, attr: dict[str, Any]) -> np.ndarray | None:
    """The op on a (1, K) argument row and constant `c` (values (K,)), None when out of domain
    (as the random graphs judge it: also the isolation pass's cases with a number)."""
    pair = [row, c.value] if c.at == 1 else [c.value, row]
    out = spec.numpy(pair, attr)
    if np.shape(out) != row.shape:
        out = np.broadcast_to(out, row.shape)
    if not _row_ok(spec, pair, attr, out):
        return None
    return out[0]


def _append_residual(
    residual: list[Any], buf: np.ndarray, n: int, block_input: int, nodes: list[OpNode]
) -> bool:
    """Append `block_input +/- newest` when that stays well-conditioned; False when neither does."""
    for spec in residual:
        pair = [buf[block_input : block_input + 1], buf[n - 1 : n]]
        out = spec.numpy(pair, _NO_ATTRS)
        if _row_ok(spec, pair, _NO_ATTRS, out):
            nodes.append(OpNode(spec.name, (block_input, n - 1)))
            buf[n] = out[0]
            return True
    return False


def _row_ok(
    spec: Any, args: list[Any], attr: dict[str, Any], out: np.ndarray, magnitude: bool = True
) -> bool:
    """`in_domain` at every point of a (1, K) row, in as few numpy calls as may be (each costs
    more than the arithmetic here). `magnitude=False` skips `_sane`: a bounded op's result on
    sane arguments inside its domain is sane."""
    if magnitude and not _sane(out):
        return False
    return spec.domain is None or _all(spec.domain(args, attr))


def _sane(values: np.ndarray) -> bool:
    """Every value finite and at most MAX_MAGNITUDE in size (NaN compares false)."""
    if values.size == 1:  # one point: a float comparison, no numpy call
        return -MAX_MAGNITUDE <= values.item() <= MAX_MAGNITUDE
    return np.count_nonzero(np.abs(values) <= MAX_MAGNITUDE) == values.size


def _all(mask: Any) -> bool:
    """Every element of a boolean array (or bool) true, by the cheapest test for its size."""
    size = getattr(mask, "size", 1)
    return bool(mask) if size == 1 else np.count_nonzero(mask) == size


def _begin_node(chooser: Chooser) -> None:
    """Let a chooser that can (hypothesis) draw one node's decisions at once."""
    begin = getattr(chooser, "begin_node", None)
    if begin is not None:
        begin()


def _end_nodes(chooser: Chooser) -> None:
    end = getattr(chooser, "end_nodes", None)
    if end is not None:
        end()


def _pick_recent(chooser: Chooser, n: int) -> int:
    """A node id, 0 meaning the newest: half the time the newest, else any (uniform for an RNG)."""
    if chooser.integer(0, 1) == 0:
        return n - 1
    return n - 1 - chooser.integer(0, n - 1)


def _valid_rows(
    spec: Any, args: list[np.ndarray], attr: dict[str, Any], outs: np.ndarray, magnitude: bool = True
) -> np.ndarray:
    """For a (candidates, K) batch: the indices of the candidate rows valid at every point
    (`_row_ok` per row)."""
    if magnitude:
        ok = np.abs(outs) <= MAX_MAGNITUDE
        if spec.domain is not None:
            ok &= spec.domain(args, attr)
    elif spec.domain is not None:
        ok = np.broadcast_to(spec.domain(args, attr), outs.shape)
    else:
        ok = np.ones(outs.shape, dtype=bool)
    if ok.shape[1] > 1:
        ok = np.logical_and.reduce(ok, axis=1)
    return ok.nonzero()[0]


def random_graph(
    rng: np.random.Generator,
    ops: Sequence[str] | None = None,
    tensor: bool = False,
    points: int = 1,
    sizes: Sizes = Sizes(),
    variants: frozenset[str] | None = None,
    positive: bool = False,
    forms: Forms | None = None,
) -> Graph:
    """A random graph drawn from `rng` (seeded numpy Generator): the campaign's generator.

    ops: registry op names to draw from (None: every scalar op). points: how many input points
    the graph carries (check_graph checks all of them in one torch pass). About one graph in
    `sizes.deep_every` is a deep chain of 52-70 ops. variants: the attribute variants the ops
    may be drawn in (None: every one; see `gradcheck.graphs.surface`). positive: the inputs'
    magnitudes only, so that one op whose domain is x > 0 (log, sqrt) can be applied to an input
    at every one of many points (and every element). forms: the adapter's other spellings of
    the ops (`gradcheck.graphs.spellings`).
    """
    if tensor:
        return random_tensor_graph(
            rng, ops=ops, points=points, sizes=sizes, variants=variants, positive=positive, forms=forms
        )
    op_names = resolve_ops(ops)
    chooser = RngChooser(rng)
    n_inputs = chooser.integer(*sizes.inputs)
    deep = sizes.deep_every > 0 and chooser.integer(1, sizes.deep_every) == 1
    n_nodes = chooser.integer(*(sizes.deep_nodes if deep else sizes.nodes))
    n_outputs = chooser.integer(*sizes.outputs)
    pts = sample_points(rng, n_inputs, points)
    if positive:
        pts = [np.abs(p) for p in pts]
    with stream_chooser(rng) as fast:  # the same draws as `chooser`, faster
        graph = build_graph(
            fast, pts, op_names, n_nodes, n_outputs, chain=deep, variants=variants, forms=forms
        )
    if deep:
        graph.meta["deep"] = True
    return graph


def graph_in_domain(graph: Graph) -> bool:
    """True when every op of `graph` is inside its domain, off its kinks and sane at every point.

    The generator guarantees this for what it builds; the shrinker uses it to keep its candidates
    to graphs the check can judge.
    """
    if graph.is_tensor:
        return tensor_graph_in_domain(graph)
    k = graph.n_points
    values = [np.asarray(p, dtype=np.float64) for p in graph.points] if graph.points is not None else None
    if values is None:
        values = [np.array([float(inp.value)]) for inp in graph.inputs]
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            spec = REGISTRY[node.op]
            args = node.operands([v[None, :] for v in values])
            out = spec.numpy(args, node.attr)
            if not in_domain(spec, args, node.attr, out).all():
                return False
            values.append(out[0])
    return len(values) == graph.n_inputs + len(graph.nodes) and k > 0


# --- tensor graphs -------------------------------------------------------------------------------

# Input shapes of tensor graphs: small, and mixing ranks so that broadcasting happens often.
TENSOR_SHAPES: tuple[tuple[int, ...], ...] = ((3,), (2, 3), (1, 3), (2, 1), (3, 2), (2, 2, 3), (2, 1, 3), ())


def build_tensor_graph(
    chooser: Chooser,
    shapes: Sequence[tuple[int, ...]],
    points: Sequence[np.ndarray],
    ops: Sequence[str],
    n_nodes: int,
    n_outputs: int,
    variants: frozenset[str] | None = None,
    forms: Forms | None = None,
) -> Graph:
    """A tensor graph over inputs of `shapes`, with K points per input (arrays of shape (K, *shape)).

    Binary elementwise ops pick a second argument of any broadcast-compatible shape, so operands
    of different shapes (broadcasting) are common; every op stays in its domain at every point.
    """
    values = [pad(np.asarray(p, dtype=np.float64), s) for p, s in zip(points, shapes)]
    node_shapes = [tuple(s) for s in shapes]
    nodes: list[OpNode] = []
    specs = [REGISTRY[op] for op in ops]
    attempts = 0
    while len(nodes) < n_nodes and attempts < 6 * n_nodes + 10:
        attempts += 1
        _begin_node(chooser)
        spec = chooser.choice(specs)
        n = len(values)
        first = _pick_recent(chooser, n)
        attrs = spec.draw_tensor_attrs(chooser, node_shapes[first])
        if attrs is None:
            continue
        attr = dict(attrs)
        if not allows(variants, spec.name, attr):  # a form the adapter did not say it handles
            continue
        consts: tuple[Constant, ...] = ()
        if spec.arity == 1:
            args: tuple[int, ...] = (first,)
        elif spec.arity == 3:
            valid = _operand_triples(spec, values, node_shapes, first, attr)
            if not valid:
                continue
            args = valid[chooser.integer(0, len(valid) - 1)]
        elif spec.shape is None and chooser.integer(1, CONSTANT_EVERY) == CONSTANT_EVERY:
            # a Python number (ops with an operator spelling) or a 0-d tensor on either side
            at = chooser.integer(0, 1)
            tensor = not spec.number_operands or chooser.integer(0, 1) == 1
            consts = (Constant(at, chooser.choice(CONSTANTS), tensor),)
            args = (first,)
        elif chooser.integer(1, SAME_NODE_EVERY) == SAME_NODE_EVERY:
            args = (first, first)
        else:
            left = chooser.integer(0, 1) == 0
            valid = []
            for other in range(n - 1, -1, -1):
                pair = (first, other) if left else (other, first)
                if _tensor_value(spec, values, node_shapes, OpNode(spec.name, pair), attr) is not None:
                    valid.append(pair)
                if len(valid) == 6:
                    break
            if not valid:
                continue
            args = valid[chooser.integer(0, len(valid) - 1)]
        node = OpNode(spec.name, args, attrs, consts)
        made = _tensor_value(spec, values, node_shapes, node, attr)
        if made is None:
            continue
        out, shape = made
        nodes.append(draw_form(chooser, forms, node))
        values.append(out)
        node_shapes.append(shape)
    _end_nodes(chooser)
    outputs = _outputs(chooser, len(shapes), len(nodes), n_outputs)
    inputs = [
        Input(f"x{i}", np.array(p[0], dtype=np.float64), tuple(s))
        for i, (p, s) in enumerate(zip(points, shapes))
    ]
    batch = [np.asarray(p, dtype=np.float64).copy() for p in points]
    return Graph(inputs, nodes, outputs, batch if batch[0].shape[0] > 1 else None, meta={"kind": "tensor"})


def _tensor_value(
    spec: Any,
    values: list[np.ndarray],
    shapes: list[tuple[int, ...]],
    node: OpNode,
    attr: dict[str, Any],
) -> tuple[np.ndarray, tuple[int, ...]] | None:
    """The op's padded value and shape on `node`'s operands, None if shapes misfit or out of domain."""
    shape = spec.out_shape(node.operands(shapes, lambda c: ()), attr)
    if shape is None or len(shape) > RANK:
        return None
    arrays = node.operands(values)
    with np.errstate(all="ignore"):
        out = spec.numpy(arrays, attr)
        if not in_domain(spec, arrays, attr, out).all():
            return None
    return pad(out, shape), shape


def _operand_triples(
    spec: Any, values: list[np.ndarray], shapes: list[tuple[int, ...]], first: int, attr: dict[str, Any]
) -> list[tuple[int, int, int]]:
    """Up to 6 (first, second, third) node triples a ternary op (linear with a bias) takes, the
    most recent nodes first: shapes are tried cheaply before any value is computed."""
    n = len(values)
    valid: list[tuple[int, int, int]] = []
    tried = 0
    for second in range(n - 1, -1, -1):
        for third in range(n - 1, -1, -1):
            if spec.out_shape((shapes[first], shapes[second], shapes[third]), attr) is None:
                continue
            tried += 1
            triple = (first, second, third)
            if _tensor_value(spec, values, shapes, OpNode(spec.name, triple), attr) is not None:
                valid.append(triple)
            if len(valid) == 6 or tried == 24:
                return valid
    return valid


def _outputs(chooser: Chooser, n_in: int, n_nodes: int, n_outputs: int) -> list[int]:
    if not n_nodes:
        return [0]
    outputs = [n_in + n_nodes - 1]
    for _ in range(n_outputs - 1):
        o = n_in + chooser.integer(0, n_nodes - 1)
        if o not in outputs:
            outputs.append(o)
    return outputs


def tensor_input_shapes(chooser: Chooser, n_inputs: int) -> list[tuple[int, ...]]:
    """Input shapes: each from TENSOR_SHAPES, or (choice 1) fitting the previous one for matmul
    (a matrix mostly; sometimes a vector or a batch of matrices)."""
    shapes: list[tuple[int, ...]] = []
    for _ in range(n_inputs):
        previous = shapes[-1] if shapes else ()
        if previous and chooser.integer(0, 1) == 1:
            n = previous[-1]
            shapes.append(chooser.choice(((n, 2), (n, 3), (n, 1), (n,), (2, n, 2))))
        else:
            shapes.append(chooser.choice(TENSOR_SHAPES))
    return shapes


def random_tensor_graph(
    rng: np.random.Generator,
    ops: Sequence[str] | None = None,
    points: int = 1,
    sizes: Sizes = Sizes(),
    variants: frozenset[str] | None = None,
    positive: bool = False,
    forms: Forms | None = None,
) -> Graph:
    """A random tensor graph (elementwise ops with broadcasting, matmul, reductions, shape ops);
    `positive`: the inputs' magnitudes only (see `random_graph`)."""
    op_names = resolve_ops(ops, TENSOR_OPS if ops is None else None)
    chooser = RngChooser(rng)
    n_inputs = chooser.integer(1, 3)
    shapes = tensor_input_shapes(chooser, n_inputs)
    pts = []
    for shape in shapes:
        scale = 10.0 ** rng.uniform(-0.5, 0.5, size=(points, *shape))
        values = rng.uniform(-2.0, 2.0, size=(points, *shape)) * scale
        values[rng.integers(ZERO_EVERY, size=values.shape) == 0] = 0.0
        if shape and shape[-1] > 1 and rng.integers(TIE_EVERY) == 0:
            values[..., 1] = values[..., 0]  # two equal entries: a tie for amax, amin, maximum
        pts.append(np.abs(values) if positive else values)
    lo, hi = (min(bound, sizes.nodes[1]) for bound in sizes.tensor_nodes)  # never above `nodes`
    n_nodes = chooser.integer(lo, hi)
    n_outputs = chooser.integer(*sizes.outputs)
    return build_tensor_graph(chooser, shapes, pts, op_names, n_nodes, n_outputs, variants, forms)


def tensor_graph_in_domain(graph: Graph) -> bool:
    """`graph_in_domain` for tensor graphs."""
    k = graph.n_points
    if graph.points is not None:
        values = [pad(np.asarray(p, dtype=np.float64), i.shape) for p, i in zip(graph.points, graph.inputs)]
    else:
        values = [pad(np.asarray(i.value, dtype=np.float64)[None], i.shape) for i in graph.inputs]
    shapes = [i.shape for i in graph.inputs]
    for node in graph.nodes:
        try:
            made = _tensor_value(REGISTRY[node.op], values, shapes, node, node.attr)
        except (IndexError, ValueError):  # a shrunk candidate: attributes drawn for another rank
            return False
        if made is None:
            return False
        values.append(made[0])
        shapes.append(made[1])
    return k > 0
