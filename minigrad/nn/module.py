"""`Module`: the base of every model, finding its parameters by walking its attributes.

A parameter is any autograd node (a `Value`, or a `Tensor` that requires grad) held directly in
an attribute or inside a list, tuple or dict attribute, or in a sub-module. Subclasses therefore
need no `parameters()` of their own; defining one (micrograd style) still works.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def is_parameter(obj: Any) -> bool:
    """True for an autograd node that learns: every Value, and a Tensor with `requires_grad`."""
    if isinstance(obj, type) or not hasattr(obj, "_local_grads"):
        return False
    return bool(getattr(obj, "requires_grad", True))


def reset_grads(params: Iterable[Any]) -> None:
    """Forget each parameter's gradient: a Value's float grad becomes 0.0, a Tensor's grad None (torch)."""
    for param in params:
        param.grad = 0.0 if isinstance(param.grad, (int, float)) else None


class Module:
    """Base class of models: `parameters()` and `zero_grad()`, as in micrograd and torch.nn."""

    def parameters(self) -> list[Any]:
        """Every parameter reachable from this module's attributes, in attribute order, each once."""
        seen: set[int] = set()
        found: list[Any] = []
        for param in _walk(vars(self)):
            if id(param) not in seen:
                seen.add(id(param))
                found.append(param)
        return found

    def zero_grad(self) -> None:
        """Reset the gradient of every parameter before the next backward pass."""
        reset_grads(self.parameters())


def _walk(root: Any) -> Iterator[Any]:
    """Parameters inside `root` in order: containers are walked with a stack, sub-modules asked."""
    stack = [root]
    while stack:
        obj = stack.pop()
        if is_parameter(obj):
            yield obj
        elif isinstance(obj, Module):
            yield from obj.parameters()
        elif isinstance(obj, dict):
            stack.extend(reversed(list(obj.values())))
        elif isinstance(obj, (list, tuple)):
            stack.extend(reversed(obj))
