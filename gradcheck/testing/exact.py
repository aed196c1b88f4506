"""Exact references for one-op graphs: mpmath at 50 digits for scalar ops (the op on mpmath
numbers, `mpmath.diff` for its derivatives), HIPS autograd on long doubles for tensor ops (64-bit
mantissas: 2048 times finer than float64, so its own error is below a thousandth of the float64
ulps it measures). Results are long doubles, so the rounding of a float64 result shows against
them (`gradcheck.testing.accuracy`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.graphs.layout_ops import resolved_sizes
from gradcheck.graphs.registry import REGISTRY

MP_DIGITS = 50


def mp_exact(graph: Graph, batch: list[np.ndarray], cot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A one-op scalar graph's value (K, 1) and cotangent-weighted gradient (K, n_in) by mpmath,
    in long doubles (11 bits beyond float64: its rounding shows)."""
    import mpmath

    node = graph.nodes[0]
    spec = REGISTRY[node.op]
    k = graph.n_points
    forward = np.zeros((k, 1), dtype=np.longdouble)
    grads = np.zeros((k, graph.n_inputs), dtype=np.longdouble)
    with mpmath.workdps(MP_DIGITS):

        def f(*xs: Any) -> Any:
            args = node.operands(list(xs), lambda c: mpmath.mpf(c.value))
            if spec.mpmath is not None:
                return spec.mpmath(mpmath, *args, **node.attr)
            return spec.apply(args, node.attr)

        for p in range(k):
            xs = [mpmath.mpf(float(b[p])) for b in batch]
            forward[p, 0] = _long_double(f(*xs))
            for i in range(graph.n_inputs):

                def along(t: Any, i: int = i, xs: list[Any] = xs) -> Any:
                    return f(*[t if j == i else x for j, x in enumerate(xs)])

                grads[p, i] = _long_double(mpmath.diff(along, xs[i]) * mpmath.mpf(float(cot[0, p])))
    return forward, grads


# Spellings HIPS autograd differentiates where its own `where` and `broadcast_to` cannot (their
# backward does not sum the gradient back onto a smaller operand): exact rewrites (a product
# with 0, 1 or ones is exact).
_EXACT_SPELLINGS: dict[str, Any] = {
    "where": lambda xp, a, k: (
        np.asarray(k["cond"], dtype=np.longdouble) * a[0]
        + (1 - np.asarray(k["cond"], dtype=np.longdouble)) * a[1]
    ),
    "expand": lambda xp, a, k: (
        a[0] * np.ones(resolved_sizes(k["sizes"], tuple(np.shape(a[0]))) or (), dtype=np.longdouble)
    ),
}


def long_double_exact(
    graph: Graph, batch: list[np.ndarray], cot: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """A one-op tensor graph's values (K, F) and cotangent-weighted gradients (K, N) by HIPS
    autograd on long doubles (the op's numpy-like spelling, `OpSpec.array`)."""
    import autograd

    forward, grads = [], []
    for p in range(graph.n_points):
        xs = [np.asarray(b[p], dtype=np.longdouble) for b in batch]
        loss = _long_double_loss(graph, np.asarray(cot[0][p], dtype=np.longdouble))
        forward.append(np.ravel(np.asarray(_long_double_op(graph)(*xs))))
        grads.append(_gradient(autograd, loss, xs))
    return np.array(forward), np.array(grads)


def mp_exact_hvp(
    graph: Graph, batch: list[np.ndarray], cot: np.ndarray, direction: list[np.ndarray]
) -> np.ndarray:
    """A one-op scalar graph's cotangent-weighted Hessian times `direction` (K, n_in) by mpmath."""
    import mpmath

    node = graph.nodes[0]
    spec = REGISTRY[node.op]
    n, k = graph.n_inputs, graph.n_points
    out = np.zeros((k, n), dtype=np.longdouble)
    with mpmath.workdps(MP_DIGITS):

        def f(*xs: Any) -> Any:
            args = node.operands(list(xs), lambda c: mpmath.mpf(c.value))
            if spec.mpmath is not None:
                return spec.mpmath(mpmath, *args, **node.attr)
            return spec.apply(args, node.attr)

        for p in range(k):
            xs = [mpmath.mpf(float(b[p])) for b in batch]
            weight = mpmath.mpf(float(cot[0, p]))
            for i in range(n):
                total = mpmath.mpf(0)
                for j in range(n):
                    orders = tuple(int(m == i) + int(m == j) for m in range(n))
                    total += mpmath.diff(f, xs, orders) * mpmath.mpf(float(direction[j][p]))
                out[p, i] = _long_double(total * weight)
    return out


def long_double_exact_hvp(
    graph: Graph, batch: list[np.ndarray], cot: list[np.ndarray], direction: list[np.ndarray]
) -> np.ndarray:
    """A one-op tensor graph's cotangent-weighted Hessian times `direction` (K, N) by HIPS
    autograd on long doubles: the gradient of <gradient, direction>."""
    import autograd
    import autograd.numpy as anp

    out = []
    for p in range(graph.n_points):
        xs = [np.asarray(b[p], dtype=np.longdouble) for b in batch]
        loss = _long_double_loss(graph, np.asarray(cot[0][p], dtype=np.longdouble))
        dirs = [np.asarray(d[p], dtype=np.longdouble) for d in direction]

        def phi(*args: Any, loss: Any = loss, dirs: list[Any] = dirs) -> Any:
            return sum(anp.sum(autograd.grad(loss, i)(*args) * d) for i, d in enumerate(dirs))

        out.append(_gradient(autograd, phi, xs))
    return np.array(out)


def _long_double_op(graph: Graph) -> Any:
    """A one-op tensor graph's op as a function of its inputs on HIPS autograd's numpy."""
    import autograd.numpy as anp

    node = graph.nodes[0]
    spelling = _EXACT_SPELLINGS.get(node.op, REGISTRY[node.op].array)
    assert spelling is not None

    def f(*args: Any) -> Any:
        operands = node.operands(list(args), lambda c: np.longdouble(c.value))
        return spelling(anp, operands, node.attr)

    return f


def _long_double_loss(graph: Graph, weights: np.ndarray) -> Any:
    """sum(weights * the op), on HIPS autograd's numpy."""
    import autograd.numpy as anp

    f = _long_double_op(graph)
    return lambda *args: anp.sum(f(*args) * weights)


def _gradient(autograd: Any, f: Any, xs: list[np.ndarray]) -> np.ndarray:
    """f's gradient with respect to every argument, flattened (0 where an argument is unused)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Output seems independent of input")
        return np.concatenate([np.ravel(np.asarray(autograd.grad(f, i)(*xs))) for i in range(len(xs))])


def _long_double(x: Any) -> np.longdouble:
    """An mpmath number as the nearest long double (through its decimal digits)."""
    import mpmath

    return np.longdouble(mpmath.nstr(x, 25, strip_zeros=False))
