"""A function as a map from one flat float64 vector to another, over any engine's values.

Conventions shared by the whole `gradcheck` package:

* ``inputs`` is a sequence; ``f`` is called as ``f(*inputs)``. Each input is a Python float or
  int, a numpy array (any shape), or a value of the engine under check (through its adapter:
  minigrad's ``Value`` and ``Tensor`` by default). An input's *shape* is ``()`` for scalars.
* ``f`` returns one output or a tuple/list of outputs; each output is a number, a numpy array or
  an engine value. A numpy array counts as one output.
* Jacobians are blocks ``J[k][j]`` for output ``k`` and input ``j``, each a float64 array of shape
  ``output_shape + input_shape`` (jax's layout). Cotangents are one array per output, tangents
  one array per input, each of that output's (input's) shape.

Every evaluation runs in the engine's ``no_grad()`` (no graph is recorded) on float64 copies of
the inputs, so the caller's objects are never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter

Jacobian = tuple[tuple[np.ndarray, ...], ...]


def node_array(obj: Any, engine: EngineAdapter) -> np.ndarray:
    """The data of a number, array or engine value as a float64 array (a copy)."""
    data = engine.value(obj) if engine.is_node(obj) else obj
    array = np.array(data, dtype=np.float64)
    if array.dtype.kind not in "fiu":
        raise TypeError(f"gradcheck: expected real numbers, got {type(obj).__name__} {obj!r}")
    return array


def flat_vector(values: Sequence[Any]) -> np.ndarray:
    """Numbers and arrays (an engine's plain results) as one float64 vector, in order, each array
    in C order; a value that is no number becomes NaN (None included)."""
    if all(type(v) is float for v in values):  # a scalar engine's numbers: one call
        return np.array(values, dtype=np.float64)
    return (
        np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for v in values])
        if values
        else np.zeros(0)
    )


@dataclass(frozen=True)
class Slot:
    """How one input is rebuilt from float64 numbers: its kind, shape and an example object."""

    kind: str  # "float" | "array" | "node" (an engine value)
    shape: tuple[int, ...]
    template: Any
    scalar: bool  # a number, or an engine value holding one number

    @staticmethod
    def of(obj: Any, position: int, engine: EngineAdapter) -> Slot:
        if engine.is_node(obj):
            return Slot("node", node_array(obj, engine).shape, obj, engine.is_scalar(obj))
        if isinstance(obj, np.ndarray):
            return Slot("array", node_array(obj, engine).shape, obj, False)
        if isinstance(obj, (int, float, np.floating, np.integer)) and not isinstance(obj, bool):
            return Slot("float", (), obj, True)
        raise TypeError(
            f"gradcheck: input {position} is a {type(obj).__name__} ({obj!r}); expected a float, "
            f"a numpy array or a {engine.value_names}"
        )

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def build(self, flat: np.ndarray, engine: EngineAdapter, requires_grad: bool = False) -> Any:
        """An object of this slot's kind holding the float64 numbers `flat`.

        An engine value keeps its template's `requires_grad`, so functions that differentiate
        inside (the first derivative under gradgradcheck) still see differentiable inputs.
        """
        array = np.array(flat, dtype=np.float64).reshape(self.shape)
        if self.kind == "float":
            return float(array)
        if self.kind == "array":
            return array
        return engine.like(self.template, array, requires_grad)


def flatten_outputs(out: Any, engine: EngineAdapter) -> list[np.ndarray]:
    """The outputs of `f` as a list of float64 arrays (one per output)."""
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    if not items:
        raise ValueError("gradcheck: the function returned no outputs")
    arrays = []
    for k, item in enumerate(items):
        try:
            arrays.append(node_array(item, engine))
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"gradcheck: output {k} is a {type(item).__name__}; expected a number, a numpy array "
                f"or a {engine.value_names}"
            ) from error
    return arrays


class FlatFunction:
    """`f` seen as a map from one flat float64 vector to another, for differencing.

    `x` concatenates the inputs (C order), `__call__` returns the concatenated outputs. The output
    shapes are learned from one evaluation at `x`. `engine` is the adapter its caller loaded.
    """

    def __init__(self, f: Callable[..., Any], inputs: Sequence[Any], engine: EngineAdapter) -> None:
        self.engine = engine
        if (
            isinstance(inputs, (str, bytes))
            or not isinstance(inputs, Sequence)
            or self.engine.is_node(inputs)
        ):
            raise TypeError(
                f"gradcheck: inputs must be a sequence (list or tuple) of inputs, got {type(inputs).__name__}"
            )
        self.f = f
        self.slots = [Slot.of(obj, j, self.engine) for j, obj in enumerate(inputs)]
        self.x = flat_vector([node_array(obj, self.engine) for obj in inputs])
        self.input_offsets = np.cumsum([0] + [s.size for s in self.slots])
        outputs = flatten_outputs(self.raw(self.x), self.engine)
        self.output_shapes = [a.shape for a in outputs]
        self.output_offsets = np.cumsum([0] + [a.size for a in outputs])
        self.fx = flat_vector(outputs)
        self.evaluations = 1

    @property
    def n(self) -> int:
        return int(self.x.size)

    @property
    def m(self) -> int:
        return int(self.fx.size)

    def rebuild(self, x: np.ndarray) -> list[Any]:
        """Fresh input objects holding the numbers `x` (no graph)."""
        return [
            slot.build(x[self.input_offsets[j] : self.input_offsets[j + 1]], self.engine)
            for j, slot in enumerate(self.slots)
        ]

    def raw(self, x: np.ndarray) -> Any:
        with self.engine.no_grad():
            return self.f(*self.rebuild(x))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        outputs = flatten_outputs(self.raw(x), self.engine)
        shapes = [a.shape for a in outputs]
        if shapes != self.output_shapes:
            raise ValueError(
                f"gradcheck: the function's output shapes changed from {self.output_shapes} to {shapes} "
                "when its inputs moved slightly; numerical differentiation needs fixed shapes"
            )
        self.evaluations += 1
        return flat_vector(outputs)

    # --- between flat vectors and per-input / per-output arrays ---------------------------------

    def split_inputs(self, flat: np.ndarray) -> tuple[np.ndarray, ...]:
        return tuple(
            np.array(flat[self.input_offsets[j] : self.input_offsets[j + 1]]).reshape(s.shape)
            for j, s in enumerate(self.slots)
        )

    def split_outputs(self, flat: np.ndarray) -> tuple[np.ndarray, ...]:
        return tuple(
            np.array(flat[self.output_offsets[k] : self.output_offsets[k + 1]]).reshape(shape)
            for k, shape in enumerate(self.output_shapes)
        )

    def join_outputs(self, per_output: Any, what: str) -> np.ndarray:
        """One flat vector from one array per output (a bare array is allowed for one output)."""
        parts = (
            list(per_output)
            if isinstance(per_output, (tuple, list)) and len(self.output_shapes) > 1
            else [per_output]
        )
        return _join(parts, self.output_shapes, what, "output", self.engine)

    def join_inputs(self, per_input: Any, what: str) -> np.ndarray:
        parts = (
            list(per_input) if isinstance(per_input, (tuple, list)) and len(self.slots) > 1 else [per_input]
        )
        return _join(parts, [s.shape for s in self.slots], what, "input", self.engine)

    def locate_input(self, i: int) -> tuple[int, tuple[int, ...]]:
        """(input number, index inside that input) of flat coordinate i."""
        j = int(np.searchsorted(self.input_offsets, i, side="right") - 1)
        return j, _unravel(i - int(self.input_offsets[j]), self.slots[j].shape)

    def locate_output(self, r: int) -> tuple[int, tuple[int, ...]]:
        k = int(np.searchsorted(self.output_offsets, r, side="right") - 1)
        return k, _unravel(r - int(self.output_offsets[k]), self.output_shapes[k])

    def blocks(self, matrix: np.ndarray) -> Jacobian:
        """Cut an (m, n) Jacobian into blocks J[k][j] of shape output_shape + input_shape."""
        rows = []
        for k, out_shape in enumerate(self.output_shapes):
            r0, r1 = self.output_offsets[k], self.output_offsets[k + 1]
            row = []
            for j, slot in enumerate(self.slots):
                c0, c1 = self.input_offsets[j], self.input_offsets[j + 1]
                row.append(np.array(matrix[r0:r1, c0:c1]).reshape(out_shape + slot.shape))
            rows.append(tuple(row))
        return tuple(rows)


def _unravel(i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(v) for v in np.unravel_index(i, shape)) if shape else ()


def _join(
    parts: list[Any], shapes: list[tuple[int, ...]], what: str, kind: str, engine: EngineAdapter
) -> np.ndarray:
    if len(parts) != len(shapes):
        raise ValueError(f"gradcheck: {what} has {len(parts)} parts for {len(shapes)} {kind}s")
    flat = []
    for k, (part, shape) in enumerate(zip(parts, shapes)):
        array = node_array(part, engine)
        if array.shape != shape:
            if array.size == int(np.prod(shape, dtype=np.int64)) and array.ndim <= 1 and len(shape) <= 1:
                array = array.reshape(shape)
            else:
                raise ValueError(
                    f"gradcheck: {what} for {kind} {k} has shape {array.shape}, expected {shape}"
                )
        flat.append(array.ravel())
    return np.concatenate(flat) if flat else np.zeros(0)
