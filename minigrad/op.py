"""What an op is to minigrad: a name, a forward rule and the derivative rule beside it.

`ScalarOp` is the base of ops on `Value` (and of the elementwise rules both engines share);
`TensorOp` is the base of ops that only `Tensor` has (reductions, shape ops, matmul). This module
holds the two bases only, so every rule module can import them without import cycles.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


class ScalarOp:
    """Base of every scalar op: a name (shown as `Value._op`), a forward and a derivative rule.

    A derivative rule `backward(g, out, *inputs)` returns one gradient per input. Constants such as
    the 2 in `x * 2` given to `apply_op(..., const=2)` come after the inputs and get no gradient.
    """

    name: ClassVar[str]
    # True when an engine may call `gradients(g, out, a, b)` instead of `backward` (a shared
    # binary rule whose `backward` nobody rewrote); see `elementwise.Binary`.
    direct: ClassVar[bool] = False
    # What a scalar pass calls for one gradient per input: `backward`, or `gradients` when `direct`
    # (one call instead of two); set once per class, so the pass does not ask on every node.
    scalar_backward: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.scalar_backward = cls.backward

    @staticmethod
    def forward(*args: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(g: Any, out: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        raise NotImplementedError


class TensorOp:
    """Base of every tensor op: a name (used in error messages), a forward and a derivative rule.

    A derivative rule `backward(g, out, *inputs, needs, **params)` returns one gradient per input,
    None where `needs` says the input does not require grad.
    """

    name: ClassVar[str]
    # False for ops that only move, select or negate elements: numpy can't warn about overflow or
    # invalid values there, so they skip the np.errstate that silences those warnings (torch's
    # kernels never warn either).
    arithmetic: ClassVar[bool] = True
    # True for the shared elementwise rules: `backward(g, out, *inputs)` then works on unbroadcast
    # math, and the Tensor engine sums each gradient back to its input's shape.
    elementwise: ClassVar[bool] = False
    # The gradient-buffer protocol of `Tensor.backward`'s walk (`AutogradMethods._propagate`):
    # True when every array `backward` returns on arrays is new memory made for that one input (not
    # g, out or an input, not shared with another gradient it returns), so the walk may hand it on
    # as the pass's own; `tests/test_grad_ownership.py` checks each rule that says so.
    fresh_grads: ClassVar[bool] = False
    # True for rules whose backward takes `owned`: the walk passes True when g is the pass's own
    # (above), and the rule may then overwrite g instead of allocating. Other callers pass nothing.
    reuses_grad: ClassVar[bool] = False

    @staticmethod
    def forward(*args: Any, **params: Any) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def backward(g: Any, out: Any, *args: Any, needs: tuple[bool, ...], **params: Any) -> tuple[Any, ...]:
        raise NotImplementedError


def _call(function: Any, *args: Any, **kwargs: Any) -> Any:
    return function(*args, **kwargs)


def _call_in_errstate_block(function: Any, *args: Any, **kwargs: Any) -> Any:
    with np.errstate(all="ignore"):
        return function(*args, **kwargs)


#: quietly(function, *args, **kwargs): the call without numpy's overflow and invalid-value
#: warnings, for an arithmetic op's rules (torch's kernels never warn). numpy 2's decorator form of
#: np.errstate keeps its state per call (so it nests and is thread-safe) and costs a third less than
#: a `with` block, a Python object made, entered and left per call; numpy 1's decorator form keeps
#: one state for all calls, which nested calls (rules run under `create_graph`) would overwrite.
quietly = (
    np.errstate(all="ignore")(_call) if int(np.__version__.split(".")[0]) >= 2 else _call_in_errstate_block
)
