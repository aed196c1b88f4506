"""Engines whose bug is in one mode only, for the tests of forward mode (`gradcheck.parity.modes`)
and of the transforms (`gradcheck.parity.transforms`): a campaign that checks reverse mode alone
passes them.

`TanhForwardOff` is torch with tanh as a custom `torch.autograd.Function` whose reverse rule is
right (g · (1 - t²)) and whose forward-mode rule (`jvp`) is written as (1 - t) · ẋ: the mistake of
a hand-written JVP beside a correct VJP, as in the forward-mode bugs torch's issue tracker shows
(forward and reverse mode disagreeing, pytorch#198017). `TanhForwardOffReverseOnly` is the same
engine with its forward mode not declared: what a campaign that checks reverse mode alone sees.
`TanhVmapOff` is torch with tanh's batching rule (`vmap`, used by `torch.func.vmap` alone)
computing in float32, and `TanhVmapOffReverseOnly` the same without transforms declared.
`TanhHvpForwardOff` is torch with tanh's backward a custom Function of its own (twice
differentiable by hand, as a custom double backward is written): its reverse rule right, its
forward-mode rule dropping a factor 2 of -2t·ṫ, so that reverse over reverse is right and forward
over reverse (`torch.func.jvp` of `grad`) is not; `TanhHvpForwardOffReverseOnly` the same
without its other order of H·v declared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from gradcheck.engines.torch_engine import TorchAdapter, torch
from gradcheck.graphs.registry import REGISTRY


def _custom_function(name: str, **rules: Any) -> Any:
    """A custom `torch.autograd.Function` of the given static methods."""
    return type(name, (torch.autograd.Function,), {k: staticmethod(f) for k, f in rules.items()})


def _saving_all(ctx: Any, inputs: Any, output: Any) -> None:
    ctx.save_for_backward(*inputs)
    ctx.save_for_forward(*inputs)


def _saving_output(ctx: Any, inputs: Any, output: Any) -> None:
    ctx.save_for_backward(output)
    ctx.save_for_forward(output)


def _custom_tanh(**rules: Any) -> Any:
    """tanh as a custom `torch.autograd.Function`: its forward and a right reverse rule (g · (1 - t²),
    t the saved output), with `rules` (a forward-mode `jvp`, a batching rule `vmap`, another
    reverse rule) beside or in place of them."""

    def forward(x: Any) -> Any:  # a function of its own: torch reads its signature
        return torch.tanh(x)

    def backward(ctx: Any, grad: Any) -> Any:
        (t,) = ctx.saved_tensors
        return grad * (1 - t * t)

    methods = {"forward": forward, "setup_context": _saving_output, "backward": backward, **rules}
    return _custom_function("Tanh", **methods)


def _wrong_jvp(ctx: Any, tangent: Any) -> Any:
    (t,) = ctx.saved_tensors
    return tangent * (1 - t)  # the planted bug: 1 - t, not 1 - t²


def _float32_batching(info: Any, in_dims: Any, x: Any) -> Any:
    # the planted bug: the batched kernel computes in float32, and the backward's saved output
    # carries its rounding (a loop of backward passes never runs this rule)
    return torch.tanh(x.float()).to(x.dtype), in_dims[0]


@cache
def _tanh_function() -> Any:
    """The custom tanh with the wrong forward-mode rule (made on first use: torch is imported lazily)."""
    return _custom_tanh(jvp=_wrong_jvp)


class _CustomTanhAdapter(TorchAdapter):
    """torch with its tanh the custom Function `custom_tanh()` makes (each planted engine's own)."""

    custom_tanh: Callable[[], Any]

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "tanh":
            return self.custom_tanh().apply(args[0])
        return REGISTRY[op].apply_torch(args, attrs)


class TanhForwardOff(_CustomTanhAdapter):
    """torch, its tanh a custom Function with a wrong forward-mode rule (the reverse one is right)."""

    name = "tanh-forward-off"
    # forward mode checked alone (torch.func.jacfwd, and forward over reverse, meet the same rule)
    transforms = ()
    hvp_transforms = ()

    custom_tanh = staticmethod(_tanh_function)


class TanhForwardOffReverseOnly(TanhForwardOff):
    """`TanhForwardOff` with no forward mode declared: its reverse mode alone is checked."""

    name = "tanh-forward-off-reverse-only"
    forward_mode = False


@cache
def _batched_tanh_function() -> Any:
    """The custom tanh with the hand-written batching rule in float32 (made on first use)."""
    return _custom_tanh(vmap=_float32_batching)


class TanhVmapOff(_CustomTanhAdapter):
    """torch, its tanh a custom Function whose hand-written batching rule computes in float32:
    right under a loop of backward passes, off under `torch.func.vmap` alone."""

    name = "tanh-vmap-off"

    custom_tanh = staticmethod(_batched_tanh_function)


class TanhVmapOffReverseOnly(TanhVmapOff):
    """`TanhVmapOff` with no transforms declared: its reverse mode alone is checked."""

    name = "tanh-vmap-off-reverse-only"
    transforms = ()


def _tanh_backward_function() -> Any:
    """g · (1 - t²) as a custom Function of (g, t): its reverse rule right, its forward-mode rule
    with the planted bug (-t · ṫ · g where the derivative is -2t · ṫ · g)."""

    def forward(grad: Any, t: Any) -> Any:
        return grad * (1 - t * t)

    def backward(ctx: Any, upstream: Any) -> Any:
        grad, t = ctx.saved_tensors
        return upstream * (1 - t * t), upstream * grad * (-2 * t)

    def jvp(ctx: Any, grad_dot: Any, t_dot: Any) -> Any:
        grad, t = ctx.saved_tensors
        return grad_dot * (1 - t * t) + grad * (-t) * t_dot  # the planted bug: -t, not -2t

    return _custom_function(
        "TanhBackward", forward=forward, setup_context=_saving_all, backward=backward, jvp=jvp
    )


@cache
def _tanh_twice_function() -> Any:
    """The custom tanh whose backward is `_tanh_backward_function` (made on first use)."""
    tanh_backward = _tanh_backward_function()

    def backward(ctx: Any, grad: Any) -> Any:
        (t,) = ctx.saved_tensors
        return tanh_backward.apply(grad, t)

    def jvp(ctx: Any, tangent: Any) -> Any:
        (t,) = ctx.saved_tensors
        return tangent * (1 - t * t)

    return _custom_tanh(backward=backward, jvp=jvp)


class TanhHvpForwardOff(_CustomTanhAdapter):
    """torch, its tanh's backward a custom Function whose forward-mode rule is wrong: the gradient,
    forward mode and reverse-over-reverse H·v are right, forward over reverse is not."""

    name = "tanh-hvp-forward-off"
    transforms = ()  # the gradient's transforms are checked on `TanhVmapOff`

    custom_tanh = staticmethod(_tanh_twice_function)


class TanhHvpForwardOffReverseOnly(TanhHvpForwardOff):
    """`TanhHvpForwardOff` with no other order of H·v declared: reverse over reverse alone."""

    name = "tanh-hvp-forward-off-reverse-only"
    hvp_transforms = ()


class TorchReverseOnly(TorchAdapter):
    """torch with its reverse mode alone (no forward mode, transforms or other order of H·v): the
    campaign as it ran before any other mode was checked, beside which their cost is measured."""

    name = "torch-reverse-only"
    forward_mode = False
    transforms = ()
    hvp_transforms = ()
