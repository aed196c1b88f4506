"""What `Tensor`'s method mixins rely on, named for the type checker: Tensor's fields, its shape
properties and the helpers that apply a rule. Tensor defines them all; at run time this base is
empty. It names no Tensor (`Self` is the Tensor it is a base of): minigrad.tensor imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Self

    from minigrad.elementwise import Elementwise
    from minigrad.op import TensorOp
    from minigrad.tensor_args import Shape

# A rule a Tensor op applies: a tensor op, or a shared elementwise rule (also Value's).
Rule: TypeAlias = "type[TensorOp] | type[Elementwise]"


class TensorCore:
    """The base of every `Tensor` mixin: the fields and helpers they use, typed."""

    if not TYPE_CHECKING:  # no fields here at run time; the checker sees Tensor's below instead
        __slots__ = ()

    if TYPE_CHECKING:
        data: np.ndarray
        grad: Self | None
        _requires_grad: bool
        _prev: tuple[Self, ...]
        _rule: Rule | None
        _params: dict[str, Any]
        _needs: tuple[bool, ...]
        _g: Any
        _retains: bool

        @property
        def shape(self) -> Shape: ...
        @property
        def dtype(self) -> np.dtype: ...
        @property
        def ndim(self) -> int: ...
        def _apply(self, rule: Rule, **params: Any) -> Self: ...
        # the helpers below return Tensors (typed Any: Self has no meaning in a static method)
        @staticmethod
        def _binary(rule: Rule, a: Any, b: Any, floating: bool = False) -> Any: ...
        @staticmethod
        def _unary_float(rule: Rule, x: Any) -> Any: ...
        @staticmethod
        def _compare(func: Any, a: Any, b: Any) -> Any: ...
        @staticmethod
        def _leaf(array: np.ndarray) -> Any: ...
        def reshape(self, *shape: Any) -> Self: ...
        def squeeze(self, dim: Any = None) -> Self: ...
        def to(self, dtype: Any) -> Self: ...
