"""The tolerance policy: how far an analytical gradient may sit from the numerical oracle, per op family.

A gradient entry passes when ``|analytical - numerical| <= atol + rtol * |numerical|`` (torch's
test). The numbers below were measured with ``benchmarks/bench_gradcheck.py`` on the probe
functions in `PROBES` (values and gradients of order 1, inputs in each family's `domain`): the
worst error of minigrad's float64 gradient against the oracle of `gradcheck.oracle` (Richardson
extrapolation, or mpmath), times a safety margin of about 100, rounded up to a power of ten.
They are 10^4 to 10^5 times tighter than torch's defaults (atol 1e-5, rtol 1e-3) and still
catch a derivative off by 1e-6 relative.

The parity harness asks for a graph's tolerance with ``policy_for(op_names)``: the loosest
tolerance among the families those ops belong to. Unknown op names get `DEFAULT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """Pass when |a - n| <= atol + rtol·|n| (n the numerical reference), entrywise."""

    atol: float
    rtol: float

    def __post_init__(self) -> None:
        if not (self.atol >= 0 and self.rtol >= 0):
            raise ValueError(f"Tolerance: atol and rtol must be >= 0, got atol={self.atol}, rtol={self.rtol}")

    def allowed(self, numerical: Any) -> Any:
        """The largest |a - n| accepted for reference value(s) n."""
        return self.atol + self.rtol * np.abs(numerical)

    def accepts(self, analytical: Any, numerical: Any) -> Any:
        """Entrywise verdict; NaN on one side only fails, NaN on both sides or equal infinities pass."""
        a = np.asarray(analytical, dtype=np.float64)
        n = np.asarray(numerical, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            close = np.abs(a - n) <= self.allowed(n)
        return close | (np.isnan(a) & np.isnan(n)) | (np.isinf(a) & (a == n))

    def __or__(self, other: Tolerance) -> Tolerance:
        """The looser of two tolerances (entry by entry of atol and rtol)."""
        return Tolerance(max(self.atol, other.atol), max(self.rtol, other.rtol))

    def scaled(self, factor: float) -> Tolerance:
        return Tolerance(self.atol * factor, self.rtol * factor)


#: torch.autograd.gradcheck's defaults, for comparison.
TORCH = Tolerance(atol=1e-5, rtol=1e-3)

#: Per op family: the tolerance against the accurate oracle (see module docstring).
FAMILIES: dict[str, Tolerance] = {
    "arithmetic": Tolerance(atol=1e-11, rtol=1e-10),
    "exp_log": Tolerance(atol=1e-11, rtol=1e-10),
    "trig": Tolerance(atol=1e-11, rtol=1e-10),
    "tanh_sigmoid": Tolerance(atol=1e-11, rtol=1e-10),
    "sqrt_pow": Tolerance(atol=1e-11, rtol=1e-10),
    "piecewise": Tolerance(atol=1e-11, rtol=1e-10),
}

#: For graphs with ops the policy does not know; still far tighter than torch's.
DEFAULT = Tolerance(atol=1e-9, rtol=1e-8)

#: Op name -> family. Names are compared lower-cased without underscores, so minigrad's
#: `ScalarOp.name` ("**", "ReLU"), its class names ("PowConst"), Tensor op names ("matmul") and
#: the parity registry's names ("pow_const") all resolve.
OP_FAMILY: dict[str, str] = {
    **dict.fromkeys(
        ["+", "-", "*", "/", "add", "sub", "mul", "div", "neg", "addconst", "subconst", "rsubconst"],
        "arithmetic",
    ),
    **dict.fromkeys(["mulconst", "divconst", "rdivconst", "sum", "mean", "matmul", "dot"], "arithmetic"),
    # data movement: exact, adds no error of its own
    **dict.fromkeys(
        ["reshape", "permute", "expand", "getitem", "cat", "stack", "to", "sumtosize", "takealongaxis"],
        "arithmetic",
    ),
    **dict.fromkeys(["putalongaxis", "scatteradd"], "arithmetic"),
    **dict.fromkeys(["exp", "log"], "exp_log"),
    **dict.fromkeys(["sin", "cos"], "trig"),
    **dict.fromkeys(["tanh", "sigmoid"], "tanh_sigmoid"),
    **dict.fromkeys(["sqrt", "**", "pow", "powconst", "rpowconst"], "sqrt_pow"),
    **dict.fromkeys(
        ["relu", "abs", "max", "min", "maximum", "minimum", "amax", "amin", "clamp", "where"], "piecewise"
    ),
}


def family_of(op_name: str) -> str | None:
    """The family of an op name, or None when the policy does not know the op."""
    return OP_FAMILY.get(op_name.lower().replace("_", ""))


def policy_for(op_names: Iterable[str]) -> Tolerance:
    """The tolerance for a graph built from these ops: the loosest of their families'."""
    tolerance: Tolerance | None = None
    for name in op_names:
        family = family_of(name)
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
        "exp_log",
        "exp(a*b) + log(b*b+0.5)*c",
        lambda a, b, c: (a * b).exp() + (b * b + 0.5).log() * c,
        (-1.5, 1.5),
    ),
    Probe(
        "exp_log", "exp(log(exp(a)+c*c) - b)", lambda a, b, c: ((a.exp() + c * c).log() - b).exp(), (-2, 2)
    ),
    Probe(
        "trig", "sin(a*b) + cos(c)*sin(a+c)", lambda a, b, c: (a * b).sin() + c.cos() * (a + c).sin(), (-3, 3)
    ),
    Probe(
        "trig", "cos(3 sin(a))*b - sin(c*c)", lambda a, b, c: (a.sin() * 3).cos() * b - (c * c).sin(), (-3, 3)
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
        "piecewise",
        "relu(a*b-c) + abs(a+c)*b",
        lambda a, b, c: (a * b - c).relu() + (a + c).abs() * b,
        (-2, 2),
    ),
    Probe("piecewise", "abs(relu(a)*b - c) * a", lambda a, b, c: (a.relu() * b - c).abs() * a, (-2, 2)),
)
