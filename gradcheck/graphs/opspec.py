"""`OpSpec`: everything the harness knows about one op, and the margins its domains keep.

An entry is the single home of an op's checking facts: how engines spell it, its reference math
(numpy forward and local derivatives, written independently of any engine's rules, so a mistake
shared with an engine cannot hide), its domain and kinks, its tolerance family, its mpmath
spelling, its snippet spellings and how tensor graphs draw its attributes and shapes.
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
# A number this close to 0 has a reciprocal beyond float64 (1 / 5e-309 overflows): at a pole.
POLE_ZERO = 1.0 / float(np.finfo(np.float64).max)
# No node may exceed this magnitude: float64 then still has ~12 good digits for every check.
MAX_MAGNITUDE = 1e4
# An add/sub whose result is this much smaller than its operands cancels too much to check closely.
CANCELLATION = 1e-3
# Numbers drawn as constant operands (`x - c`, `c / x`, `c ** x`): simple values first (shrinking
# moves toward them), then small and large magnitudes; each op's domain rejects those it cannot take.
CONSTANTS: tuple[float, ...] = (
    0.0,
    1.0,
    2.0,
    -1.0,
    0.5,
    -0.5,
    3.0,
    -2.0,
    0.1,
    1e-3,
    -1e-3,
    1e3,
    1e-8,
    1e6,
    7.25,
)


class Chooser(Protocol):
    """The source of random choices: a numpy Generator or a hypothesis `draw` behind one interface."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi], shrinking toward lo."""
        ...

    def choice(self, options: Sequence[Any]) -> Any:
        """One of `options`, shrinking toward the first."""
        ...


# A rule on an op's batched torch operands, attributes and result (and, for the backward, the
# result's adjoint): a tensor of rounding scales (see `Accuracy`).
ScaleRule = Callable[..., Any]
# An op's operand shapes and attributes -> how many terms each result entry sums, and how many
# each operand's gradient entry sums in the backward pass (see `Accuracy.terms`).
TermsRule = Callable[[Sequence[tuple[int, ...]], dict[str, Any]], tuple[int, tuple[int, ...]]]


@dataclass(frozen=True)
class Accuracy:
    """How far an op computed in float64 may sit from the exact result, in ulps: an error of at
    most `value` * EPS * scale for the result, and `grads[j]` * EPS * scale for the contribution
    adjoint * d(result)/d(operand j) its backward pass computes from the rounded forward values.

    The scale is the result's size, and the contribution's, unless the op sums terms: `linear`
    ops (sum, matmul: linear in each operand) scale by the op and its backward applied to the
    operands' and the adjoint's absolute values (the sizes of the terms summed), and `scale` and
    `grad_scale` (torch rules: operands, attributes, result, and the result's adjoint) give the
    scale of ops whose error is neither (softmax's exp(x - max x) errs by |x - max x| ulps). A
    sum of n terms adds (n - 1) / 2 ulps: `terms(operand shapes, attributes)` gives n for a
    result entry and for each operand's gradient entry (default: what the shapes reduce by).

    The figures are measured (`gradcheck.testing.accuracy`, `benchmarks/op_accuracy.py`):
    the worst of Python's `math`, numpy and torch, in the spellings engines use, against mpmath
    over the op's domain; `test_op_accuracy` fails when a figure is understated. `value32` and
    `grads32` are the float32 figures (numpy's and torch's float32 kernels).

    `backward_stable`: other accurate spellings of the op are only backward stable (log_softmax
    as x - logsumexp(x), which rounds the logsumexp at the inputs' magnitude): their result is the
    exact op at inputs each `value` ulps off, so it errs by that much of |J| |x|, beyond the scale
    above when the inputs are large. The bound of any evaluation order allows it
    (`gradcheck.parity.any_order`); torch's own spelling is held to the scale above.
    """

    value: float
    grads: tuple[float, ...]
    value32: float | None = None
    grads32: tuple[float, ...] | None = None
    linear: bool = False
    scale: ScaleRule | None = None
    grad_scale: ScaleRule | None = None
    terms: TermsRule | None = None
    backward_stable: bool = False

    def ulps(self, float32: bool) -> tuple[float, tuple[float, ...]]:
        """The result's and each operand's contribution's accuracy in that precision's ulps."""
        if float32 and self.value32 is not None and self.grads32 is not None:
            return self.value32, self.grads32
        return self.value, self.grads


# The accuracy assumed for an op whose entry has none (an op an engine registers at run time):
# loose enough for any libm-quality function, far below a wrong derivative.
UNMEASURED = Accuracy(64.0, (64.0, 64.0, 64.0))


Mask = np.ndarray  # bool per batch point
Args = Sequence[Any]
Attrs = dict[str, Any]


@dataclass(frozen=True)
class OpSpec:
    """What the harness knows about one op.

    apply(args, attrs): the op on autograd values, spelled with operators and methods as minigrad,
        torch and micrograd-like engines spell it (`a + b`, `a.relu()`, `a.softmax(dim)`).
    numpy(args, attrs): the reference forward on float64 arrays whose leading axis is the batch
        of points (plain floats work too).
    grads(args, attrs, out): the reference local derivatives d(out)/d(arg) per argument, numpy,
        with torch's convention at kinks (elementwise ops; None for the others). Written with
        operators and numpy's functions only, so it also runs on the exact reference's numbers.
    template: the snippet spelling, `{0}`, `{1}` for arguments and `{name}` for attributes.
    domain(args, attrs): per-element True where the arguments are inside the domain, a margin from
        poles and kinks. branch(args, attrs): a value that must not change under a numerical step
        (which side of a kink we are on); None for smooth ops.
    family: the tolerance family (`gradcheck.checker.tolerance.FAMILIES`); None: the default.
    array(xp, args, attrs): the op spelled with a numpy-like module `xp` (numpy, jax.numpy,
        autograd.numpy), one point at a time, for function-style engines.
    mpmath(mp, x, ..., **attrs): an elementwise op's exact value on mpmath numbers (`mp` is the
        mpmath module), one per argument, attributes by name, with IEEE's inf where the value is
        infinite and nan where it is undefined (a complex result, as mpmath's log(-1), stands for
        nan); None for the ops that are not elementwise. With `grads` it is the op's exact form
        (`gradcheck.parity.exact_jets`); the oracle's `MPValue` takes its methods from it.
    exact(xp, args, attrs): the op's exact form where its `array` spelling, run on the exact
        reference's numpy-like module, would not give torch's convention at a kink or tie (amax's
        tied maxima share the gradient); None: `array` is exact as it stands.
    attrs: attribute name -> options to draw from. kink_cases: (argument values, attributes)
        exactly at a kink, checked against torch's convention there (never drawn at random).
    number_operands: a Python number may stand as either operand (binary ops with an operator
        spelling); tensor graphs may also put a 0-d tensor constant into any elementwise binary op.
    edges: (argument values, attributes) at the edges of float64 (signed zeros, subnormals, huge
        values, inf, nan, overflow points, kinks and poles), where the engine's value and gradient
        must match torch's (`gradcheck.parity.edge_check`); built with `gradcheck.graphs.edge_values`.
    poles(args, attrs): per-element True where the arguments sit at a pole of the op or of its
        derivative (a divisor of 0, log and sqrt at 0, x ** c at 0 for c < 1): the region a finding
        there is placed in (`gradcheck.graphs.regions`); None for ops without poles.
    bounded: arguments at most MAX_MAGNITUDE in size and inside the domain give a finite result
        within MAX_MAGNITUDE too (sin, tanh, relu, log...): the generator skips its magnitude test.
    optional_attrs: attribute name -> the value meant when a node leaves it out (`keepdim` of
        sum and mean, which graphs saved before it existed do not carry).
    spell_attrs: attribute name -> how a snippet spells its value for a target ('minigrad' or
        'torch'), for attributes whose `repr` is not what the engines take (an index as
        `1, ::2, torch.tensor([0, 0])`); the others are spelled with `repr`.
    """

    name: str
    arity: int
    apply: Callable[[Args, Attrs], Any]
    numpy: Callable[[Sequence[np.ndarray], Attrs], np.ndarray]
    template: str
    domain: Callable[[Sequence[np.ndarray], Attrs], np.ndarray] | None = None
    branch: Callable[[Sequence[np.ndarray], Attrs], np.ndarray] | None = None
    kinks: str = ""
    poles: Callable[[Sequence[np.ndarray], Attrs], np.ndarray] | None = None
    attrs: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    kink_cases: tuple[tuple[tuple[Any, ...], Attrs], ...] = ()
    tensor_only: bool = False
    number_operands: bool = False
    edges: tuple[tuple[tuple[Any, ...], Attrs], ...] = ()
    grads: Callable[[Sequence[Any], Attrs, Any], tuple[Any, ...]] | None = None
    family: str | None = None
    bounded: bool = False
    mpmath: Callable[..., Any] | None = None
    array: Callable[[Any, Args, Attrs], Any] | None = None
    exact: Callable[[Any, Args, Attrs], Any] | None = None
    torch_template: str | None = None
    torch_apply: Callable[[Args, Attrs], Any] | None = None
    # tensor graphs: output shape from argument shapes (None: incompatible); default elementwise
    shape: Callable[[Sequence[tuple[int, ...]], Attrs], tuple[int, ...] | None] | None = None
    # tensor graphs: attributes for a first argument of this shape (None: op not applicable)
    tensor_attrs: Callable[[Chooser, tuple[int, ...]], Attrs | None] | None = None
    # the op on batched torch tensors (a leading batch axis) when `torch_apply` cannot serve
    torch_batched: Callable[[Args, Attrs], Any] | None = None
    optional_attrs: dict[str, Any] = field(default_factory=dict)
    spell_attrs: dict[str, Callable[[Any, str], str]] = field(default_factory=dict)
    # tensor graphs: attributes no spelling shows, read by the batched references (which see
    # padded arrays): a reshape's input rank, a matmul's operand ranks
    layout_attrs: tuple[str, ...] = ()
    # how accurately libraries compute the op and its derivatives, measured (`Accuracy`)
    accuracy: Accuracy = UNMEASURED

    def snippet(self, args: Sequence[str], attrs: Attrs, target: str) -> str:
        template = self.torch_template if target == "torch" and self.torch_template else self.template
        spelled = {
            k: self.spell_attrs[k](v, target) if k in self.spell_attrs else repr(v)
            for k, v in {**self.optional_attrs, **attrs}.items()
        }
        return template.format(*args, **spelled)

    @property
    def elementwise(self) -> bool:
        """Applied element by element, its exact form given by `mpmath` (value) and `grads`
        (local derivatives): the scalar ops, maximum, minimum and clamp."""
        return self.mpmath is not None and self.grads is not None

    @property
    def torch_rule(self) -> Callable[[Args, Attrs], Any]:
        """The op on torch tensors: `torch_apply`, else `apply`."""
        return self.torch_apply or self.apply

    def apply_torch(self, args: Args, attrs: Attrs) -> Any:
        return self.torch_rule(args, attrs)

    def apply_torch_batched(self, args: Args, attrs: Attrs) -> Any:
        return (self.torch_batched or self.torch_apply or self.apply)(args, attrs)

    def out_shape(self, shapes: Sequence[tuple[int, ...]], attrs: Attrs) -> tuple[int, ...] | None:
        """The output shape for these argument shapes, None when they do not fit together (or
        not with these attributes: the shrinker rewires a node to arguments of other shapes)."""
        if self.shape is not None:
            try:
                return self.shape(shapes, attrs)
            except (IndexError, ValueError):  # a dim or size the argument does not have
                return None
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


def at_zero(x: Any) -> np.ndarray:
    """Per element: whether `x` is 0 for a pole (its reciprocal overflows float64)."""
    return np.abs(np.asarray(x, dtype=np.float64)) <= POLE_ZERO


def points_axis(x: np.ndarray, scalar: bool) -> np.ndarray:
    """Reduce a per-element condition to one bool per batch point (axis 0)."""
    if scalar or x.ndim <= 1:
        return x
    return x.reshape(x.shape[0], -1).all(axis=1)
