"""`Tensor`: a numpy array that remembers how it was computed, with PyTorch's semantics.

Ops run their forward rule on `.data` and, when grad mode is on and an input requires grad,
record the rule, the inputs and the op's parameters: the `Node` protocol of `autograd` then walks
that graph for `backward()` and `grad()`, the same core that serves `Value`. Dtypes follow torch:
float data is float32 unless you ask, integer data int64, and a result's dtype is promoted the
way torch promotes (dimensioned tensors over 0-d tensors over Python numbers).

Where minigrad knowingly differs from torch: the graph is kept after backward (as with
`retain_graph=True`, the same as Value); there are no in-place ops (`x += 1` rebinds x to a new
tensor); `view` is `reshape` (numpy decides whether to copy).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minigrad import floatmath as fm
from minigrad import tensor_ops as ops
from minigrad import tensor_shape_ops as shape_ops
from minigrad.grad_mode import switches
from minigrad.op import quietly
from minigrad.tensor_args import (  # noqa: F401 (re-exported: other modules import them from here)
    DimArg,
    Shape,
    _check_nonempty,
    _dims,
    _explain_failure,
    _index,
    _resolve_shape,
    _shape_arg,
)
from minigrad.tensor_autograd import AutogradMethods, check_forward_anomaly
from minigrad.tensor_core import Rule
from minigrad.tensor_dtypes import (  # noqa: F401 (re-exported)
    DEFAULT_FLOAT,
    _array_from,
    _category,
    _numeric,
    _promote,
    bool_,
    float32,
    float64,
    int32,
    int64,
    result_type,
)
from minigrad.tensor_elementwise_methods import ElementwiseMethods
from minigrad.tensor_reduction_methods import MinMax, ReductionMethods  # noqa: F401 (MinMax re-exported)
from minigrad.tensor_shape_methods import ShapeMethods


class Tensor(ElementwiseMethods, ShapeMethods, ReductionMethods, AutogradMethods):
    """An n-dimensional array (`data`, an ndarray) with torch's autograd semantics.

    `grad` is None until a backward pass reaches this tensor as a leaf that requires grad; it is
    then a Tensor of the same shape and dtype, and further backward passes add into it.
    """

    __slots__ = ("data", "grad", "_requires_grad", "_prev", "_rule", "_params", "_needs", "_g", "_retains")
    __array_ufunc__ = None  # numpy operators defer to Tensor's reflected methods (array * tensor)

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self.data = _array_from(data.data if isinstance(data, Tensor) else data, dtype)
        self.grad: Tensor | None = None
        self._requires_grad = False
        self._prev: tuple[Tensor, ...] = ()
        self._rule: Rule | None = None
        self._params: dict[str, Any] = {}
        self._needs: tuple[bool, ...] = ()
        self._g: Any = None
        self._retains = False
        if requires_grad:
            self.requires_grad = True

    # --- attributes --------------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self._rule is not None and not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if flag and self.data.dtype.kind != "f":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients "
                f"(this tensor has dtype {self.data.dtype})"
            )
        if self._rule is None:
            self._requires_grad = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` in place and return self (leaves only, as torch)."""
        self.requires_grad = requires_grad
        return self

    @property
    def shape(self) -> Shape:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def is_leaf(self) -> bool:
        """True unless this tensor was computed by a recorded op (torch's definition)."""
        return self._rule is None

    @property
    def grad_fn(self) -> str | None:
        """The name of the op that produced this tensor, or None for a leaf."""
        return None if self._rule is None else self._rule.name

    def size(self, dim: int | None = None) -> Shape | int:
        return self.shape if dim is None else self.shape[_dims(dim, self.ndim, "size")[0]]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(self.data.size)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="tensor(")
        extra = ""
        if self.dtype not in (float32, int64, bool_):
            extra += f", dtype={self.dtype}"
        if self._rule is not None:
            extra += f", grad_fn=<{self._rule.name}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The data for numpy, matplotlib and friends (np.asarray(t)); never part of the graph."""
        if dtype is not None and np.dtype(dtype) != self.dtype:
            return self.data.astype(dtype)
        return self.data.copy() if copy else self.data

    __hash__ = object.__hash__  # identity hash: __eq__ is elementwise, as in torch

    def _apply(self, rule: Rule, **params: Any) -> Tensor:
        """`rule` applied to this tensor alone (what the shape and reduction methods use)."""
        return apply_op(rule, (self,), **params)

    @staticmethod
    def _binary(rule: Rule, a: Any, b: Any, floating: bool = False) -> Tensor:
        return _binary(rule, a, b, floating)

    @staticmethod
    def _unary_float(rule: Rule, x: Any) -> Tensor:
        return _unary_float(rule, x)

    @staticmethod
    def _compare(func: Any, a: Any, b: Any) -> Tensor:
        return _compare(func, a, b)

    # --- conversion ----------------------------------------------------------------------------

    def item(self) -> float | int | bool:
        """The single element as a Python number."""
        if self.data.size != 1:
            raise RuntimeError(
                f"item: a Tensor with {self.data.size} elements (shape {self.shape}) cannot be "
                "converted to Scalar"
            )
        return self.data.item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous (shape {self.shape})"
            )
        return bool(self.data.item())

    def tolist(self) -> Any:
        return self.data.tolist()

    def numpy(self) -> np.ndarray:
        """The data array itself (shared, not copied), as torch.Tensor.numpy."""
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self.data

    def detach(self) -> Tensor:
        """The same data as a new leaf outside the graph."""
        return _leaf(self.data)

    def to(self, dtype: Any) -> Tensor:
        """The values in another dtype; differentiable between float dtypes."""
        dtype = np.dtype(dtype)
        if dtype == self.dtype:
            return self
        if self._requires_grad and dtype.kind == "f":
            return apply_op(ops.Cast, (self,), dtype=dtype)
        return _leaf(self.data.astype(dtype))

    def float(self) -> Tensor:
        return self.to(float32)

    def double(self) -> Tensor:
        return self.to(float64)

    def long(self) -> Tensor:
        return self.to(int64)

    def __matmul__(self, other: Any) -> Tensor:
        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(other, self)

    def maximum(self, other: Any) -> Tensor:
        """Elementwise max; on ties each operand gets half the gradient (torch)."""
        return _binary(ops.Maximum, self, other)

    def minimum(self, other: Any) -> Tensor:
        """Elementwise min; on ties each operand gets half the gradient (torch)."""
        return _binary(ops.Minimum, self, other)

    def where(self, condition: Any, other: Any) -> Tensor:
        """self where `condition` is true, else `other` (torch.Tensor.where)."""
        return where(condition, self, other)


# --- applying ops ----------------------------------------------------------------------------

_new_tensor = Tensor.__new__


def _leaf(array: np.ndarray) -> Tensor:
    """A leaf Tensor around `array` (no copy, no grad)."""
    out = _new_tensor(Tensor)
    out.data = array
    out.grad = None
    out._requires_grad = False
    out._prev = ()
    out._rule = None
    out._params = {}
    out._needs = ()
    out._g = None
    out._retains = False
    return out


Tensor._leaf = staticmethod(_leaf)  # type: ignore[method-assign]  # the mixins make leaves through it


def apply_op(rule: Rule, inputs: tuple[Tensor, ...], **params: Any) -> Tensor:
    """Run `rule.forward` on the inputs' data; record the op when grad mode is on and an input
    requires grad. The way to add an op of your own to minigrad's Tensor."""
    arrays = [t.data for t in inputs]
    try:
        if rule.arithmetic:
            result = quietly(rule.forward, *arrays, **params)
        else:
            result = rule.forward(*arrays, **params)
    except ValueError as error:
        raise RuntimeError(_explain_failure(rule, inputs, error)) from None
    out = _leaf(result if type(result) is np.ndarray else np.asarray(result))
    unusual = switches.unusual  # grad mode off or anomaly detection on: one read for the common case
    if not unusual or switches.grad_enabled:
        needs = tuple([t._requires_grad for t in inputs])
        if True in needs:
            out._requires_grad = True
            out._prev = inputs
            out._rule = rule
            out._params = params
            out._needs = needs
    if unusual and switches.anomaly_enabled:
        check_forward_anomaly(rule, out.data, inputs)
    return out


def _binary(rule: Rule, a: Any, b: Any, floating: bool = False) -> Tensor:
    """Apply a broadcasting binary op; numbers and arrays become constants, dtypes promote as torch."""
    if (
        isinstance(a, Tensor)
        and isinstance(b, Tensor)
        and a.data.dtype == b.data.dtype
        and (not floating or a.data.dtype.kind == "f")
    ):
        return apply_op(rule, (a, b))
    dtype = result_type(a, b)
    if dtype is None:
        return NotImplemented
    if floating and dtype.kind != "f":
        dtype = DEFAULT_FLOAT
    out = apply_op(rule, (_operand(a, dtype, rule.name), _operand(b, dtype, rule.name)))
    if out.data.dtype != dtype:
        out.data = out.data.astype(dtype)
    return out


def _operand(x: Any, dtype: np.dtype, op: str) -> Tensor:
    """x as a Tensor: Tensors stay as they are (their grads keep their dtype), constants get `dtype`."""
    if isinstance(x, Tensor):
        if x.data.dtype.kind != "f" and dtype.kind == "f":
            return _leaf(x.data.astype(dtype))  # ints and bools never require grad
        return x
    if isinstance(x, np.ndarray):
        return _leaf(_numeric(x, op))
    try:
        return _leaf(np.asarray(x, dtype=dtype))
    except OverflowError:
        raise fm.too_large(x, op, f"the op's dtype {dtype}") from None


def _unary_float(rule: Rule, x: Tensor) -> Tensor:
    """A float-valued function: integer and bool inputs are computed in the default float dtype."""
    if x.data.dtype.kind != "f":
        x = _leaf(x.data.astype(DEFAULT_FLOAT))
    return apply_op(rule, (x,))


def _compare(func: Any, a: Tensor, b: Any) -> Tensor:
    other = b.data if isinstance(b, Tensor) else b
    if not isinstance(other, (np.ndarray, int, float, bool, np.generic)):
        return NotImplemented
    try:
        return _leaf(np.asarray(func(a.data, other)))
    except ValueError as error:
        raise RuntimeError(f"{func.__name__}: {error} (shapes {a.shape} and {np.shape(other)})") from None


# --- functions of several tensors (torch.* namespace) ------------------------------------------


def matmul(a: Any, b: Any) -> Tensor:
    """torch.matmul: dot, matrix-vector, matrix-matrix and batched products with broadcasting."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        if not isinstance(a, (Tensor, np.ndarray)) or not isinstance(b, (Tensor, np.ndarray)):
            return NotImplemented
        a, b = (x if isinstance(x, Tensor) else _leaf(x) for x in (a, b))
    ops.check_matmul(a.shape, b.shape)
    if a.dtype != b.dtype:
        dtype = _promote([a.dtype, b.dtype])
        a, b = a.to(dtype), b.to(dtype)
    return apply_op(ops.MatMul, (a, b))


def where(condition: Any, x: Any, y: Any) -> Tensor:
    """Elementwise x where `condition` else y (torch.where); x and y may be numbers."""
    cond = condition.data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {cond.dtype}"
        )
    dtype = result_type(x, y)
    if dtype is None:
        raise TypeError(
            f"where: x and y must be Tensors or numbers, got {type(x).__name__} and {type(y).__name__}"
        )
    try:
        np.broadcast_shapes(cond.shape, np.shape(x), np.shape(y))
    except ValueError:
        raise RuntimeError(
            f"where: condition {cond.shape}, x {np.shape(x)} and y {np.shape(y)} cannot be broadcast together"
        ) from None
    out = apply_op(ops.Where, (_operand(x, dtype, "where"), _operand(y, dtype, "where")), cond=cond)
    if out.data.dtype != dtype:
        out.data = out.data.astype(dtype)
    return out


def maximum(a: Tensor, b: Any) -> Tensor:
    return _binary(ops.Maximum, a, b)


def minimum(a: Tensor, b: Any) -> Tensor:
    return _binary(ops.Minimum, a, b)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim (torch.cat)."""
    tensors = _same_dtype(tensors, "cat")
    first = tensors[0]
    if first.ndim == 0:
        raise RuntimeError("cat: zero-dimensional tensor (at position 0) cannot be concatenated")
    axis = _dims(dim, first.ndim, "cat")[0]
    for i, t in enumerate(tensors):
        if t.ndim != first.ndim:
            raise RuntimeError(
                f"cat: Tensors must have same number of dimensions: got {first.ndim} and {t.ndim} "
                f"(shapes {first.shape} and {t.shape} at positions 0 and {i})"
            )
        for d, (n, m) in enumerate(zip(first.shape, t.shape)):
            if d != axis and n != m:
                raise RuntimeError(
                    f"cat: Sizes of tensors must match except in dimension {axis}. Expected size {n} but "
                    f"got size {m} for tensor number {i} in the list (shapes {first.shape} and {t.shape})"
                )
    return apply_op(shape_ops.Cat, tuple(tensors), axis=axis)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join equal-shaped tensors along a new dim (torch.stack)."""
    tensors = _same_dtype(tensors, "stack")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    axis = _dims(dim, first.ndim + 1, "stack")[0]
    return apply_op(shape_ops.Stack, tuple(tensors), axis=axis)


def _same_dtype(tensors: Sequence[Tensor], op: str) -> list[Tensor]:
    items = list(tensors)
    if not items:
        raise RuntimeError(f"{op}: expected a non-empty list of Tensors")
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected a sequence of Tensors, but element {i} is {type(t).__name__}")
    dtype = _promote([t.dtype for t in items])
    return [t.to(dtype) for t in items]
