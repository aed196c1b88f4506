"""The kinds of difference between an engine and torch: what a finding says went wrong.

Every check that compares an engine with torch (the random graphs, the op-isolation pass, the
edge-value table) names the kind of each difference it reports, so that findings of the same
bug group together and a convention is never shown like a wrong derivative.
"""

from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    """One kind of difference; the value is the spelling used in reports, JSON and the CLI."""

    WRONG_GRADIENT = "wrong-gradient"
    """First derivatives differ from torch's (and from the numerical oracle's) beyond tolerance."""

    WRONG_SECOND_DERIVATIVE = "wrong-second-derivative"
    """Hessian-vector products differ from torch's while first derivatives agree."""

    WRONG_VALUE = "wrong-value"
    """The forward value differs from torch's."""

    WRONG_FORWARD_MODE = "wrong-forward-mode"
    """J·v by the engine's forward mode differs from the exact value (or from the engine's own
    reverse mode) while its reverse-mode gradients agree with torch's."""

    WRONG_TRANSFORM = "wrong-transform"
    """A gradient taken by one of the engine's transforms (torch.func's jacrev, jacfwd or vmap,
    JAX's jit) differs from the exact value (or from the engine's own reverse mode) while its
    reverse-mode gradients agree with torch's."""

    NONFINITE = "nonfinite"
    """nan or inf where torch is finite, or the reverse (or a different nan/±inf pattern)."""

    EXCEPTION = "exception"
    """The engine raised where torch computed a result."""

    WRONG_TYPE = "wrong-type"
    """The engine answered with something that is not a number (a node inside `.data`, None, a
    list, a complex number), or not as many answers as the graph has."""

    WRONG_SHAPE = "wrong-shape"
    """The engine answered with numbers of another shape than torch's (an attribute such as
    keepdim not passed on, a reduction over the wrong dims)."""

    CONVENTION = "convention"
    """At a kink the engine's slope lies between the one-sided derivatives but is not torch's."""

    STRUCTURAL = "structural"
    """The engine's graph code (topological order, accumulation, zero_grad, recursion) differs from
    torch on the structural phase's graphs, whatever ops they use."""

    NONDETERMINISTIC = "nondeterministic"
    """A difference that some rebuilds of the same graph show and others do not."""

    CRASH = "crash"
    """The engine ended the process checking it (sys.exit, os._exit, a segmentation fault, a
    signal): the worker process running it died there (`gradcheck.campaign.supervisor`)."""

    TIMEOUT = "timeout"
    """The engine gave no answer within the time limit (`--graph-timeout`): its worker was killed."""

    def __str__(self) -> str:
        return self.value


# How a check's problem words an answer of kind WRONG_TYPE ("wrong type: output 0 is ...").
WRONG_TYPE = "wrong type"

# Reported, but not a failure, under `--conventions subgradient`.
SUBGRADIENT_TOLERATED = frozenset({Kind.CONVENTION})
