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
    kink_cases: tuple[tuple[tuple[float, ...], dict[str, Any]], ...] = ()
    tensor_only: bool = False
    torch_template: str | None = None
    torch_apply: Callable[[Sequence[Any], dict[str, Any]], Any] | None = None

    def snippet(self, args: Sequence[str], attrs: dict[str, Any], target: str) -> str:
        template = self.torch_template if target == "torch" and self.torch_template else self.template
        return template.format(*args, **{k: repr(v) for k, v in attrs.items()})

    def apply_torch(self, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        return (self.torch_apply or self.apply)(args, attrs)

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

REGISTRY: dict[str, OpSpec] = {spec.name: spec for spec in _SCALAR_OPS}
SCALAR_OPS: tuple[str, ...] = tuple(spec.name for spec in _SCALAR_OPS)


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
