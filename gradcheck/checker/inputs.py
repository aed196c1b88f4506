"""What gradcheck checks, prepared through the engine's adapter: the inputs as differentiable
leaves, the outputs as engine values, random cotangent leaves, and snapshots of inputs and their
gradients (a check must leave them as it found them)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter


def leaves_of(inputs: Sequence[Any], engine: EngineAdapter) -> list[Any]:
    """The inputs as the engine's differentiable leaves (numbers and arrays wrapped), validated."""
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence) or engine.is_node(inputs):
        raise TypeError(f"gradcheck: inputs must be a list or tuple, got {type(inputs).__name__}")
    if len(inputs) == 0:
        raise ValueError(f"gradcheck: no inputs to check; pass at least one {engine.value_names}")
    leaves: list[Any] = []
    for j, obj in enumerate(inputs):
        if engine.is_node(obj):
            if not engine.requires_grad(obj):
                raise ValueError(
                    f"gradcheck: input {j} is a Tensor with requires_grad=False; every input is "
                    "differentiated, so create it with requires_grad=True"
                )
            for k, earlier in enumerate(leaves):
                if earlier is obj:
                    raise ValueError(
                        f"gradcheck: inputs {k} and {j} are the same object; each input is perturbed on its "
                        "own, so pass distinct Values/Tensors (or use it twice inside f)"
                    )
            leaves.append(obj)
        elif isinstance(obj, (int, float, np.floating, np.integer, np.ndarray)) and not isinstance(obj, bool):
            leaves.append(engine.as_leaf(obj))
        else:
            came, wanted = _namesakes(type(obj), engine)
            raise TypeError(
                f"gradcheck: input {j} is a {type(obj).__name__}{came}; expected a {engine.value_names}"
                f"{wanted} (or a float / numpy array to wrap)"
            )
    return leaves


def _namesakes(cls: type, engine: EngineAdapter) -> tuple[str, str]:
    """Where `cls` and the engine's value class come from, when they are two classes of one name
    (a file loaded twice): (' from lesson (/tmp/lesson.py)', ' of ... (why)'); else ('', '')."""
    expected = getattr(engine, "value_class", None)
    if not isinstance(expected, type) or expected is cls or expected.__qualname__ != cls.__qualname__:
        return "", ""
    files = [getattr(sys.modules.get(c.__module__), "__file__", None) for c in (cls, expected)]
    where = [c.__module__ if f is None else f"{c.__module__} ({f})" for c, f in zip((cls, expected), files)]
    copied = None not in files and os.path.realpath(files[0]) == os.path.realpath(files[1])
    why = "the engine spec loaded another copy of the class" if copied else "another class of the same name"
    return f" from {where[0]}", f" of {where[1]} ({why})"


def output_nodes(out: Any, engine: EngineAdapter) -> list[Any]:
    """f's output(s) as a list of engine values; anything else is a clear TypeError."""
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    for k, item in enumerate(items):
        if not engine.is_node(item):
            raise TypeError(
                f"gradcheck: output {k} is a {type(item).__name__} ({item!r}), not a {engine.value_names}; "
                "return only outputs computed from the inputs"
            )
    return items


def cotangent_leaf(out: Any, rng: np.random.Generator, engine: EngineAdapter) -> Any:
    """A random cotangent for `out`, differentiable (gradgradcheck varies it too)."""
    if engine.is_scalar(out):
        return engine.like(out, np.float64(rng.standard_normal()))
    data = np.asarray(engine.value(out))
    return engine.like(out, rng.standard_normal(data.shape).astype(data.dtype), requires_grad=True)


def snapshot(obj: Any, engine: EngineAdapter) -> tuple[np.ndarray, Any]:
    """Copies of an input's data and gradient."""
    grad = engine.grad_of(obj)
    plain = None if grad is None else (engine.value(grad) if engine.is_node(grad) else grad)
    grad_copy = None if plain is None else np.array(plain, dtype=np.float64)
    return np.array(engine.value(obj), dtype=np.float64, copy=True), grad_copy
