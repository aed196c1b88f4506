"""`Tensor`: a numpy array that remembers how it was computed, with PyTorch's semantics.

Ops run their forward rule on `.data` and, when grad mode is on and an input requires grad,
record the rule, the inputs and the op's parameters: the `Node` protocol of `autograd` then walks
that graph for `backward()` and `grad()`, the same core that serves `Value`. Dtypes follow torch:
float data is float32 unless you ask, integer data int64, and a result's dtype is promoted the
way torch promotes (dimensioned tensors over 0-d tensors over Python numbers).

Where minigrad knowingly differs from torch: the graph is kept after backward (as with
`retain_graph=True`, the same as Value); there are no in-place ops (`x += 1` rebinds x to a new
tensor); `view` is `reshape` (numpy decides whether to copy); relu's gradient multiplies by a
mask, so an inf or nan upstream gradient at a negative input gives nan where torch gives 0.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from minigrad import autograd
from minigrad import tensor_ops as ops
from minigrad import tensor_reductions as reductions
from minigrad import tensor_shape_ops as shape_ops
from minigrad.grad_mode import switches
from minigrad.tensor_dispatch import ARRAYS
from minigrad.tensor_ops import TensorOp

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)
DEFAULT_FLOAT = float32

Shape = tuple[int, ...]
DimArg = int | Sequence[int] | None


class Tensor:
    """An n-dimensional array (`data`, an ndarray) with torch's autograd semantics.

    `grad` is None until a backward pass reaches this tensor as a leaf that requires grad; it is
    then a Tensor of the same shape and dtype, and further backward passes add into it.
    """

    __slots__ = ("data", "grad", "_requires_grad", "_prev", "_rule", "_params", "_needs", "_g", "_retains")
    __array_ufunc__ = None  # numpy operators defer to Tensor's reflected methods (array * tensor)

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self.data = _array_from(data, dtype)
        self.grad: Tensor | None = None
        self._requires_grad = False
        self._prev: tuple[Tensor, ...] = ()
        self._rule: type[TensorOp] | None = None
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

    # --- arithmetic: tensor with tensor or number, broadcasting like numpy -----------------------

    def __add__(self, other: Any) -> Tensor:
        return _binary(ops.Add, self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _binary(ops.Add, other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _binary(ops.Sub, self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _binary(ops.Sub, other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _binary(ops.Mul, self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _binary(ops.Mul, other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _binary(ops.Div, self, other, floating=True)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _binary(ops.Div, other, self, floating=True)

    def __pow__(self, other: Any) -> Tensor:
        return _binary(ops.Pow, self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _binary(ops.Pow, other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(other, self)

    def __neg__(self) -> Tensor:
        return apply_op(ops.Neg, (self,))

    def __abs__(self) -> Tensor:
        return self.abs()

    def maximum(self, other: Any) -> Tensor:
        """Elementwise max; on ties each operand gets half the gradient (torch)."""
        return _binary(ops.Maximum, self, other)

    def minimum(self, other: Any) -> Tensor:
        """Elementwise min; on ties each operand gets half the gradient (torch)."""
        return _binary(ops.Minimum, self, other)

    def where(self, condition: Any, other: Any) -> Tensor:
        """self where `condition` is true, else `other` (torch.Tensor.where)."""
        return where(condition, self, other)

    # --- comparisons: boolean tensors outside the graph ----------------------------------------

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(np.equal, self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(np.not_equal, self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _compare(np.less, self, other)

    def __le__(self, other: Any) -> Tensor:
        return _compare(np.less_equal, self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _compare(np.greater, self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _compare(np.greater_equal, self, other)

    def __invert__(self) -> Tensor:
        if self.dtype.kind not in "biu":
            raise TypeError(f"~ (bitwise_not) is only defined for integer and bool tensors, got {self.dtype}")
        return _leaf(~self.data)

    # --- elementwise functions -----------------------------------------------------------------

    def relu(self) -> Tensor:
        return apply_op(ops.ReLU, (self,))

    def tanh(self) -> Tensor:
        return _unary_float(ops.Tanh, self)

    def sigmoid(self) -> Tensor:
        return _unary_float(ops.Sigmoid, self)

    def exp(self) -> Tensor:
        return _unary_float(ops.Exp, self)

    def log(self) -> Tensor:
        return _unary_float(ops.Log, self)

    def sin(self) -> Tensor:
        return _unary_float(ops.Sin, self)

    def cos(self) -> Tensor:
        return _unary_float(ops.Cos, self)

    def sqrt(self) -> Tensor:
        return _unary_float(ops.Sqrt, self)

    def abs(self) -> Tensor:
        return apply_op(ops.Abs, (self,))

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        """Values limited to [min, max]; the gradient flows where min <= x <= max (torch)."""
        if min is None and max is None:
            raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and not isinstance(bound, (int, float, np.number)):
                raise TypeError(f"clamp: {name} must be a number or None, got {type(bound).__name__}")
        return apply_op(ops.Clamp, (self,), low=min, high=max)

    clip = clamp

    # --- reductions ----------------------------------------------------------------------------

    def sum(self, dim: DimArg = None, keepdim: bool = False) -> Tensor:
        return apply_op(reductions.Sum, (self,), axes=_dims(dim, self.ndim, "sum"), keepdim=keepdim)

    def mean(self, dim: DimArg = None, keepdim: bool = False) -> Tensor:
        if self.dtype.kind != "f":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point "
                f"or complex dtype. Got: {self.dtype}"
            )
        return apply_op(reductions.Mean, (self,), axes=_dims(dim, self.ndim, "mean"), keepdim=keepdim)

    def amax(self, dim: DimArg = None, keepdim: bool = False) -> Tensor:
        """Largest element over `dim` (int or tuple); ties share the gradient evenly."""
        return self._extreme(reductions.Amax, dim, keepdim)

    def amin(self, dim: DimArg = None, keepdim: bool = False) -> Tensor:
        """Smallest element over `dim` (int or tuple); ties share the gradient evenly."""
        return self._extreme(reductions.Amin, dim, keepdim)

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor | MinMax:
        """Without dim: the largest element (ties share the gradient evenly). With an int dim:
        `(values, indices)` like torch, the gradient going to the returned indices."""
        if dim is None:
            return self._extreme(reductions.Amax, None, keepdim, "max")
        return self._extreme_along(np.argmax, "max", dim, keepdim)

    def min(self, dim: int | None = None, keepdim: bool = False) -> Tensor | MinMax:
        """Without dim: the smallest element (ties share the gradient evenly). With an int dim:
        `(values, indices)` like torch, the gradient going to the returned indices."""
        if dim is None:
            return self._extreme(reductions.Amin, None, keepdim, "min")
        return self._extreme_along(np.argmin, "min", dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return self._arg(np.argmax, "argmax", dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return self._arg(np.argmin, "argmin", dim, keepdim)

    def _extreme(self, rule: type[TensorOp], dim: DimArg, keepdim: bool, name: str = "") -> Tensor:
        name = name or rule.name
        axes = _dims(dim, self.ndim, name)
        _check_nonempty(self, None if dim is None else axes, name)
        return apply_op(rule, (self,), axes=axes, keepdim=keepdim)

    def _extreme_along(self, arg: Any, name: str, dim: int, keepdim: bool) -> MinMax:
        if not isinstance(dim, (int, np.integer)):
            raise TypeError(
                f"{name}(): dim must be an int, got {dim!r}; use amax/amin to reduce several dims"
            )
        if self.ndim == 0:
            _dims(dim, 0, name)
            return MinMax(self.reshape(()), _leaf(np.zeros((), dtype=int64)))
        axis = _dims(dim, self.ndim, name)[0]
        _check_nonempty(self, (axis,), name)
        indices = arg(self.data, axis=axis, keepdims=True)
        values = apply_op(reductions.TakeAlongAxis, (self,), indices=indices, axis=axis)
        if not keepdim:
            values = values.squeeze(axis)
            indices = indices.squeeze(axis)
        return MinMax(values, _leaf(indices))

    def _arg(self, arg: Any, name: str, dim: int | None, keepdim: bool) -> Tensor:
        if dim is None:
            _check_nonempty(self, None, name)
            index = np.asarray(arg(self.data))
            return _leaf(index.reshape((1,) * self.ndim) if keepdim else index)
        axis = _dims(dim, self.ndim, name)
        if not axis:
            return _leaf(np.zeros((), dtype=int64))
        _check_nonempty(self, axis, name)
        return _leaf(np.asarray(arg(self.data, axis=axis[0], keepdims=keepdim)))

    # --- shape ops -----------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        new_shape = _resolve_shape(_shape_arg(shape), self.data.size, "reshape")
        return apply_op(shape_ops.Reshape, (self,), shape=new_shape)

    def view(self, *shape: Any) -> Tensor:
        """Same as reshape (numpy decides whether a copy is needed)."""
        return self.reshape(*shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        start, end = (_dims(d, self.ndim, "flatten")[0] for d in (start_dim, end_dim))
        if start > end:
            raise RuntimeError(
                f"flatten() has invalid args: start_dim {start_dim} cannot come after end_dim {end_dim}"
            )
        shape = self.shape
        merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
        return self.reshape(*shape[:start], merged, *shape[end + 1 :])

    def unsqueeze(self, dim: int) -> Tensor:
        axis = _dims(dim, self.ndim + 1, "unsqueeze")[0]
        shape = self.shape
        return self.reshape(*shape[:axis], 1, *shape[axis:])

    def squeeze(self, dim: DimArg = None) -> Tensor:
        """Drop size-1 dims (all of them, or those of `dim` that have size 1, as torch)."""
        axes = _dims(dim, self.ndim, "squeeze")
        shape = tuple(n for i, n in enumerate(self.shape) if not (i in axes and n == 1))
        return self.reshape(shape)

    def permute(self, *dims: Any) -> Tensor:
        order = _shape_arg(dims)
        if len(order) != self.ndim:
            raise RuntimeError(
                f"permute(): number of dims don't match: the tensor has {self.ndim} dims "
                f"(shape {self.shape}) but {len(order)} were given ({order})"
            )
        axes = tuple(_dims(d, self.ndim, "permute")[0] if self.ndim else 0 for d in order)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"permute(): duplicate dims are not allowed, got {order}")
        return apply_op(shape_ops.Permute, (self,), axes=axes)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        if self.ndim == 0:
            _dims((dim0, dim1) if dim0 != dim1 else dim0, 0, "transpose")
            return self.reshape(())
        a, b = (_dims(d, self.ndim, "transpose")[0] for d in (dim0, dim1))
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return apply_op(shape_ops.Permute, (self,), axes=tuple(axes))

    @property
    def T(self) -> Tensor:
        """All dims reversed (the matrix transpose for a 2-D tensor)."""
        return apply_op(shape_ops.Permute, (self,), axes=tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> Tensor:
        """The last two dims swapped: the transpose of each matrix in a batch."""
        if self.ndim < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor."
            )
        return self.transpose(-2, -1)

    def expand(self, *sizes: Any) -> Tensor:
        """Broadcast to `sizes` without copying; -1 keeps a dim's size (torch.Tensor.expand)."""
        target = _shape_arg(sizes)
        if len(target) < self.ndim:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(target)}) must be greater or equal to "
                f"the number of dimensions in the tensor ({self.ndim}); shape {self.shape}, sizes {target}"
            )
        lead = len(target) - self.ndim
        shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(target))
        for i, n in enumerate(self.shape):
            if n != 1 and shape[lead + i] != n:
                raise RuntimeError(
                    f"expand: the expanded size of the tensor ({shape[lead + i]}) must match the existing "
                    f"size ({n}) at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                    f"Tensor sizes: {list(self.shape)}"
                )
        if any(n < 0 for n in shape):
            raise RuntimeError(
                f"expand: the expanded size -1 is not allowed in a leading, new dimension: {target}"
            )
        return apply_op(shape_ops.BroadcastTo, (self,), shape=shape)

    def broadcast_to(self, *shape: Any) -> Tensor:
        return self.expand(*shape)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def sum_to_size(self, *size: Any) -> Tensor:
        """Summed over dims so the result has `size` (the reverse of expand)."""
        shape = _shape_arg(size)
        try:
            if np.broadcast_shapes(shape, self.shape) != self.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"sum_to_size: size {shape} is not expandable to size {self.shape}") from None
        return apply_op(shape_ops.SumToSize, (self,), shape=shape)

    def __getitem__(self, key: Any) -> Tensor:
        index = _index(key)
        try:
            return apply_op(shape_ops.GetItem, (self,), index=index)
        except IndexError as error:
            raise IndexError(f"getitem: {error} (tensor of shape {self.shape}, index {key!r})") from None

    # --- hooks used by derivative rules on the create_graph path ------------------------------

    def _scatter_add(self, shape: Shape, index: Any) -> Tensor:
        return apply_op(shape_ops.ScatterAdd, (self,), shape=shape, index=index)

    def _put_along_axis(self, shape: Shape, indices: np.ndarray, axis: int) -> Tensor:
        return apply_op(reductions.PutAlongAxis, (self,), shape=shape, indices=indices, axis=axis)

    def _take_along_axis(self, indices: np.ndarray, axis: int) -> Tensor:
        return apply_op(reductions.TakeAlongAxis, (self,), indices=indices, axis=axis)

    # --- autograd ------------------------------------------------------------------------------

    def backward(self, gradient: Any = None) -> None:
        """Add d(self)/d(leaf) into `.grad` of every leaf that requires grad (seed 1 for a scalar).

        The graph is kept, so calling backward again adds the same gradients once more (torch with
        `retain_graph=True`). Non-leaf tensors get `.grad` only after `retain_grad()`.
        """
        if not self._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        with np.errstate(all="ignore"):  # once for the whole pass instead of once per node
            _quiet_pass.on, previous = True, _quiet_pass.on
            try:
                autograd.backward([self], [gradient])
            finally:
                _quiet_pass.on = previous

    def retain_grad(self) -> None:
        """Make backward fill `.grad` of this non-leaf tensor too."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains = True

    def _local_grads(self, g: Any, create_graph: bool) -> Sequence[Any]:
        rule = self._rule
        assert rule is not None  # the core only asks nodes that have inputs
        if create_graph:
            if not isinstance(g, Tensor):
                g = _leaf(np.asarray(g))
            out, inputs = self, self._prev
        else:
            out, inputs = self.data, [p.data for p in self._prev]
        if rule.arithmetic and not _quiet_pass.on:
            with np.errstate(all="ignore"):
                grads = rule.backward(g, out, *inputs, needs=self._needs, **self._params)
        else:
            grads = rule.backward(g, out, *inputs, needs=self._needs, **self._params)
        if switches.anomaly_enabled:
            _check_backward_anomaly(self, g, grads)
        return grads

    @staticmethod
    def _accumulate_grads(order: list[Tensor]) -> None:
        stored: set[int] = set()  # arrays already handed to a .grad in this pass
        for node in order:
            g = node._g
            if g is None:
                continue
            node._g = None
            if not node._requires_grad or (node._rule is not None and not node._retains):
                continue
            g = np.asarray(g)
            if g.dtype != node.data.dtype:
                g = g.astype(node.data.dtype)
            owner = id(g if g.base is None else g.base)
            if not g.flags.writeable or owner in stored:
                g = g.copy()  # never let two .grad share memory, nor keep a read-only view
                owner = id(g)
            stored.add(owner)
            if node.grad is None:
                node.grad = _leaf(g)
            else:
                node.grad.data = node.grad.data + g

    def _seed(self, gradient: Any, create_graph: bool) -> Any:
        if gradient is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (output has shape {self.shape})"
                )
            seed = np.ones(self.shape, dtype=self.dtype)
        else:
            if create_graph and isinstance(gradient, Tensor):
                _check_seed_shape(gradient.shape, self.shape)
                return gradient.to(self.dtype) if gradient.dtype != self.dtype else gradient
            array = gradient.data if isinstance(gradient, Tensor) else np.asarray(gradient)
            _check_seed_shape(array.shape, self.shape)
            seed = np.array(array, dtype=self.dtype)
        return _leaf(seed) if create_graph else seed

    def _export_grad(self, g: Any, create_graph: bool) -> Tensor:
        if isinstance(g, Tensor):
            return g
        g = np.asarray(g)
        return _leaf(g if g.dtype == self.dtype else g.astype(self.dtype))

    def _zero_grad_like(self, create_graph: bool) -> Tensor:
        return _leaf(np.zeros(self.shape, dtype=self.dtype))


class _QuietPass:
    """`on` while Tensor.backward runs a whole pass inside one np.errstate (grad() passes don't)."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False


_quiet_pass = _QuietPass()


class MinMax(NamedTuple):
    """What `max(dim)` and `min(dim)` return: the values and their indices along dim."""

    values: Tensor
    indices: Tensor


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


def apply_op(rule: type[TensorOp], inputs: tuple[Tensor, ...], **params: Any) -> Tensor:
    """Run `rule.forward` on the inputs' data; record the op when grad mode is on and an input
    requires grad. The way to add an op of your own to minigrad's Tensor."""
    try:
        if rule.arithmetic:
            with np.errstate(all="ignore"):
                result = rule.forward(*[t.data for t in inputs], **params)
        else:
            result = rule.forward(*[t.data for t in inputs], **params)
    except ValueError as error:
        raise RuntimeError(_explain_failure(rule, inputs, error)) from None
    out = _leaf(result if type(result) is np.ndarray else np.asarray(result))
    if switches.grad_enabled:
        needs = tuple([t._requires_grad for t in inputs])
        if True in needs:
            out._requires_grad = True
            out._prev = inputs
            out._rule = rule
            out._params = params
            out._needs = needs
    if switches.anomaly_enabled:
        _check_forward_anomaly(rule, out.data, inputs)
    return out


def _binary(rule: type[TensorOp], a: Any, b: Any, floating: bool = False) -> Tensor:
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
    out = apply_op(rule, (_operand(a, dtype), _operand(b, dtype)))
    if out.data.dtype != dtype:
        out.data = out.data.astype(dtype)
    return out


def _operand(x: Any, dtype: np.dtype) -> Tensor:
    """x as a Tensor: Tensors stay as they are (their grads keep their dtype), constants get `dtype`."""
    if isinstance(x, Tensor):
        if x.data.dtype.kind != "f" and dtype.kind == "f":
            return _leaf(x.data.astype(dtype))  # ints and bools never require grad
        return x
    if isinstance(x, np.ndarray):
        return _leaf(x)
    return _leaf(np.asarray(x, dtype=dtype))


def _unary_float(rule: type[TensorOp], x: Tensor) -> Tensor:
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


def _category(dtype: np.dtype) -> int:
    """bool < integer < floating, the order in which torch promotes across kinds."""
    return {"b": 0, "i": 1, "u": 1, "f": 2}.get(dtype.kind, 3)


def _promote(dtypes: list[np.dtype]) -> np.dtype:
    """torch.promote_types over several dtypes: the highest kind wins, then the widest of it."""
    top = max(_category(d) for d in dtypes)
    return np.result_type(*[d for d in dtypes if _category(d) == top])


def result_type(*operands: Any) -> np.dtype | None:
    """The dtype torch gives an op on `operands`: dimensioned tensors decide, unless a 0-d tensor
    or a Python number is of a higher kind (then it decides); a float number means float32."""
    tiers: list[list[np.dtype]] = [[], [], []]
    for x in operands:
        if isinstance(x, (Tensor, np.ndarray)):
            tiers[0 if x.ndim else 1].append(x.dtype)
        elif isinstance(x, (bool, np.bool_)):
            tiers[2].append(bool_)
        elif isinstance(x, (int, np.integer)):
            tiers[2].append(int64)
        elif isinstance(x, (float, np.floating)):
            tiers[2].append(DEFAULT_FLOAT)
        else:
            return None
    result: np.dtype | None = None
    for tier in tiers:
        if tier:
            dtype = _promote(tier)
            if result is None or _category(dtype) > _category(result):
                result = dtype
    return result


def _explain_failure(rule: type[TensorOp], inputs: tuple[Tensor, ...], error: Exception) -> str:
    shapes = [t.shape for t in inputs]
    if len(shapes) == 2:
        mismatch = _broadcast_mismatch(shapes[0], shapes[1])
        if mismatch:
            return f"{rule.name}: {mismatch} (shapes {shapes[0]} and {shapes[1]})"
    listed = ", ".join(str(s) for s in shapes)
    return f"{rule.name}: {error} (input shapes {listed})"


def _broadcast_mismatch(a: Shape, b: Shape) -> str | None:
    """torch's message for shapes that cannot broadcast, or None if they can."""
    ndim = max(len(a), len(b))
    for i in range(ndim):
        size_a = a[i - ndim + len(a)] if i >= ndim - len(a) else 1
        size_b = b[i - ndim + len(b)] if i >= ndim - len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            return (
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                f"at non-singleton dimension {i}"
            )
    return None


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
    out = apply_op(ops.Where, (_operand(x, dtype), _operand(y, dtype)), cond=cond)
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


# --- argument handling -------------------------------------------------------------------------


def _array_from(data: Any, dtype: Any) -> np.ndarray:
    """A fresh array from `data` with torch.tensor's dtype rules (float32 for float lists)."""
    if isinstance(data, Tensor):
        data = data.data
    if dtype is not None:
        dtype = np.dtype(dtype)
    if isinstance(data, ARRAYS):
        return np.array(data, dtype=dtype)
    array = np.array(data, dtype=dtype)
    if dtype is None:
        kind = array.dtype.kind
        if kind == "f":
            array = array.astype(DEFAULT_FLOAT)
        elif kind in "iu":
            array = array.astype(int64)
        elif kind != "b":
            raise TypeError(f"tensor: could not infer a numeric dtype from {type(data).__name__} {data!r}")
    return array


def _shape_arg(args: tuple[Any, ...]) -> Shape:
    """Sizes given as f(2, 3) or f((2, 3)) or f([2, 3])."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(n) for n in args)


def _resolve_shape(shape: Shape, size: int, op: str) -> Shape:
    """`shape` with a -1 inferred; raises torch's error when the sizes don't fit."""
    known = 1
    unknown = [i for i, n in enumerate(shape) if n == -1]
    for n in shape:
        if n != -1:
            known *= n
    bad = len(unknown) > 1 or any(n < -1 for n in shape)
    if not bad and unknown:
        if known == 0 or size % known:
            bad = True
        else:
            shape = tuple(size // known if n == -1 else n for n in shape)
    if bad or int(np.prod(shape, dtype=np.int64)) != size:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {size}")
    return shape


def _dims(dim: DimArg, ndim: int, op: str) -> tuple[int, ...]:
    """`dim` (None, int or sequence) as sorted non-negative axes, checked like torch."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    rank = max(ndim, 1)
    axes: list[int] = []
    for d in dims:
        if not isinstance(d, (int, np.integer)):
            raise TypeError(f"{op}(): dim must be an int or a sequence of ints, got {d!r}")
        if not -rank <= d < rank:
            raise IndexError(
                f"{op}(): Dimension out of range (expected to be in range of "
                f"[{-rank}, {rank - 1}], but got {d})"
            )
        axis = int(d) % rank
        if axis in axes:
            raise RuntimeError(f"{op}(): dim {axis} appears multiple times in the list of dims")
        axes.append(axis)
    return tuple(sorted(axes)) if ndim else ()


def _check_nonempty(t: Tensor, axes: tuple[int, ...] | None, op: str) -> None:
    """Reductions without an identity (max, argmax) need a non-empty input; axes None: all of it."""
    if t.data.size != 0:
        return
    if axes is None:
        raise RuntimeError(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0 (input shape "
            f"{t.shape}). Specify the reduction dim with the 'dim' argument."
        )
    for axis in axes:
        if t.shape[axis] == 0:
            raise RuntimeError(
                f"{op}(): Expected reduction dim {axis} to have non-zero size (input shape {t.shape})"
            )


def _index(key: Any) -> Any:
    """An index with Tensors and lists turned into arrays, checked to be integer or boolean."""
    if type(key) is tuple:
        return tuple(_index_item(k) for k in key)
    return _index_item(key)


def _index_item(item: Any) -> Any:
    if isinstance(item, Tensor):
        item = item.data
    elif isinstance(item, list):
        item = np.asarray(item)
    if isinstance(item, np.ndarray) and item.dtype.kind not in "biu":
        raise IndexError(f"tensors used as indices must be long, int or bool tensors, got dtype {item.dtype}")
    if isinstance(item, float):
        raise IndexError(
            "only integers, slices, None, Ellipsis and integer or bool tensors are valid indices, "
            f"got {item!r}"
        )
    return item


def _check_seed_shape(got: Shape, want: Shape) -> None:
    if got != want:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[0] has a shape of {got} and output[0] has a shape of {want}"
        )


def _has_nan(x: Any) -> bool:
    array = x.data if isinstance(x, Tensor) else np.asarray(x)
    return array.dtype.kind == "f" and bool(np.isnan(array).any())


def _check_forward_anomaly(rule: type[TensorOp], out: np.ndarray, inputs: tuple[Tensor, ...]) -> None:
    if _has_nan(out) and not any(_has_nan(t) for t in inputs):
        shapes = ", ".join(str(t.shape) for t in inputs)
        raise RuntimeError(
            f"detect_anomaly: forward of '{rule.name}' with input shapes ({shapes}) returned nan"
        )


def _check_backward_anomaly(node: Tensor, g: Any, grads: Sequence[Any]) -> None:
    if _has_nan(g):
        return
    for index, grad in enumerate(grads):
        if grad is not None and _has_nan(grad):
            assert node._rule is not None
            shapes = ", ".join(str(p.shape) for p in node._prev)
            raise RuntimeError(
                f"detect_anomaly: backward of '{node._rule.name}' with input shapes ({shapes}) returned "
                f"nan in its gradient for input {index}"
            )
