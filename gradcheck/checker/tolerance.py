"""The tolerance policy: how far an analytical gradient may sit from the numerical oracle, per op family.

A gradient entry passes when ``|analytical - numerical| <= atol * scale + rtol * |numerical|``,
torch's test with gradcheck's scale = max(1, |output value|): finite differences of an output
carry rounding in proportion to it (scale 1 gives torch's test exactly).

The numbers in `FAMILIES` were measured with ``benchmarks/bench_gradcheck.py`` on the probe
functions in `PROBES` (inputs in each family's `domain`, values of order 1): the worst error of
minigrad's float64 gradient plus that of the Richardson oracle (the final arbiter for functions
mpmath cannot run), times a safety margin of 100, rounded up to a power of ten. They assume
float64, moderate magnitudes and graphs of tens of nodes; deep or ill-conditioned graphs
accumulate more rounding and deserve a looser, measured tolerance.

The parity harness asks for a graph's tolerance with ``policy_for(op_names)``: the loosest
tolerance among the families those ops belong to. Each op's family is written in its registry
entry (`OpSpec.family`); unknown op names get `DEFAULT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.minigrad_names import registry_name
from gradcheck.graphs import registry


@dataclass(frozen=True)
class Tolerance:
    """Pass when |a - n| <= atol + rtol·|n| (n the numerical reference), entrywise."""

    atol: float
    rtol: float

    def __post_init__(self) -> None:
        if not (self.atol >= 0 and self.rtol >= 0):
            raise ValueError(f"Tolerance: atol and rtol must be >= 0, got atol={self.atol}, rtol={self.rtol}")

    def allowed(self, numerical: Any, scale: Any = 1.0) -> Any:
        """The largest |a - n| accepted for reference value(s) n; atol counts in units of `scale`.

        gradcheck passes scale = max(1, |output value|): finite differences of an output F carry
        rounding error proportional to |F|, so an absolute floor must grow with it.
        """
        return self.atol * scale + self.rtol * np.abs(numerical)

    def accepts(self, analytical: Any, numerical: Any, scale: Any = 1.0) -> Any:
        """Entrywise verdict; NaN on one side only fails, NaN on both sides or equal infinities pass."""
        a = np.asarray(analytical, dtype=np.float64)
        n = np.asarray(numerical, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            close = np.abs(a - n) <= self.allowed(n, scale)
        return close | (np.isnan(a) & np.isnan(n)) | (np.isinf(a) & (a == n))

    def __or__(self, other: Tolerance) -> Tolerance:
        """The looser of two tolerances (entry by entry of atol and rtol)."""
        return Tolerance(max(self.atol, other.atol), max(self.rtol, other.rtol))

    def scaled(self, factor: float) -> Tolerance:
        return Tolerance(self.atol * factor, self.rtol * factor)


#: torch.autograd.gradcheck's defaults, for comparison.
TORCH = Tolerance(atol=1e-5, rtol=1e-3)

#: Per op family: the tolerance against the accurate oracle (see module docstring).
#: Measured worst errors, |e - g| / (max(1, |F|) + |g|) against mpmath, 400 points per family:
#:
#:   family        central 1e-6  Richardson  best stage  minigrad grad  -> 100x, rounded up
#:   arithmetic    3.6e-10       2.6e-13     2.6e-13     3.4e-16        1e-10
#:   exp_log       2.5e-10       5.9e-13     5.9e-13     2.1e-16        1e-10
#:   trig          1.6e-10       3.9e-13     3.9e-13     8.2e-15        1e-10
#:   tanh_sigmoid  1.7e-10       2.4e-13     1.6e-13     1.5e-15        1e-10
#:   sqrt_pow      5.5e-10       2.7e-13     2.7e-13     2.0e-16        1e-10
#:   piecewise     3.3e-10       4.1e-06*    3.6e-14     1.3e-16        1e-11 (1e-10 kept)
#:
#: (* Richardson's long steps straddle kinks of higher derivatives; gradcheck tries the short
#: stencil and central difference first, so "best stage" is what decides.) The oracle's accuracy
#: hardly depends on the family away from kinks, so every family affords the same 1e-10.
FAMILIES: dict[str, Tolerance] = {
    "arithmetic": Tolerance(atol=1e-10, rtol=1e-10),
    "exp_log": Tolerance(atol=1e-10, rtol=1e-10),
    "trig": Tolerance(atol=1e-10, rtol=1e-10),
    "tanh_sigmoid": Tolerance(atol=1e-10, rtol=1e-10),
    "sqrt_pow": Tolerance(atol=1e-10, rtol=1e-10),
    "piecewise": Tolerance(atol=1e-10, rtol=1e-10),
}

#: For graphs with ops the policy does not know; still far tighter than torch's.
DEFAULT = Tolerance(atol=1e-9, rtol=1e-8)


def family_of(op_name: str) -> str | None:
    """The tolerance family of an op, or None when the policy does not know the op.

    The family is the registry entry's; minigrad's own op names ("+", "PowConst", "CrossEntropy"...)
    resolve through the registry op they are checked like (`engines.minigrad_names`).
    """
    spec = registry.find(op_name) or registry.find(registry_name(op_name))
    return None if spec is None else spec.family


def policy_for(op_names: Iterable[str]) -> Tolerance:
    """The tolerance for a graph built from these ops: the loosest of their families'."""
    tolerance: Tolerance | None = None
    for family in {family_of(name) for name in op_names}:  # each family once
        found = FAMILIES[family] if family is not None else DEFAULT
        tolerance = found if tolerance is None else tolerance | found
    return tolerance if tolerance is not None else FAMILIES["arithmetic"]


# --- the functions the tolerances were measured on ---------------------------------------------


@dataclass(frozen=True)
class Probe:
    """A function of three scalars written with Value's API (so it runs on Values, floats-like
    `MPValue`s and Tensors), and the box its inputs are drawn from."""

    family: str
    name: str
    fn: Callable[..., Any]
    domain: tuple[float, float]


PROBES: tuple[Probe, ...] = (
    Probe(
        "arithmetic",
        "a*b*c + a*a - b/(c*c+1) + 3ab",
        lambda a, b, c: a * b * c + a * a - b / (c * c + 1) + 3 * a * b,
        (-2, 2),
    ),
    Probe(
        "arithmetic",
        "(a-c)*(b+2)/(a*a+0.5) - c",
        lambda a, b, c: (a - c) * (b + 2) / (a * a + 0.5) - c,
        (-2, 2),
    ),
    Probe(
        "arithmetic",
        "1/(a*b) - c/a, near the pole",
        lambda a, b, c: 1.0 / (a * b) - c / a,
        (0.05, 0.5),
    ),
    Probe(
        "exp_log",
        "exp(a*b) + log(b*b+0.5)*c",
        lambda a, b, c: (a * b).exp() + (b * b + 0.5).log() * c,
        (-1.5, 1.5),
    ),
    Probe(
        "exp_log", "exp(log(exp(a)+c*c) - b)", lambda a, b, c: ((a.exp() + c * c).log() - b).exp(), (-2, 2)
    ),
    Probe(
        "exp_log",
        "log(a) + log(b*c) + exp(8c), near the pole",
        lambda a, b, c: a.log() + (b * c).log() + (c * 8).exp(),
        (0.05, 0.5),
    ),
    Probe(
        "trig", "sin(a*b) + cos(c)*sin(a+c)", lambda a, b, c: (a * b).sin() + c.cos() * (a + c).sin(), (-3, 3)
    ),
    Probe(
        "trig", "cos(3 sin(a))*b - sin(c*c)", lambda a, b, c: (a.sin() * 3).cos() * b - (c * c).sin(), (-3, 3)
    ),
    Probe(
        "trig",
        "sin(10a)*cos(7b) + sin(c), high frequency",
        lambda a, b, c: (a * 10).sin() * (b * 7).cos() + c.sin(),
        (-3, 3),
    ),
    Probe(
        "tanh_sigmoid",
        "tanh(a*b+c) + sigmoid(a-c)*b",
        lambda a, b, c: (a * b + c).tanh() + (a - c).sigmoid() * b,
        (-3, 3),
    ),
    Probe(
        "tanh_sigmoid",
        "sigmoid(tanh(2a)*b) * tanh(c)",
        lambda a, b, c: ((a * 2).tanh() * b).sigmoid() * c.tanh(),
        (-3, 3),
    ),
    Probe(
        "tanh_sigmoid",
        "tanh(8a)*sigmoid(6b) - sigmoid(-10c), saturating",
        lambda a, b, c: (a * 8).tanh() * (b * 6).sigmoid() - (c * -10).sigmoid(),
        (-3, 3),
    ),
    Probe(
        "sqrt_pow",
        "sqrt(a*a+b*b+0.1) + (c*c+1)**1.5",
        lambda a, b, c: (a * a + b * b + 0.1).sqrt() + (c * c + 1) ** 1.5,
        (-2, 2),
    ),
    Probe(
        "sqrt_pow",
        "(a*a+1)**(b/2) * sqrt(c*c+0.5)",
        lambda a, b, c: (a * a + 1) ** (b * 0.5) * (c * c + 0.5).sqrt(),
        (-2, 2),
    ),
    Probe(
        "sqrt_pow",
        "sqrt(a) + b**-1.5 + a**c, near 0",
        lambda a, b, c: a.sqrt() + b**-1.5 + a**c,
        (0.05, 0.5),
    ),
    Probe(
        "piecewise",
        "relu(a*b-c) + abs(a+c)*b",
        lambda a, b, c: (a * b - c).relu() + (a + c).abs() * b,
        (-2, 2),
    ),
    Probe("piecewise", "abs(relu(a)*b - c) * a", lambda a, b, c: (a.relu() * b - c).abs() * a, (-2, 2)),
)
