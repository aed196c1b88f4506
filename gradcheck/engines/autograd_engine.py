"""HIPS autograd as an engine under test: `autograd.grad` of the graph's function over
`autograd.numpy` arrays; it has no vectorising map, so the points run in a loop."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from gradcheck.engines.functional import Arrays, FunctionAdapter, Jvp
from gradcheck.graphs.registry import SCALAR_OPS, TENSOR_OPS
from gradcheck.graphs.spellings import Spelling, array_module_spellings
from gradcheck.graphs.surface import LATEST

# The other spellings autograd.numpy documents for the ops (numpy's aliases, each with a rule of
# its own in autograd) and the integer exponents `**` takes (a Python int, an integer array).
AUTOGRAD_SPELLINGS = (
    *array_module_spellings("np"),
    Spelling("abs", "np.fabs", lambda xp, a, k: xp.fabs(a[0])),
    Spelling("pow", "x ** int", lambda xp, a, k: a[0] ** int(a[1]), integer_exponent=True),
)


class AutogradAdapter(FunctionAdapter):
    """autograd.numpy arrays; gradients by `autograd.grad` with respect to the list of inputs."""

    name = "autograd"
    registry_release = LATEST  # a built-in adapter handles every form of its ops
    ops = frozenset(SCALAR_OPS)
    spellings = AUTOGRAD_SPELLINGS

    def __init__(self) -> None:
        import autograd
        import autograd.numpy

        self.autograd, self.numpy = autograd, autograd.numpy

    @property
    def xp(self) -> Any:
        return self.numpy

    def grad(self, f: Callable[[Arrays], Any]) -> Callable[[Arrays], Sequence[Any]]:
        grad_f = self.autograd.grad(lambda xs: f(list(xs)))

        def quiet(xs: Arrays) -> Sequence[Any]:
            with warnings.catch_warnings():  # a constant function's zero gradient is a fine answer
                warnings.filterwarnings("ignore", "Output seems independent of input")
                return grad_f(xs)

        return quiet

    def jvp(self, f: Callable[[Arrays], list[Any]]) -> Jvp:
        """`autograd.make_jvp`, the outputs as autograd's own list (a plain one is not traced)."""
        from autograd.builtins import list as traced_list

        def along(xs: Arrays, v: Arrays) -> tuple[Sequence[Any], Sequence[Any]]:
            with warnings.catch_warnings():  # a constant function's zero derivative is a fine answer
                warnings.filterwarnings("ignore", "Output seems independent of input")
                return self.autograd.make_jvp(lambda ys: traced_list(f(list(ys))))(list(xs))(list(v))

        return along


# Ops autograd's backward cannot take as the random graphs draw them (autograd 1.x): the VJP of
# `where` does not sum the gradient back to an operand smaller than the result
# ("non-broadcastable output operand"), and that of `broadcast_to` asserts on new leading dims
# ("Can't handle extra leading dims").
AUTOGRAD_LACKS = frozenset({"where", "expand"})


class AutogradTensorAdapter(AutogradAdapter):
    """HIPS autograd on tensor graphs (every registry op but `AUTOGRAD_LACKS`)."""

    name = "autograd-tensor"
    ops = frozenset(TENSOR_OPS) - AUTOGRAD_LACKS
    tensor = True
