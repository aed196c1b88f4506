"""Tensor dtypes as torch has them: which dtypes a Tensor holds, what a new tensor gets, how ops promote.

float data is float32 unless asked, integer data int64, bools bool; non-numeric dtypes (object,
str, datetime, complex) are refused. An op's result dtype is promoted the way torch promotes:
dimensioned tensors over 0-d tensors over Python numbers, unless a lower tier is of a higher kind.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import floatmath as fm
from minigrad.elementary import ARRAYS

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)
DEFAULT_FLOAT = float32


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
        if isinstance(x, np.ndarray) or isinstance(getattr(x, "data", None), np.ndarray):
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


def _array_from(data: Any, dtype: Any) -> np.ndarray:
    """A fresh array from `data` with torch.tensor's dtype rules (float32 for float lists)."""
    if dtype is not None:
        dtype = np.dtype(dtype)
    if dtype is not None:
        _numeric(np.empty(0, dtype), "tensor")
    if isinstance(data, ARRAYS):
        return _numeric(np.array(data, dtype=dtype), "tensor")
    try:
        array = np.array(data, dtype=dtype)
    except OverflowError:
        raise fm.too_large(_largest_int(data), "tensor", f"dtype {dtype}") from None
    if dtype is None:
        kind = array.dtype.kind
        if kind == "f":
            array = array.astype(DEFAULT_FLOAT)
        elif kind in "iu":
            array = array.astype(int64)
        elif kind == "O" and _largest_int(data) is not None:
            raise fm.too_large(_largest_int(data), "tensor", "int64 (torch's integer dtype)")
        elif kind != "b":
            raise TypeError(f"tensor: could not infer a numeric dtype from {type(data).__name__} {data!r}")
    return array


def _numeric(array: np.ndarray, op: str) -> np.ndarray:
    """`array` itself if its dtype is bool, integer or floating; else a TypeError naming the dtype."""
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{op}: dtype {array.dtype} is not supported; a Tensor holds numbers "
            "(bool, integer or floating point dtypes)"
        )
    return array


def _largest_int(data: Any) -> int | None:
    """The Python int of largest magnitude in nested lists `data` (None if there is none)."""
    if isinstance(data, (list, tuple)):
        found = [n for n in map(_largest_int, data) if n is not None]
        return max(found, key=abs, default=None)
    return data if type(data) is int else None
