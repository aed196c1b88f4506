"""What a check can find, as names the records (`gradcheck.parity.problem`) and their renderer
(`gradcheck.parity.wording`) share: the kinds of problem (`What`), the bounds an allowance comes
from (`BoundKind`) and the parts of a check."""

from __future__ import annotations

from enum import Enum


class What(str, Enum):
    """What a check found at one entry; the value is report.json's spelling."""

    FORWARD = "forward"
    """An output differs from torch's beyond its allowance."""
    GRADIENT = "gradient"
    """A gradient entry differs from torch's beyond its allowance."""
    NUMERIC = "numeric"
    """A gradient entry differs from central differences beyond their tolerance."""
    REFERENCES_DISAGREE = "references-disagree"
    """Torch's gradient and central differences disagree (the engine is not judged by it)."""
    HESSIAN = "hessian"
    """A Hessian-vector product entry differs from torch's beyond its allowance."""
    JVP = "jvp"
    """A forward-mode J·v entry differs from the exact value beyond its allowance."""
    MODES = "modes"
    """The engine's forward and reverse modes break the transpose identity u·(J v) = (u J)·v."""
    TRANSFORM = "transform"
    """A gradient entry by one of the engine's transforms (`Problem.case`) differs from the exact
    value (or, without one, from its reverse-mode gradient) beyond its allowance."""
    RAISED = "raised"
    """The engine (or its adapter) raised: `Problem.raised` says what and whose."""
    NOT_A_NUMBER = "not-a-number"
    """An answer that is not a number (None, a list, a node inside `.data`)."""
    WRONG_COUNT = "wrong-count"
    """Not as many outputs or gradients as the graph has."""
    WRONG_SHAPE = "wrong-shape"
    """A number of another shape than torch's."""
    NOT_REAL = "not-real"
    """A result that cannot be read as a real number (a complex number, a raising `__float__`)."""
    DTYPE = "dtype"
    """float32: an output of another dtype than torch's (type promotion)."""
    FLOAT32 = "float32"
    """float32: an entry outside torch's own float32 accuracy against the float64 truth."""
    EDGE_SHAPE = "edge-shape"
    """At an edge value: the engine's value or gradient has another shape than torch's."""
    EDGE_PATTERN = "edge-pattern"
    """At an edge value: nan and inf where torch has others (or a number)."""
    EDGE_VALUE = "edge-value"
    """At an edge value: a finite entry beyond the edge tolerance."""
    STRUCTURAL = "structural"
    """A structural check failed (`gradcheck.campaign.structure`): `case` names it."""
    DIED = "died"
    """The engine's worker process died or hung (`gradcheck.campaign.crashes`)."""
    INSPECTION = "inspection"
    """The inspection of a value class refused something (`gradcheck.campaign.inspection`)."""
    EARLIER = "earlier"
    """Read from a report of an earlier schema, whose problems were sentences: `note` holds it."""

    def __str__(self) -> str:
        return self.value


class BoundKind(str, Enum):
    """Which bound an allowance was computed from."""

    TORCH_ROUNDING = "torch-rounding"
    """The rounding of torch's own float64 evaluation (`gradcheck.parity.bound`)."""
    ANY_ORDER = "any-order"
    """The rounding of any correct evaluation, against the exact value (`gradcheck.parity.any_order`):
    an entry outside torch's rounding is judged by it again, and with the exact reference every entry."""
    EXACT_HVP = "exact-hvp"
    """A Hessian-vector product against the exact value: the rounding bound of torch's second
    backward pass (`gradcheck.parity.bound`) times `HVP_SAFETY`, the allowance the exact reference
    gives H·v (`gradcheck.parity.against_exact`)."""

    def __str__(self) -> str:
        return self.value


class Off(str, Enum):
    """Who is off the exact value at an entry judged against it (`check_graph(reference="exact")`,
    torch evaluated beside the engine): each is judged by the same allowance."""

    ENGINE = "engine"
    """The engine alone: torch is within its allowance of the exact value."""
    TORCH = "torch"
    """Torch alone: the engine is within its allowance, torch is not (the engine is right)."""
    BOTH = "both"
    """The engine and torch alike."""

    def __str__(self) -> str:
        return self.value


# Which part of a check a problem belongs to.
FORWARD, GRADIENT, SECOND, FORWARD_MODE = "forward", "gradient", "second-derivative", "forward-mode"
TRANSFORM = "transform"  # another road to the gradient (torch.func's jacrev, JAX's jit): `case` names it
# The kinds of problem that say the answer was not a number of the expected shape.
NOT_NUMBERS = frozenset({What.NOT_A_NUMBER, What.WRONG_COUNT, What.WRONG_SHAPE, What.NOT_REAL})
# The differences from torch at an edge value.
EDGE_DIFFERENCES = frozenset({What.EDGE_SHAPE, What.EDGE_PATTERN, What.EDGE_VALUE})
