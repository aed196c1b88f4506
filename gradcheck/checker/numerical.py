"""Numerical derivatives by central differences, in float64, for any callable.

Conventions shared by the whole `gradcheck` package:

* ``inputs`` is a sequence; ``f`` is called as ``f(*inputs)``. Each input is a Python float or
  int, a numpy array (any shape), a minigrad ``Value`` or a minigrad ``Tensor`` (anything with a
  ``.data`` ndarray and ``_local_grads``). An input's *shape* is ``()`` for scalars.
* ``f`` returns one output or a tuple/list of outputs; each output is a number, a numpy array,
  a ``Value`` or a ``Tensor``. A numpy array counts as one output.
* Jacobians are blocks ``J[k][j]`` for output ``k`` and input ``j``, each a float64 array of shape
  ``output_shape + input_shape`` (jax's layout). Cotangents are one array per output, tangents
  one array per input, each of that output's (input's) shape.

Every evaluation runs under ``minigrad.no_grad()`` (no graph is recorded) on float64 copies of
the inputs, so the caller's objects are never touched. The step for coordinate ``i`` is
``eps * max(1, |x_i|)``, and the divisor is the step actually taken in floating point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import minigrad

DEFAULT_EPS = 1e-6

Jacobian = tuple[tuple[np.ndarray, ...], ...]


def is_node(obj: Any) -> bool:
    """True for minigrad graph nodes (`Value`, `Tensor`)."""
    return hasattr(obj, "_local_grads")


def is_value(obj: Any) -> bool:
    """True for a scalar minigrad `Value` (a node whose data is a number)."""
    return is_node(obj) and not isinstance(obj.data, np.ndarray)


def node_array(obj: Any) -> np.ndarray:
    """The data of a number, array, Value or Tensor as a float64 array (a copy)."""
    data = obj.data if is_node(obj) else obj
    array = np.array(data, dtype=np.float64)
    if array.dtype.kind not in "fiu":
        raise TypeError(f"gradcheck: expected real numbers, got {type(obj).__name__} {obj!r}")
    return array


@dataclass(frozen=True)
class Slot:
    """How one input is rebuilt from float64 numbers: its kind, shape and an example object."""

    kind: str  # "float" | "array" | "value" | "tensor"
    shape: tuple[int, ...]
    template: Any

    @staticmethod
    def of(obj: Any, position: int) -> Slot:
        if is_node(obj):
            kind = "value" if is_value(obj) else "tensor"
        elif isinstance(obj, np.ndarray):
            kind = "array"
        elif isinstance(obj, (int, float, np.floating, np.integer)) and not isinstance(obj, bool):
            kind = "float"
        else:
            raise TypeError(
                f"gradcheck: input {position} is a {type(obj).__name__} ({obj!r}); expected a float, "
                "a numpy array, a minigrad Value or a minigrad Tensor"
            )
        return Slot(kind, node_array(obj).shape, obj)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def build(self, flat: np.ndarray, requires_grad: bool = False) -> Any:
        """An object of this slot's kind holding the float64 numbers `flat`.

        A Tensor copies its template's `requires_grad`, so functions that differentiate inside
        (the first derivative under gradgradcheck) still see differentiable inputs.
        """
        array = np.array(flat, dtype=np.float64).reshape(self.shape)
        if self.kind == "float":
            return float(array)
        if self.kind == "array":
            return array
        if self.kind == "value":
            return type(self.template)(float(array))
        return make_tensor(
            type(self.template), array, requires_grad or bool(getattr(self.template, "requires_grad", False))
        )


def make_tensor(tensor_type: type, array: np.ndarray, requires_grad: bool) -> Any:
    """A Tensor of `tensor_type` holding `array`, tolerant of constructors without `requires_grad`."""
    try:
        return tensor_type(array, requires_grad=requires_grad)
    except TypeError:
        tensor = tensor_type(array)
        if requires_grad and hasattr(tensor, "requires_grad"):
            tensor.requires_grad = True
        return tensor


def flatten_outputs(out: Any) -> list[np.ndarray]:
    """The outputs of `f` as a list of float64 arrays (one per output)."""
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    if not items:
        raise ValueError("gradcheck: the function returned no outputs")
    arrays = []
    for k, item in enumerate(items):
        try:
            arrays.append(node_array(item))
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"gradcheck: output {k} is a {type(item).__name__}; expected a number, a numpy array, "
                "a minigrad Value or a minigrad Tensor"
            ) from error
    return arrays


class FlatFunction:
    """`f` seen as a map from one flat float64 vector to another, for differencing.

    `x` concatenates the inputs (C order), `__call__` returns the concatenated outputs. The output
    shapes are learned from one evaluation at `x`.
    """

    def __init__(self, f: Callable[..., Any], inputs: Sequence[Any]) -> None:
        if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence) or is_node(inputs):
            raise TypeError(
                f"gradcheck: inputs must be a sequence (list or tuple) of inputs, got {type(inputs).__name__}"
            )
        self.f = f
        self.slots = [Slot.of(obj, j) for j, obj in enumerate(inputs)]
        self.x = (
            np.concatenate([node_array(obj).ravel() for obj in inputs])
            if self.slots
            else np.zeros(0, dtype=np.float64)
        )
        self.input_offsets = np.cumsum([0] + [s.size for s in self.slots])
        outputs = flatten_outputs(self.raw(self.x))
        self.output_shapes = [a.shape for a in outputs]
        self.output_offsets = np.cumsum([0] + [a.size for a in outputs])
        self.fx = np.concatenate([a.ravel() for a in outputs])
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
            slot.build(x[self.input_offsets[j] : self.input_offsets[j + 1]])
            for j, slot in enumerate(self.slots)
        ]

    def raw(self, x: np.ndarray) -> Any:
        with minigrad.no_grad():
            return self.f(*self.rebuild(x))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        outputs = flatten_outputs(self.raw(x))
        shapes = [a.shape for a in outputs]
        if shapes != self.output_shapes:
            raise ValueError(
                f"gradcheck: the function's output shapes changed from {self.output_shapes} to {shapes} "
                "when its inputs moved slightly; numerical differentiation needs fixed shapes"
            )
        self.evaluations += 1
        return np.concatenate([a.ravel() for a in outputs])

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
        return _join(parts, self.output_shapes, what, "output")

    def join_inputs(self, per_input: Any, what: str) -> np.ndarray:
        parts = (
            list(per_input) if isinstance(per_input, (tuple, list)) and len(self.slots) > 1 else [per_input]
        )
        return _join(parts, [s.shape for s in self.slots], what, "input")

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


def _join(parts: list[Any], shapes: list[tuple[int, ...]], what: str, kind: str) -> np.ndarray:
    if len(parts) != len(shapes):
        raise ValueError(f"gradcheck: {what} has {len(parts)} parts for {len(shapes)} {kind}s")
    flat = []
    for k, (part, shape) in enumerate(zip(parts, shapes)):
        array = node_array(part)
        if array.shape != shape:
            if array.size == int(np.prod(shape, dtype=np.int64)) and array.ndim <= 1 and len(shape) <= 1:
                array = array.reshape(shape)
            else:
                raise ValueError(
                    f"gradcheck: {what} for {kind} {k} has shape {array.shape}, expected {shape}"
                )
        flat.append(array.ravel())
    return np.concatenate(flat) if flat else np.zeros(0)


def steps(x: np.ndarray, eps: float) -> np.ndarray:
    """The step per coordinate: eps scaled by the coordinate's magnitude when it exceeds 1."""
    return eps * np.maximum(1.0, np.abs(x))


def central_difference(func: FlatFunction, direction: np.ndarray, h: float) -> np.ndarray:
    """(F(x + h·u) - F(x - h·u)) / 2h for the flat function, a derivative along `direction`."""
    xp = func.x + h * direction
    xm = func.x - h * direction
    return (func(xp) - func(xm)) / (2.0 * h)


def jacobian_column(func: FlatFunction, i: int, eps: float) -> np.ndarray:
    """Column i of the Jacobian: central difference along coordinate i with the exact float step."""
    xi = func.x[i]
    h = float(steps(np.array([xi]), eps)[0])
    xp, xm = func.x.copy(), func.x.copy()
    xp[i] = xi + h
    xm[i] = xi - h
    taken = xp[i] - xm[i]  # the step the floats actually represent
    return (func(xp) - func(xm)) / taken


#: Step of the fourth-order stencil, relative to max(1, |x|): balances its h^4 truncation error
#: against rounding (about eps_machine·|F| / h), for ~1e-12 accuracy on order-one functions.
STENCIL_STEP = 2.0**-11


def stencil_column(func: FlatFunction, i: int, step: float = STENCIL_STEP) -> np.ndarray:
    """Column i by the fourth-order central stencil [1, -8, 0, 8, -1] / 12h (4 evaluations).

    Error about h^4·F^(5)/30 instead of central differences' h^2·F^(3)/6, so a step of ~5e-4 gives
    ~1e-12 where the plain central difference at 1e-6 gives ~1e-9.
    """
    xi = func.x[i]
    h = step * max(1.0, abs(float(xi)))
    points = []
    for k in (2.0, 1.0, -1.0, -2.0):
        x = func.x.copy()
        x[i] = xi + k * h
        points.append(func(x))
    far, near, near_m, far_m = points
    return (8.0 * (near - near_m) - (far - far_m)) / (12.0 * h)


def jacobian_matrix(func: FlatFunction, eps: float) -> np.ndarray:
    """The full (m, n) Jacobian by 2n evaluations."""
    matrix = np.empty((func.m, func.n))
    for i in range(func.n):
        matrix[:, i] = jacobian_column(func, i, eps)
    return matrix


def numerical_jacobian(f: Callable[..., Any], inputs: Sequence[Any], eps: float = DEFAULT_EPS) -> Jacobian:
    """The Jacobian of `f` at `inputs` by central differences: blocks J[k][j] (see module doc)."""
    func = FlatFunction(f, inputs)
    return func.blocks(jacobian_matrix(func, eps))


def numerical_vjp(
    f: Callable[..., Any], inputs: Sequence[Any], cotangent: Any, eps: float = DEFAULT_EPS
) -> tuple[np.ndarray, ...]:
    """cotangentᵀ·J by central differences: one float64 array per input, of that input's shape.

    `cotangent` is one array per output (a bare array or number when `f` has one output).
    """
    func = FlatFunction(f, inputs)
    v = func.join_outputs(cotangent, "cotangent")
    flat = np.array([v @ jacobian_column(func, i, eps) for i in range(func.n)])
    return func.split_inputs(flat)


def numerical_jvp(
    f: Callable[..., Any], inputs: Sequence[Any], tangent: Any, eps: float = DEFAULT_EPS
) -> tuple[np.ndarray, ...]:
    """J·tangent by one central difference along the tangent: one array per output.

    The step is `eps * max(1, |x|_inf)` along the tangent scaled to unit max-norm.
    """
    func = FlatFunction(f, inputs)
    u = func.join_inputs(tangent, "tangent")
    scale = float(np.max(np.abs(u))) if u.size else 0.0
    if scale == 0.0:
        return func.split_outputs(np.zeros(func.m))
    h = eps * max(1.0, float(np.max(np.abs(func.x)))) / scale
    return func.split_outputs(central_difference(func, u, h))
