"""The tensor-only ops of the registry: shapes broadcast, and dims are negative so a leading
batch axis never matters. One entry per op; the scalar ops work elementwise on tensors too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs import edge_values, rounding_scales
from gradcheck.graphs.opspec import CANCELLATION, KINK_MARGIN, Accuracy, Chooser, OpSpec

# Rows where softmax, log_softmax and the reductions meet float64's limits: huge spreads,
# infinities and nan (each checked along its last dim).
EDGE_ROWS = (
    [1000.0, 0.0, -1000.0],
    [800.0, 800.0, 0.0],
    [edge_values.INF, 0.0, 1.0],
    [-edge_values.INF, 0.0, 1.0],
    [edge_values.NAN, 0.0, 1.0],
    [1e300, -1e300, 0.0],
)


def _row_edges(**attrs: Any) -> tuple[edge_values.Edge, ...]:
    return tuple(((np.array(row),), dict(attrs)) for row in EDGE_ROWS)


def _dims_options(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Reduction dims for a tensor of `shape`: each single dim, and all of them."""
    n = len(shape)
    return [(-d,) for d in range(1, n + 1)] + ([tuple(range(-n, 0))] if n > 1 else [])


def _reduce_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    return None if not shape else {"dims": chooser.choice(_dims_options(shape))}


def _fits(dims: Sequence[int], shape: tuple[int, ...]) -> bool:
    """Negative dims that all name an axis of `shape` (a shrunk graph may hand an op a smaller one)."""
    return all(-len(shape) <= d < 0 for d in dims)


def _reduce_keepdim_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    """Reduction dims, and whether the reduced dims stay as size 1 (sum and mean)."""
    if not shape:
        return None
    return {"dims": chooser.choice(_dims_options(shape)), "keepdim": chooser.choice((False, True))}


def _keepdim(attrs: dict[str, Any]) -> bool:
    return bool(attrs.get("keepdim", False))


def _reduced_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    n = len(shapes[0])
    if not all(-n <= d <= -1 for d in attrs["dims"]):
        return None
    reduced = {n + d for d in attrs["dims"]}
    if _keepdim(attrs):
        return tuple(1 if i in reduced else s for i, s in enumerate(shapes[0]))
    return tuple(s for i, s in enumerate(shapes[0]) if i not in reduced)


def _sum_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    dims, keep = tuple(attrs["dims"]), _keepdim(attrs)
    total = np.abs(args[0].sum(axis=dims, keepdims=keep))
    return total >= CANCELLATION * np.abs(args[0]).sum(axis=dims, keepdims=keep)


def _flat_last(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """`x` with `dims` moved to the end and merged into one axis."""
    moved = np.moveaxis(x, dims, tuple(range(-len(dims), 0)))
    return moved.reshape(*moved.shape[: moved.ndim - len(dims)], -1)


def _amax_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """The largest entry apart from the next, or tied with it exactly: a tie is where engines
    differ (torch shares the gradient evenly), and its points are judged against torch alone."""
    flat = _flat_last(args[0], tuple(attrs["dims"]))
    if flat.shape[-1] < 2:
        return np.ones(flat.shape[:-1], dtype=bool)
    top = np.sort(flat, axis=-1)
    return (top[..., -1] - top[..., -2] >= KINK_MARGIN) | (top[..., -1] == top[..., -2])


def _amax_branch(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.argmax(_flat_last(args[0], tuple(attrs["dims"])), axis=-1)


def _matmul_ranks(attrs: dict[str, Any]) -> tuple[int, int]:
    """The operands' ranks a matmul node was drawn for (graphs without them: matrices)."""
    ra, rb = attrs.get("ranks", (2, 2))
    return int(ra), int(rb)


def _matmul_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    """The operands' ranks, one of them this operand's: matrix @ matrix as often as any other
    pairing, then vector @ vector, matrix-vector, vector-matrix and batched products."""
    r = len(shape)
    if r == 0:
        return None
    other = chooser.choice((2, 2, 1, 3))
    return {"ranks": (r, other) if chooser.integer(0, 1) == 0 else (other, r)}


def _matmul_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    """torch.matmul's result shape: a 1-D operand is promoted to a matrix and its dim removed
    again, batch dims broadcast; None when the shapes do not fit (or differ from the ranks drawn)."""
    a, b = shapes
    if (len(a), len(b)) != _matmul_ranks(attrs) or not a or not b:
        return None
    a2 = a if len(a) > 1 else (1, *a)
    b2 = b if len(b) > 1 else (*b, 1)
    if a2[-1] != b2[-2]:
        return None
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        return None
    rows = (a2[-2],) if len(a) > 1 else ()
    cols = (b2[-1],) if len(b) > 1 else ()
    return (*batch, *rows, *cols)


def _matmul_batched(args: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """matmul at every batch point of padded operands (numpy arrays or torch tensors, batch first,
    then 1s: `shapes.pad`). A padded vector is already a one-row matrix; as a right operand it is
    turned into a column, and the promoted dims are dropped from the product."""
    a, b = args
    ra, rb = _matmul_ranks(attrs)
    if rb == 1:
        b = b.swapaxes(-1, -2)
    out = a @ b
    if rb == 1:
        out = out[..., 0]
    if ra == 1:
        out = out[..., 0] if rb == 1 else out[..., 0, :]
    return out


def _transpose_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    n = len(shape)
    if n < 2:
        return None
    pairs = [(-j, -i) for i in range(1, n + 1) for j in range(i + 1, n + 1)]
    return {"dims": chooser.choice(pairs)}


def _transposed_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    if not _fits(attrs["dims"], shapes[0]):
        return None
    shape = list(shapes[0])
    i, j = attrs["dims"]
    shape[i], shape[j] = shape[j], shape[i]
    return tuple(shape)


def _reshape_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    size = int(np.prod(shape))
    options = [(size,), (1, size), (size, 1)]
    options += [(a, size // a) for a in range(2, size) if size % a == 0]
    options = [o for o in options if o != shape]
    return {"shape": chooser.choice(options), "ndim_in": len(shape)} if options else None


def _reshaped_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    """The new shape, None for an argument of another rank or size than it was drawn for."""
    fits = attrs["ndim_in"] == len(shapes[0]) and np.prod(attrs["shape"]) == np.prod(shapes[0])
    return tuple(attrs["shape"]) if fits else None


def _normalised_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    """softmax's and log_softmax's: the argument's shape, when `dim` is one of its axes."""
    return shapes[0] if _fits((attrs["dim"],), shapes[0]) else None


def _reshape_batched(x: Any, attrs: dict[str, Any]) -> Any:
    lead = tuple(x.shape[: x.ndim - attrs["ndim_in"]])
    return x.reshape(lead + tuple(attrs["shape"]))


def _dim_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    return None if not shape else {"dim": chooser.choice([-d for d in range(1, len(shape) + 1)])}


def _dim_keepdim_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    attrs = _dim_attrs(chooser, shape)
    return None if attrs is None else {**attrs, "keepdim": chooser.choice((False, True))}


def _along_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    return _reduced_shape(shapes, {"dims": (attrs["dim"],), "keepdim": attrs["keepdim"]})


def _along_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """The largest element along `dim` a margin above the runner-up (no tie within a step)."""
    ok = _amax_domain(args, {"dims": (attrs["dim"],)})
    return np.expand_dims(ok, attrs["dim"]) if attrs["keepdim"] else ok


def _first_extreme_xp(xp: Any, x: Any, attrs: dict[str, Any], arg: str) -> Any:
    """max/min along `dim` as torch computes them: the element at the first arg-extreme index
    (one-hot selected, so the gradient goes to that index alone, ties included)."""
    dim, size = attrs["dim"], x.shape[attrs["dim"]]
    index = getattr(xp, arg)(x, axis=dim, keepdims=True)
    positions = xp.arange(size).reshape([size if i == x.ndim + dim else 1 for i in range(x.ndim)])
    return xp.sum(xp.where(positions == index, x, 0.0), axis=dim, keepdims=attrs["keepdim"])


def _np_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _np_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


def _softmax_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    x = args[0]
    spread = x.max(axis=attrs["dim"], keepdims=True) - x.min(axis=attrs["dim"], keepdims=True)
    return np.broadcast_to(spread <= 30.0, x.shape)


def _tie_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    """Away from a tie, or exactly at one (the same node on both sides: the tie then stays one
    under any step, so the result is smooth and central differences see its slope)."""
    return (np.abs(args[0] - args[1]) >= KINK_MARGIN) | (args[0] == args[1])


def _tie_branch(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.sign(args[0] - args[1])


def _tie_share(x: Any, y: Any) -> Any:
    """d maximum(x, y) / dx as torch takes it: 1 where x is the larger, half at a tie, else 0."""
    return np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0))


def _mp_pick(mp: Any, pick: Any, *args: Any) -> Any:
    """`pick` (max or min) of mpmath numbers, nan when any of them is nan (as torch's)."""
    return mp.nan if any(mp.isnan(a) for a in args) else pick(*args)


def _shared_extreme_xp(xp: Any, x: Any, dims: tuple[int, ...], pick: Any) -> Any:
    """amax or amin (`pick`: xp.max or xp.min) as torch differentiates them: the extreme's value,
    its gradient shared evenly among the entries tied for it (the mean of the tied entries)."""
    tied = x == pick(x, axis=dims, keepdims=True)
    return xp.sum(xp.where(tied, x, 0.0), axis=dims) / xp.sum(tied, axis=dims)


def softmax_xp(xp: Any, x: Any, dim: int) -> Any:
    """softmax along `dim` with a numpy-like module `xp` (the max subtracted first)."""
    e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


def log_softmax_xp(xp: Any, x: Any, dim: int) -> Any:
    """log_softmax along `dim` with a numpy-like module `xp`."""
    shifted = x - xp.max(x, axis=dim, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


def _along_spec(name: str, arg: str, pick: Any, ties: tuple[Any, ...]) -> OpSpec:
    """max or min along one dim, the values of torch's `(values, indices)`."""
    sign = 1.0 if name == "max" else -1.0
    return OpSpec(
        f"{name}_dim",
        1,
        lambda a, k: getattr(a[0], name)(dim=k["dim"], keepdim=k["keepdim"])[0],
        lambda a, k: pick(a[0], axis=k["dim"], keepdims=k["keepdim"]),
        "{0}." + name + "(dim={dim}, keepdim={keepdim})[0]",
        domain=lambda a, k: _along_domain([sign * a[0]], k),
        branch=lambda a, k: _amax_branch([sign * a[0]], {"dims": (k["dim"],)}),
        kinks=f"ties (torch: the whole gradient goes to the returned index, the first {arg})",
        kink_cases=ties,
        tensor_only=True,
        shape=_along_shape,
        tensor_attrs=_dim_keepdim_attrs,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.5,), terms=rounding_scales.exact_selection),
        edges=_row_edges(dim=-1, keepdim=False),
        array=lambda xp, a, k: _first_extreme_xp(xp, a[0], k, arg),
    )


TENSOR_SPECS: list[OpSpec] = [
    OpSpec(
        "matmul",
        2,
        lambda a, k: a[0] @ a[1],
        _matmul_batched,
        "{0} @ {1}",
        domain=lambda a, k: (
            np.abs(_matmul_batched(a, k)) >= CANCELLATION * _matmul_batched([np.abs(a[0]), np.abs(a[1])], k)
        ),
        tensor_only=True,
        shape=_matmul_shape,
        tensor_attrs=_matmul_attrs,
        torch_batched=_matmul_batched,
        layout_attrs=("ranks",),
        family="arithmetic",
        accuracy=Accuracy(0.5, (0.5, 0.5), linear=True, terms=rounding_scales.matmul_terms),
        array=lambda xp, a, k: xp.matmul(a[0], a[1]),
    ),
    OpSpec(
        "sum",
        1,
        lambda a, k: a[0].sum(dim=tuple(k["dims"]), keepdim=_keepdim(k)),
        lambda a, k: a[0].sum(axis=tuple(k["dims"]), keepdims=_keepdim(k)),
        "{0}.sum(dim={dims}, keepdim={keepdim})",
        domain=_sum_domain,
        tensor_only=True,
        shape=_reduced_shape,
        tensor_attrs=_reduce_keepdim_attrs,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,), linear=True),
        edges=_row_edges(dims=(-1,)),
        array=lambda xp, a, k: xp.sum(a[0], axis=tuple(k["dims"]), keepdims=_keepdim(k)),
        optional_attrs={"keepdim": False},
    ),
    OpSpec(
        "mean",
        1,
        lambda a, k: a[0].mean(dim=tuple(k["dims"]), keepdim=_keepdim(k)),
        lambda a, k: a[0].mean(axis=tuple(k["dims"]), keepdims=_keepdim(k)),
        "{0}.mean(dim={dims}, keepdim={keepdim})",
        domain=_sum_domain,
        tensor_only=True,
        shape=_reduced_shape,
        tensor_attrs=_reduce_keepdim_attrs,
        family="arithmetic",
        accuracy=Accuracy(0.5, (0.75,), linear=True),
        edges=_row_edges(dims=(-1,)),
        array=lambda xp, a, k: xp.mean(a[0], axis=tuple(k["dims"]), keepdims=_keepdim(k)),
        optional_attrs={"keepdim": False},
    ),
    OpSpec(
        "amax",
        1,
        lambda a, k: a[0].amax(dim=tuple(k["dims"])),
        lambda a, k: a[0].max(axis=tuple(k["dims"])),
        "{0}.amax(dim={dims})",
        domain=_amax_domain,
        branch=_amax_branch,
        kinks="ties (torch: the gradient is shared evenly among tied maxima)",
        kink_cases=(
            ((np.array([1.0, 1.0, 0.5]),), {"dims": (-1,)}),
            ((np.array([[2.0, 2.0], [2.0, -1.0]]),), {"dims": (-2, -1)}),
        ),
        tensor_only=True,
        shape=_reduced_shape,
        tensor_attrs=_reduce_attrs,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.5,), terms=rounding_scales.exact_selection),
        edges=_row_edges(dims=(-1,)),
        array=lambda xp, a, k: xp.max(a[0], axis=tuple(k["dims"])),
        exact=lambda xp, a, k: _shared_extreme_xp(xp, a[0], tuple(k["dims"]), xp.max),
    ),
    OpSpec(
        "amin",
        1,
        lambda a, k: a[0].amin(dim=tuple(k["dims"])),
        lambda a, k: a[0].min(axis=tuple(k["dims"])),
        "{0}.amin(dim={dims})",
        domain=lambda a, k: _amax_domain([-a[0]], k),
        branch=lambda a, k: _amax_branch([-a[0]], k),
        kinks="ties (torch: the gradient is shared evenly among tied minima)",
        kink_cases=(((np.array([0.5, -1.0, -1.0]),), {"dims": (-1,)}),),
        tensor_only=True,
        shape=_reduced_shape,
        tensor_attrs=_reduce_attrs,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.5,), terms=rounding_scales.exact_selection),
        edges=_row_edges(dims=(-1,)),
        array=lambda xp, a, k: xp.min(a[0], axis=tuple(k["dims"])),
        exact=lambda xp, a, k: _shared_extreme_xp(xp, a[0], tuple(k["dims"]), xp.min),
    ),
    OpSpec(
        "clamp",
        1,
        lambda a, k: a[0].clamp(k["low"], k["high"]),
        lambda a, k: np.clip(a[0], k["low"], k["high"]),
        "{0}.clamp({low}, {high})",
        domain=lambda a, k: (
            (np.abs(a[0] - k["low"]) >= KINK_MARGIN) & (np.abs(a[0] - k["high"]) >= KINK_MARGIN)
        ),
        branch=lambda a, k: (a[0] > k["low"]).astype(np.int8) + (a[0] > k["high"]),
        kinks="kinks at both bounds (torch: gradient 1 at a bound, the bounds count as inside)",
        attrs={"low": (-1.0, -0.5, 0.0), "high": (0.5, 1.0, 2.0)},
        kink_cases=(((-0.5,), {"low": -0.5, "high": 1.0}), ((1.0,), {"low": -0.5, "high": 1.0})),
        tensor_only=True,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.0,)),
        edges=tuple((args, {"low": -0.5, "high": 1.0}) for args, _ in edge_values.unary(-0.5)),
        grads=lambda a, k, out: (np.where((a[0] >= k["low"]) & (a[0] <= k["high"]), 1.0, 0.0),),
        mpmath=lambda mp, x, low, high: _mp_pick(mp, min, _mp_pick(mp, max, x, mp.mpf(low)), mp.mpf(high)),
        array=lambda xp, a, k: xp.clip(a[0], k["low"], k["high"]),
    ),
    OpSpec(
        "maximum",
        2,
        lambda a, k: a[0].maximum(a[1]),
        lambda a, k: np.maximum(a[0], a[1]),
        "{0}.maximum({1})",
        domain=_tie_domain,
        branch=_tie_branch,
        kinks="ties (torch: each side gets half the gradient)",
        kink_cases=(((1.5, 1.5), {}), ((-0.0, 0.0), {})),
        tensor_only=True,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.0, 0.0)),
        edges=edge_values.binary(),
        grads=lambda a, k, out: (_tie_share(a[0], a[1]), _tie_share(a[1], a[0])),
        mpmath=lambda mp, a, b: _mp_pick(mp, max, a, b),
        array=lambda xp, a, k: xp.maximum(a[0], a[1]),
    ),
    OpSpec(
        "minimum",
        2,
        lambda a, k: a[0].minimum(a[1]),
        lambda a, k: np.minimum(a[0], a[1]),
        "{0}.minimum({1})",
        domain=_tie_domain,
        branch=_tie_branch,
        kinks="ties (torch: each side gets half the gradient)",
        kink_cases=(((1.5, 1.5), {}),),
        tensor_only=True,
        family="piecewise",
        accuracy=Accuracy(0.0, (0.0, 0.0)),
        edges=edge_values.binary(),
        grads=lambda a, k, out: (_tie_share(a[1], a[0]), _tie_share(a[0], a[1])),
        mpmath=lambda mp, a, b: _mp_pick(mp, min, a, b),
        array=lambda xp, a, k: xp.minimum(a[0], a[1]),
    ),
    OpSpec(
        "transpose",
        1,
        lambda a, k: a[0].transpose(*k["dims"]),
        lambda a, k: np.swapaxes(a[0], *k["dims"]),
        "{0}.transpose(*{dims})",
        tensor_only=True,
        shape=_transposed_shape,
        tensor_attrs=_transpose_attrs,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),
        array=lambda xp, a, k: xp.swapaxes(a[0], *k["dims"]),
    ),
    OpSpec(
        "reshape",
        1,
        lambda a, k: a[0].reshape(tuple(k["shape"])),
        lambda a, k: _reshape_batched(a[0], k),
        "{0}.reshape({shape})",
        tensor_only=True,
        shape=_reshaped_shape,
        tensor_attrs=_reshape_attrs,
        torch_batched=lambda a, k: _reshape_batched(a[0], k),
        layout_attrs=("ndim_in",),
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),
        array=lambda xp, a, k: xp.reshape(a[0], tuple(k["shape"])),
    ),
    OpSpec(
        "softmax",
        1,
        lambda a, k: a[0].softmax(k["dim"]),
        lambda a, k: _np_softmax(a[0], k["dim"]),
        "minigrad.functional.softmax({0}, {dim})",
        domain=_softmax_domain,
        tensor_only=True,
        shape=_normalised_shape,
        tensor_attrs=_dim_attrs,
        torch_template="torch.softmax({0}, {dim})",
        family="exp_log",
        accuracy=Accuracy(
            2.0,
            (2.0,),
            scale=rounding_scales.softmax_scale,
            grad_scale=rounding_scales.softmax_grad_scale,
            terms=rounding_scales.along_last,
            backward_stable=True,  # exp(x - logsumexp(x)), as scipy spells it
        ),
        edges=_row_edges(dim=-1),
        array=lambda xp, a, k: softmax_xp(xp, a[0], k["dim"]),
    ),
    OpSpec(
        "log_softmax",
        1,
        lambda a, k: a[0].log_softmax(k["dim"]),
        lambda a, k: _np_log_softmax(a[0], k["dim"]),
        "minigrad.functional.log_softmax({0}, {dim})",
        domain=_softmax_domain,
        tensor_only=True,
        shape=_normalised_shape,
        tensor_attrs=_dim_attrs,
        torch_template="torch.log_softmax({0}, {dim})",
        family="exp_log",
        accuracy=Accuracy(
            2.0,
            (2.0,),
            scale=rounding_scales.log_softmax_scale,
            grad_scale=rounding_scales.log_softmax_grad_scale,
            terms=rounding_scales.along_last,
            backward_stable=True,  # x - logsumexp(x), as MyGrad and scipy spell it
        ),
        edges=_row_edges(dim=-1),
        array=lambda xp, a, k: log_softmax_xp(xp, a[0], k["dim"]),
    ),
    _along_spec(
        "max",
        "argmax",
        np.max,
        (
            ((np.array([1.0, 3.0, 3.0, 0.0]),), {"dim": -1, "keepdim": False}),
            ((np.array([[2.0, 2.0], [2.0, -1.0]]),), {"dim": -2, "keepdim": True}),
            ((np.array([[0.5, 0.5, 0.5]]),), {"dim": -1, "keepdim": False}),
        ),
    ),
    _along_spec(
        "min",
        "argmin",
        np.min,
        (
            ((np.array([0.5, -1.0, -1.0]),), {"dim": -1, "keepdim": True}),
            ((np.array([[1.0, -2.0], [1.0, -2.0]]),), {"dim": -2, "keepdim": False}),
        ),
    ),
]
