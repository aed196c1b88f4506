"""The op registry: one entry per op says everything the harness needs to know about it.

Per op: arity, how an autograd engine spells it (`apply`, used for minigrad Value, torch and any
micrograd-like engine), how plain numbers compute it (`numpy`, vectorised over a batch of points),
the snippet spelling, its domain (with a margin around poles), its kinks (kept a margin away) and
how to draw its attributes. Generation, evaluation, snippets and the coverage report all read
`REGISTRY`; adding an op is one `OpSpec(...)` below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

# Arguments are kept this far from a kink (relu, abs at 0; max/min ties) and from a pole or domain
# edge (log, sqrt, division by ~0): far beyond what a central-difference step can cross.
KINK_MARGIN = 1e-3
POLE_MARGIN = 0.05
# No node may exceed this magnitude: float64 then still has ~12 good digits for every check.
MAX_MAGNITUDE = 1e4
# An add/sub whose result is this much smaller than its operands cancels too much to check closely.
CANCELLATION = 1e-3


class Chooser(Protocol):
    """The source of random choices: a numpy Generator or a hypothesis `draw` behind one interface."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi], shrinking toward lo."""
        ...

    def choice(self, options: Sequence[Any]) -> Any:
        """One of `options`, shrinking toward the first."""
        ...


Mask = np.ndarray  # bool per batch point


def _all(*conditions: np.ndarray) -> Mask:
    out = conditions[0]
    for c in conditions[1:]:
        out = out & c
    return out


def _points_axis(x: np.ndarray, scalar: bool) -> np.ndarray:
    """Reduce a per-element condition to one bool per batch point (axis 0)."""
    if scalar or x.ndim <= 1:
        return x
    return x.reshape(x.shape[0], -1).all(axis=1)


@dataclass(frozen=True)
class OpSpec:
    """What the harness knows about one op.

    apply(args, attrs): the op on autograd values (minigrad Value/Tensor, torch tensors, micrograd).
    numpy(args, attrs): the op on float64 arrays whose leading axis is the batch of points.
    template: the snippet spelling, `{0}`, `{1}` for arguments and `{name}` for attributes.
    domain(args, attrs): per-element True where the arguments are inside the domain, a margin from
        poles and kinks. branch(args, attrs): a value that must not change under a numerical step
        (which side of a kink we are on); None for smooth ops.
    attrs: attribute name -> options to draw from. kink_cases: (argument values, attributes)
        exactly at a kink, checked against torch's convention there (never drawn at random).
    """

    name: str
    arity: int
    apply: Callable[[Sequence[Any], dict[str, Any]], Any]
    numpy: Callable[[Sequence[np.ndarray], dict[str, Any]], np.ndarray]
    template: str
    domain: Callable[[Sequence[np.ndarray], dict[str, Any]], np.ndarray] | None = None
    branch: Callable[[Sequence[np.ndarray], dict[str, Any]], np.ndarray] | None = None
    kinks: str = ""
    attrs: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    kink_cases: tuple[tuple[tuple[Any, ...], dict[str, Any]], ...] = ()
    tensor_only: bool = False
    torch_template: str | None = None
    torch_apply: Callable[[Sequence[Any], dict[str, Any]], Any] | None = None
    # tensor graphs: output shape from argument shapes (None: incompatible); default elementwise
    shape: Callable[[Sequence[tuple[int, ...]], dict[str, Any]], tuple[int, ...] | None] | None = None
    # tensor graphs: attributes for a first argument of this shape (None: op not applicable)
    tensor_attrs: Callable[[Chooser, tuple[int, ...]], dict[str, Any] | None] | None = None
    # the op on batched torch tensors (a leading batch axis) when `torch_apply` cannot serve
    torch_batched: Callable[[Sequence[Any], dict[str, Any]], Any] | None = None

    def snippet(self, args: Sequence[str], attrs: dict[str, Any], target: str) -> str:
        template = self.torch_template if target == "torch" and self.torch_template else self.template
        return template.format(*args, **{k: repr(v) for k, v in attrs.items()})

    def apply_torch(self, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        return (self.torch_apply or self.apply)(args, attrs)

    def apply_torch_batched(self, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        return (self.torch_batched or self.torch_apply or self.apply)(args, attrs)

    def out_shape(self, shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
        """The output shape for these argument shapes, None when they do not fit together."""
        if self.shape is not None:
            return self.shape(shapes, attrs)
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            return None

    def draw_tensor_attrs(
        self, chooser: Chooser, shape: tuple[int, ...]
    ) -> tuple[tuple[str, Any], ...] | None:
        if self.tensor_attrs is None:
            return self.draw_attrs(chooser)
        attrs = self.tensor_attrs(chooser, shape)
        return None if attrs is None else tuple(sorted(attrs.items()))

    def draw_attrs(self, chooser: Chooser) -> tuple[tuple[str, Any], ...]:
        return tuple(sorted((k, chooser.choice(v)) for k, v in self.attrs.items()))


def _pow_const_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    (a,), c = args, attrs["exponent"]
    if float(c).is_integer():
        return np.abs(a) >= POLE_MARGIN if c < 0 else np.ones(np.shape(a), dtype=bool)
    return a >= POLE_MARGIN


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _sign(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.sign(args[0])


def _add_sub_domain(args: Sequence[np.ndarray], out: np.ndarray) -> np.ndarray:
    return np.abs(out) >= CANCELLATION * (np.abs(args[0]) + np.abs(args[1]))


_SCALAR_OPS: list[OpSpec] = [
    OpSpec(
        "add",
        2,
        lambda a, k: a[0] + a[1],
        lambda a, k: a[0] + a[1],
        "{0} + {1}",
        domain=lambda a, k: _add_sub_domain(a, a[0] + a[1]),
    ),
    OpSpec(
        "sub",
        2,
        lambda a, k: a[0] - a[1],
        lambda a, k: a[0] - a[1],
        "{0} - {1}",
        domain=lambda a, k: _add_sub_domain(a, a[0] - a[1]),
    ),
    OpSpec("mul", 2, lambda a, k: a[0] * a[1], lambda a, k: a[0] * a[1], "{0} * {1}"),
    OpSpec(
        "div",
        2,
        lambda a, k: a[0] / a[1],
        lambda a, k: a[0] / a[1],
        "{0} / {1}",
        domain=lambda a, k: np.abs(a[1]) >= POLE_MARGIN,
        kinks="pole at divisor 0",
    ),
    OpSpec(
        "pow",
        2,
        lambda a, k: a[0] ** a[1],
        lambda a, k: a[0] ** a[1],
        "{0} ** {1}",
        domain=lambda a, k: (a[0] >= POLE_MARGIN) & (np.abs(a[1]) <= 4.0),
        kinks="base must be positive",
        # torch at base 0: d/da = 0 when b = 0; d/db = 0 when b >= 0 (not 0 * log 0 = nan)
        kink_cases=(((0.0, 2.0), {}), ((0.0, 0.0), {}), ((2.0, 0.0), {})),
    ),
    OpSpec(
        "pow_const",
        1,
        lambda a, k: a[0] ** k["exponent"],
        lambda a, k: a[0] ** k["exponent"],
        "{0} ** {exponent}",
        domain=_pow_const_domain,
        kinks="pole at 0 for negative exponents; base >= 0 for fractional ones",
        attrs={"exponent": (2.0, 3.0, -1.0, 0.5, -2.0, 1.5, -0.5, 1.0)},
        # torch: d/dx x**0 = 0 everywhere, also at x = 0 (where c * x**(c-1) would divide by 0)
        kink_cases=(((0.0,), {"exponent": 0.0}), ((0.0,), {"exponent": 2.0}), ((0.0,), {"exponent": 1.0})),
    ),
    OpSpec("neg", 1, lambda a, k: -a[0], lambda a, k: -a[0], "-{0}"),
    OpSpec(
        "relu",
        1,
        lambda a, k: a[0].relu(),
        lambda a, k: np.maximum(a[0], 0.0),
        "{0}.relu()",
        domain=lambda a, k: np.abs(a[0]) >= KINK_MARGIN,
        branch=_sign,
        kinks="kink at 0 (torch: derivative 0 there)",
        kink_cases=(((0.0,), {}), ((-0.0,), {})),
    ),
    OpSpec(
        "tanh",
        1,
        lambda a, k: a[0].tanh(),
        lambda a, k: np.tanh(a[0]),
        "{0}.tanh()",
        # beyond |x| = 8 the derivative 1 - tanh^2 is all cancellation
        domain=lambda a, k: np.abs(a[0]) <= 8.0,
    ),
    OpSpec(
        "sigmoid",
        1,
        lambda a, k: a[0].sigmoid(),
        lambda a, k: _sigmoid(a[0]),
        "{0}.sigmoid()",
        domain=lambda a, k: np.abs(a[0]) <= 16.0,
    ),
    OpSpec(
        "exp",
        1,
        lambda a, k: a[0].exp(),
        lambda a, k: np.exp(a[0]),
        "{0}.exp()",
        domain=lambda a, k: (a[0] <= 9.0) & (a[0] >= -20.0),
    ),
    OpSpec(
        "log",
        1,
        lambda a, k: a[0].log(),
        lambda a, k: np.log(a[0]),
        "{0}.log()",
        domain=lambda a, k: a[0] >= POLE_MARGIN,
        kinks="pole at 0",
    ),
    OpSpec(
        "sin",
        1,
        lambda a, k: a[0].sin(),
        lambda a, k: np.sin(a[0]),
        "{0}.sin()",
        domain=lambda a, k: np.abs(a[0]) <= 100.0,
    ),
    OpSpec(
        "cos",
        1,
        lambda a, k: a[0].cos(),
        lambda a, k: np.cos(a[0]),
        "{0}.cos()",
        domain=lambda a, k: np.abs(a[0]) <= 100.0,
    ),
    OpSpec(
        "sqrt",
        1,
        lambda a, k: a[0].sqrt(),
        lambda a, k: np.sqrt(a[0]),
        "{0}.sqrt()",
        domain=lambda a, k: a[0] >= POLE_MARGIN,
        kinks="infinite slope at 0",
    ),
    OpSpec(
        "abs",
        1,
        lambda a, k: a[0].abs(),
        lambda a, k: np.abs(a[0]),
        "{0}.abs()",
        domain=lambda a, k: np.abs(a[0]) >= KINK_MARGIN,
        branch=_sign,
        kinks="kink at 0 (torch: derivative 0 there)",
        kink_cases=(((0.0,), {}), ((-0.0,), {})),
    ),
]

# --- tensor-only ops: shapes broadcast; dims are negative so a leading batch axis never matters ---


def _dims_options(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Reduction dims for a tensor of `shape`: each single dim, and all of them."""
    n = len(shape)
    return [(-d,) for d in range(1, n + 1)] + ([tuple(range(-n, 0))] if n > 1 else [])


def _reduce_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    return None if not shape else {"dims": chooser.choice(_dims_options(shape))}


def _reduced_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...]:
    n = len(shapes[0])
    drop = {n + d for d in attrs["dims"]}
    return tuple(s for i, s in enumerate(shapes[0]) if i not in drop)


def _sum_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    dims = tuple(attrs["dims"])
    return np.abs(args[0].sum(axis=dims)) >= CANCELLATION * np.abs(args[0]).sum(axis=dims)


def _flat_last(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """`x` with `dims` moved to the end and merged into one axis."""
    moved = np.moveaxis(x, dims, tuple(range(-len(dims), 0)))
    return moved.reshape(*moved.shape[: moved.ndim - len(dims)], -1)


def _amax_domain(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    flat = _flat_last(args[0], tuple(attrs["dims"]))
    if flat.shape[-1] < 2:
        return np.ones(flat.shape[:-1], dtype=bool)
    top = np.sort(flat, axis=-1)
    return top[..., -1] - top[..., -2] >= KINK_MARGIN


def _amax_branch(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.argmax(_flat_last(args[0], tuple(attrs["dims"])), axis=-1)


def _matmul_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    a, b = shapes
    if len(a) == 2 and len(b) == 2 and a[1] == b[0]:
        return (a[0], b[1])
    return None


def _transpose_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    n = len(shape)
    if n < 2:
        return None
    pairs = [(-j, -i) for i in range(1, n + 1) for j in range(i + 1, n + 1)]
    return {"dims": chooser.choice(pairs)}


def _transposed_shape(shapes: Sequence[tuple[int, ...]], attrs: dict[str, Any]) -> tuple[int, ...]:
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


def _reshape_batched(x: Any, attrs: dict[str, Any]) -> Any:
    lead = tuple(x.shape[: x.ndim - attrs["ndim_in"]])
    return x.reshape(lead + tuple(attrs["shape"]))


def _dim_attrs(chooser: Chooser, shape: tuple[int, ...]) -> dict[str, Any] | None:
    return None if not shape else {"dim": chooser.choice([-d for d in range(1, len(shape) + 1)])}


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
    return np.abs(args[0] - args[1]) >= KINK_MARGIN


def _tie_branch(args: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.sign(args[0] - args[1])


_TENSOR_OPS: list[OpSpec] = [
    OpSpec(
        "matmul",
        2,
        lambda a, k: a[0] @ a[1],
        lambda a, k: a[0] @ a[1],
        "{0} @ {1}",
        domain=lambda a, k: np.abs(a[0] @ a[1]) >= CANCELLATION * (np.abs(a[0]) @ np.abs(a[1])),
        tensor_only=True,
        shape=_matmul_shape,
        tensor_attrs=lambda c, s: {} if len(s) == 2 else None,
    ),
    OpSpec(
        "sum",
        1,
        lambda a, k: a[0].sum(dim=tuple(k["dims"])),
        lambda a, k: a[0].sum(axis=tuple(k["dims"])),
        "{0}.sum(dim={dims})",
        domain=_sum_domain,
        tensor_only=True,
        shape=_reduced_shape,
        tensor_attrs=_reduce_attrs,
    ),
    OpSpec(
        "mean",
        1,
        lambda a, k: a[0].mean(dim=tuple(k["dims"])),
        lambda a, k: a[0].mean(axis=tuple(k["dims"])),
        "{0}.mean(dim={dims})",
        domain=_sum_domain,
        tensor_only=True,
        shape=_reduced_shape,
        tensor_attrs=_reduce_attrs,
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
    ),
    OpSpec(
        "reshape",
        1,
        lambda a, k: a[0].reshape(tuple(k["shape"])),
        lambda a, k: _reshape_batched(a[0], k),
        "{0}.reshape({shape})",
        tensor_only=True,
        shape=lambda s, k: tuple(k["shape"]),
        tensor_attrs=_reshape_attrs,
        torch_batched=lambda a, k: _reshape_batched(a[0], k),
    ),
    OpSpec(
        "softmax",
        1,
        lambda a, k: a[0].softmax(k["dim"]),
        lambda a, k: _np_softmax(a[0], k["dim"]),
        "minigrad.functional.softmax({0}, {dim})",
        domain=_softmax_domain,
        tensor_only=True,
        shape=lambda s, k: s[0],
        tensor_attrs=_dim_attrs,
        torch_template="torch.softmax({0}, {dim})",
    ),
    OpSpec(
        "log_softmax",
        1,
        lambda a, k: a[0].log_softmax(k["dim"]),
        lambda a, k: _np_log_softmax(a[0], k["dim"]),
        "minigrad.functional.log_softmax({0}, {dim})",
        domain=_softmax_domain,
        tensor_only=True,
        shape=lambda s, k: s[0],
        tensor_attrs=_dim_attrs,
        torch_template="torch.log_softmax({0}, {dim})",
    ),
]

REGISTRY: dict[str, OpSpec] = {spec.name: spec for spec in _SCALAR_OPS + _TENSOR_OPS}
SCALAR_OPS: tuple[str, ...] = tuple(spec.name for spec in _SCALAR_OPS)
TENSOR_OPS: tuple[str, ...] = SCALAR_OPS + tuple(spec.name for spec in _TENSOR_OPS)


def register(spec: OpSpec) -> OpSpec:
    """Add an op to the registry (e.g. a custom op of your engine); returns it."""
    if spec.name in REGISTRY:
        raise ValueError(f"register: op {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
    return spec


def in_domain(spec: OpSpec, args: Sequence[np.ndarray], attrs: dict[str, Any], out: np.ndarray) -> Mask:
    """Per batch point: arguments inside the domain and away from kinks, result finite and sane."""
    with np.errstate(all="ignore"):
        ok = np.isfinite(out) & (np.abs(out) <= MAX_MAGNITUDE)
        if spec.domain is not None:
            ok = ok & spec.domain(args, attrs)
    return _points_axis(ok, out.ndim <= 1)


def resolve_ops(ops: Sequence[str] | None, allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    """Validate op names against the registry (and an engine's supported set); None means all."""
    if ops is None:
        return tuple(allowed) if allowed is not None else SCALAR_OPS
    unknown = [op for op in ops if op not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown op(s) {unknown}; the registry has {sorted(REGISTRY)}")
    pool = tuple(allowed) if allowed is not None else tuple(REGISTRY)
    unsupported = [op for op in ops if op not in pool]
    if unsupported:
        raise ValueError(f"op(s) {unsupported} not supported here; supported: {list(pool)}")
    return tuple(ops)
