"""The zoo's ground truth, written by hand: each published engine, the requirement that pins it,
the adapter it is checked through, and what a campaign must find in it.

Every bug-tier, graph-code and adapter finding a campaign makes must match one `Expected` of its
engine (tier, kind, ops and title), and every `Expected` must be matched: a finding nothing
expects is unexpected, an `Expected` no finding matches is a missed bug, and either fails the zoo.
Each `Expected` was reproduced by hand against torch (and, where the difference is in the last
digits, against the exact value with mpmath); `why` says what was seen. Edge behaviours and
conventions are counted, not listed: `limitations` says what an engine does not have or what the
campaign does not reach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The tiers whose every finding must be expected (docs/campaign.md, "Tiers"); edge behaviours and
# conventions are real differences from torch at special inputs, counted in the table only.
CHECKED_TIERS = ("bug", "graph-code", "adapter")

# graph-code findings every engine built on micrograd's recursive topological sort makes
BACKWARD_TWICE = "graph code — backward\\(\\) twice does not accumulate like torch"
RECURSION_LIMIT = "graph code — recursion limit in backward\\(\\) of deep chains"
POW_ZERO = "`x \\*\\* 0` at `x = 0` raises .*; torch gives gradient 0"


@dataclass(frozen=True)
class Expected:
    """A finding the campaign must make: its tier, kind, the ops of its minimal graph (none for
    graph code) and a regular expression its whole title matches; `why` is the hand check."""

    tier: str
    kind: str
    ops: tuple[str, ...]
    title: str
    why: str

    def matches(self, finding: dict) -> bool:
        """Whether a report.json finding is this one."""
        return (
            finding.get("tier") == self.tier
            and finding.get("kind") == self.kind
            and tuple(finding.get("ops") or ()) == self.ops
            and re.fullmatch(self.title, finding.get("title", "")) is not None
        )


def backward_twice(why: str) -> Expected:
    return Expected("graph-code", "structural", (), BACKWARD_TWICE, why)


def recursion_limit(depth: int = 986) -> Expected:
    return Expected(
        "graph-code",
        "structural",
        (),
        RECURSION_LIMIT,
        f"its topological sort recurses once per node: a chain of about {depth} ops raises RecursionError",
    )


# backward() sets the output's grad to 1 instead of adding 1, and every interior node keeps the
# gradient of the first pass: the second pass adds it again (a leaf of a three-op chain gets 4
# times its gradient where torch accumulates 2 times).
SEEDS_AND_REPEATS = backward_twice(
    "backward() seeds the output with 1 and re-adds the interior gradients of the first pass: "
    "a leaf of a three-op chain ends with 4 times its gradient, torch's with 2 times"
)
# x ** 0's rule is micrograd's `0 * x ** -1`: ZeroDivisionError at x = 0 (torch: slope 0)
MICROGRAD_POW_ZERO = Expected(
    "bug",
    "exception",
    ("pow_const",),
    POW_ZERO,
    "the rule `other * x ** (other - 1)` computes 0 * 0.0 ** -1 at x = 0: ZeroDivisionError where "
    "torch's gradient is 0",
)


def exp_tanh(
    module: str, x: str, engine: str, torch: str, exact: str, errors: str, overflow: str = ""
) -> Expected:
    """tanh written `(exp(2x) - 1) / (exp(2x) + 1)`: exp(2x) - 1 cancels near 0; `overflow`, how
    the same formula gives nan where exp(2x) overflows at ordinary inputs (one finding: the op's
    wrong numbers at ordinary inputs are one, docs/findings.md)."""
    return Expected(
        "bug",
        "wrong-value",
        ("tanh",),
        "tanh — wrong value" + ("; nan/inf unlike torch" if overflow else ""),
        f"tanh is `(exp(2x) - 1) / (exp(2x) + 1)` with {module}, and exp(2x) - 1 cancels near 0: at "
        f"x = {x} it gives {engine}, torch {torch}, mpmath {exact} (relative errors {errors})"
        + (f"; {overflow}" if overflow else ""),
    )


@dataclass(frozen=True)
class Engine:
    """One published engine of the zoo."""

    name: str
    requirement: str  # pip's requirement, pinned with ==
    engine: str  # gradcheck's --engine: a value class inspected, or an adapter under zoo/adapters/
    expected: tuple[Expected, ...]
    tensor: bool = False
    graphs: int = 2000
    ci: bool = False  # one of the engines of the CI slice (scripts/test.sh)
    no_deps: str = ""  # why it is installed without its declared dependencies (empty: with them)
    limitations: tuple[str, ...] = field(default=())
    options: tuple[str, ...] = ()  # more `gradcheck run` options (a cap such as --graph-timeout), with why

    def command(self, graphs: int | None = None, seed: int = 1) -> list[str]:
        """The `gradcheck run` arguments of its campaign (seed 1: docs/zoo.md's table)."""
        args = [
            "--engine",
            self.engine,
            "--graphs",
            str(graphs or self.graphs),
            "--seed",
            str(seed),
            *self.options,
        ]
        return [*args, "--tensor"] if self.tensor else args


TANH_OVERFLOWS = "math.exp(2 * 355.0) overflows: tanh(355) raises OverflowError where torch gives 1.0"

ENGINES: tuple[Engine, ...] = (
    Engine(
        "micrograd",
        "micrograd==0.1.0",
        "micrograd.engine:Value",
        (MICROGRAD_POW_ZERO, SEEDS_AND_REPEATS, recursion_limit()),
        ci=True,
        limitations=(
            "no pow with a Value exponent, tanh, exp or log: 7 ops (add sub mul div pow_const neg relu)",
        ),
    ),
    Engine(
        "femtograd",
        "femtograd==0.0.5",
        "femtograd.femtograd:value",
        (
            exp_tanh(
                "math.exp",
                "1.960448109592287e-06",
                "1.9604481096337736e-06",
                "1.9604481095897757e-06",
                "1.96044810958977562e-06",
                "2.2e-11 and 5.8e-17",
            ),
            Expected("bug", "exception", ("tanh",), "tanh — engine raised OverflowError", TANH_OVERFLOWS),
            MICROGRAD_POW_ZERO,
            SEEDS_AND_REPEATS,
            recursion_limit(),
        ),
        ci=True,
        limitations=(
            "the class is `value`, lower case; 8 ops (micrograd's and tanh)",
            "relu'(0) is 1 (a convention: a valid subgradient, torch takes 0)",
        ),
    ),
    Engine(
        "coregrad",
        "coregrad==0.1.0",
        "coregrad.engine:Scalar",
        (
            Expected(
                "bug",
                "wrong-gradient",
                ("pow",),
                "pow — wrong gradient",
                "x ** y gives the exponent no gradient (its line is commented out): at (8.2588, -2.8738) "
                "d/dy is 0, torch 0.004892184482686614 (x ** y · log x)",
            ),
            exp_tanh(
                "np.exp",
                "1.4050310117735103e-06",
                "1.4050310117312374e-06",
                "1.4050310117725858e-06",
                "1.40503101177258576e-06",
                "2.9e-11 and 1.9e-17",
                "np.exp(2 * 355.0) is inf and inf / inf nan: tanh(355) is nan where torch gives 1.0",
            ),
            Expected(
                "bug",
                "exception",
                ("pow_const",),
                POW_ZERO,
                "x ** 0 differentiates as 0 * x ** -1.0: ZeroDivisionError at x = 0, torch's slope 0",
            ),
            Expected(
                "bug",
                "exception",
                ("pow",),
                "`x \\*\\* y` at `x = 0, y = 0` raises .*; torch gives gradients 0 and 0",
                "pow(0, 0): the base's rule y * x ** (y - 1.0) raises ZeroDivisionError, torch gives 1 "
                "with gradients (0, 0)",
            ),
            SEEDS_AND_REPEATS,
            recursion_limit(),
        ),
        limitations=("no `__neg__`: -x is not checked; no relu",),
    ),
    Engine(
        "fauxgrad",
        "fauxgrad==0.2",
        "fauxgrad.value:Value",
        (SEEDS_AND_REPEATS, recursion_limit()),
        no_deps="it requires `sklearn>=0.21`, the deprecated name pip refuses to install; "
        "its engine imports only the standard library",
        limitations=(
            "keeps its number in `val`; no `__sub__`, `__truediv__` or `**`: 6 ops "
            "(add mul neg relu sigmoid log)",
            "sigmoid is `1 / (1 + math.exp(-x))`: OverflowError below -709 (edge tier)",
        ),
    ),
    Engine(
        "deep-autograd",
        "deep-autograd==0.0.2",
        "deep_autograd.engine:Value",
        (MICROGRAD_POW_ZERO, SEEDS_AND_REPEATS, recursion_limit()),
        limitations=("micrograd's engine, unchanged: the same 7 ops and the same findings",),
    ),
    Engine(
        "omnigrad",
        "omnigrad==0.2.3",
        "zoo/adapters/omnigrad_value.py:OmnigradValue",
        (
            exp_tanh(
                "math.exp",
                "0.0007991094794578914",
                "0.0007991093093605117",
                "0.0007991093093605671",
                "0.000799109309360567096",
                "6.9e-14 and 1.4e-17",
            ),
            Expected("bug", "exception", ("tanh",), "tanh — engine raised OverflowError", TANH_OVERFLOWS),
            MICROGRAD_POW_ZERO,
            Expected(
                "bug",
                "exception",
                ("div",),
                "div with a number on the left — engine raised ZeroDivisionError",
                "c / x is `Value(1) / (x / c)`: 0.0 / x divides by zero (ZeroDivisionError) where torch "
                "gives 0 with gradient -0",
            ),
            SEEDS_AND_REPEATS,
            recursion_limit(),
        ),
        limitations=(
            "the adapter is --print-adapter's, edited: sigmoid is spelled `sigmod()` and log `ln()`, "
            "which the inspection cannot guess",
        ),
    ),
    Engine(
        "propgrad",
        "propgrad==0.1.1",
        "propgrad.engine:Value",
        (MICROGRAD_POW_ZERO, SEEDS_AND_REPEATS, recursion_limit()),
        limitations=(
            "sigmoid returns exactly 0 below x = -50 (torch: e^x, 1.9e-22 at -50): a real difference "
            "no campaign draws, as random inputs stay within a few units and the edge values jump "
            "to -709",
        ),
    ),
    Engine(
        "mygrad",
        "mygrad==2.5.0",
        "zoo/adapters/mygrad_tensor.py:MyGradTensor",
        (
            Expected(
                "bug",
                "wrong-gradient",
                ("maximum",),
                "maximum at a tie — wrong gradient",
                "mg.maximum(x, x) passes no gradient to either side (0, 0), so the slope along both is "
                "0, not 1; torch gives 1/2 each",
            ),
            Expected(
                "bug",
                "wrong-gradient",
                ("minimum",),
                "minimum at a tie — wrong gradient",
                "mg.minimum at a tie gives (0, 0) as maximum does; torch 1/2 each",
            ),
            backward_twice(
                "MyGrad clears the graph's gradients at each backward(): a second backward gives the "
                "gradient once (-1.6875) where torch accumulates twice it (-3.375); by design"
            ),
        ),
        tensor=True,
        limitations=(
            "amax and amin at ties send the gradient to one maximum, clip at a bound passes 0 (conventions)",
            "release 2 of the op surface (keepdims, vector and batched matmul) on the release-1 ops; "
            "no layout ops (index, where, expand, ...) or losses",
        ),
    ),
    Engine(
        "mangograd",
        "mangograd==0.1.1",
        "zoo/adapters/mangograd_tensor.py:MangogradTensor",
        (
            Expected(
                "bug",
                "wrong-value",
                ("log",),
                "log — wrong value",
                "log is `np.log(x + 1e-8)` and its slope 1 / (x + 1e-8): log(1) = 9.99999989e-09, torch 0",
            ),
            SEEDS_AND_REPEATS,
            recursion_limit(),
        ),
        tensor=True,
        limitations=(
            "its Tensor: mean and max over one axis (the adapter reduces a tuple of dims one dim at "
            "a time), sum over everything only, matrices only, no `**`",
            "max(axis) at a tie sends the gradient to the first maximum (a convention: torch's amax "
            "shares it)",
            "its scalar `Value` is micrograd's engine with tanh and exp, not in the zoo",
        ),
    ),
    Engine(
        "nanograd-lite",
        "nanograd-lite==0.1.1",
        "zoo/adapters/nanograd_tensor.py:NanogradTensor",
        (
            Expected(
                "bug",
                "exception",
                ("sum",),
                "sum over a tuple of dims — engine raised AxisError",
                "sum(axis=(-3, -2, -1), keepdims=False) backward expands the gradient at the sorted "
                "negative axes of the result's rank: AxisError (axis -3 out of bounds for dimension 1)",
            ),
            Expected(
                "bug",
                "nonfinite",
                ("pow_const",),
                "pow_const to the power 0 at a pole — nan/inf unlike torch",
                "x ** 0 differentiates as 0 * x ** -1 in numpy: 0 * inf = nan at x = 0, torch 0",
            ),
            SEEDS_AND_REPEATS,
            recursion_limit(985),
        ),
        tensor=True,
        limitations=(
            "imported as `nanograd`; no `__rsub__` or `__rtruediv__` (the adapter makes a number on the "
            "left a Tensor); mean over everything only; transpose of the last two dims only",
        ),
    ),
)
