"""Engines whose bug is in one mode only, for the tests of forward mode (`gradcheck.parity.modes`):
a campaign that checks reverse mode alone passes them.

`TanhForwardOff` is torch with tanh as a custom `torch.autograd.Function` whose reverse rule is
right (g · (1 - t²)) and whose forward-mode rule (`jvp`) is written as (1 - t) · ẋ: the mistake of
a hand-written JVP beside a correct VJP, as in the forward-mode bugs torch's issue tracker shows
(forward and reverse mode disagreeing, pytorch#198017). `TanhForwardOffReverseOnly` is the same
engine with its forward mode not declared: what a campaign that checks reverse mode alone sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from gradcheck.engines.torch_engine import TorchAdapter, torch
from gradcheck.graphs.registry import REGISTRY


@cache
def _tanh_function() -> Any:
    """The custom tanh (made on first use: torch is imported lazily)."""

    class Tanh(torch.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return torch.tanh(x)

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (t,) = ctx.saved_tensors
            return grad * (1 - t * t)

        @staticmethod
        def jvp(ctx: Any, tangent: Any) -> Any:
            (t,) = ctx.saved_tensors
            return tangent * (1 - t)  # the planted bug: 1 - t, not 1 - t²

    return Tanh


class TanhForwardOff(TorchAdapter):
    """torch, its tanh a custom Function with a wrong forward-mode rule (the reverse one is right)."""

    name = "tanh-forward-off"

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "tanh":
            return _tanh_function().apply(args[0])
        return REGISTRY[op].apply_torch(args, attrs)


class TanhForwardOffReverseOnly(TanhForwardOff):
    """`TanhForwardOff` with no forward mode declared: its reverse mode alone is checked."""

    name = "tanh-forward-off-reverse-only"
    forward_mode = False
