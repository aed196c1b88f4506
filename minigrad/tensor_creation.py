"""Functions that make new Tensors (torch.tensor, zeros, ones, randn, arange, ...) and the
default random generator they and `nn` initialisers draw from (`manual_seed` resets it)."""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.tensor import DEFAULT_FLOAT, Tensor, _leaf, _numeric, _shape_arg, int64

_generator = np.random.default_rng()


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the default generator (used when no `generator` is passed), like torch.manual_seed."""
    global _generator
    _generator = np.random.default_rng(seed)
    return _generator


def default_generator() -> np.random.Generator:
    """The generator used when none is given."""
    return _generator


def _rng(generator: np.random.Generator | int | None) -> np.random.Generator:
    if generator is None:
        return _generator
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    raise TypeError(
        f"generator must be a numpy Generator, an int seed or None, got {type(generator).__name__}"
    )


def _float_dtype(dtype: Any) -> np.dtype:
    return DEFAULT_FLOAT if dtype is None else np.dtype(dtype)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new Tensor holding a copy of `data` (torch.tensor): float data is float32 unless `dtype`."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A Tensor sharing `array`'s memory and dtype (torch.from_numpy); numeric dtypes only."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected an np.ndarray, got {type(array).__name__}")
    return _leaf(_numeric(array, "from_numpy"))


def _fresh(array: np.ndarray, requires_grad: bool) -> Tensor:
    """A leaf around a newly made array (no copy needed)."""
    return _leaf(array).requires_grad_(requires_grad)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _fresh(np.zeros(_shape_arg(size), dtype=_float_dtype(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _fresh(np.ones(_shape_arg(size), dtype=_float_dtype(dtype)), requires_grad)


def full(size: Any, fill_value: float, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    shape = _shape_arg((size,))
    return _fresh(np.full(shape, fill_value, dtype=_float_dtype(dtype)), requires_grad)


def zeros_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _fresh(np.zeros(t.shape, dtype=t.dtype if dtype is None else dtype), requires_grad)


def ones_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _fresh(np.ones(t.shape, dtype=t.dtype if dtype is None else dtype), requires_grad)


def randn(
    *size: Any,
    generator: np.random.Generator | int | None = None,
    dtype: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal samples; `generator` is a numpy Generator or an int seed (None: the default)."""
    dtype = _float_dtype(dtype)
    data = _rng(generator).standard_normal(_shape_arg(size), dtype=dtype)
    return _fresh(data, requires_grad)


def rand(
    *size: Any,
    generator: np.random.Generator | int | None = None,
    dtype: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform samples on [0, 1); `generator` as in `randn`."""
    dtype = _float_dtype(dtype)
    data = _rng(generator).random(_shape_arg(size), dtype=dtype)
    return _fresh(data, requires_grad)


def uniform(
    *size: Any,
    low: float,
    high: float,
    generator: np.random.Generator | int | None = None,
    dtype: Any = None,
) -> Tensor:
    """Uniform samples on [low, high) (what nn initialisers use)."""
    dtype = _float_dtype(dtype)
    data = _rng(generator).uniform(low, high, _shape_arg(size)).astype(dtype)
    return _leaf(data)


def arange(
    start: float, end: float | None = None, step: float = 1, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    """Evenly spaced values in [start, end): int64 for integer arguments, else float32 (torch)."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        integral = all(isinstance(x, (int, np.integer)) for x in (start, end, step))
        dtype = int64 if integral else DEFAULT_FLOAT
    return _fresh(np.arange(start, end, step).astype(dtype), requires_grad)
