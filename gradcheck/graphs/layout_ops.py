"""The registry's shape and indexing ops: index, where, expand, permute, squeeze, unsqueeze, flatten.

They move or select elements without arithmetic, so each gradient is the cotangent moved back:
scattered and summed where an element was picked twice (repeated indices) or broadcast (expand).
Tensor graphs carry a leading batch axis (`graphs/shapes.py`), so every entry works on the
trailing dims only, named by negative dims; the same rule then serves one point and a batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.opspec import Accuracy, Chooser, OpSpec

Attrs = dict[str, Any]
Shape = tuple[int, ...]

# --- indexing ----------------------------------------------------------------------------------
# An index is a sequence of entries, one per dim of the argument (a mask entry covers as many dims
# as it has): ("int", i), ("slice", start, stop, step), ("ints", [i, ...]) an integer array
# (repeats and negative values allowed) and ("mask", [b, ...]) a boolean array. An index has at
# most one array entry and then no integer entry, so the selected dim stays in place (numpy and
# torch move separated array indices to the front, which would cross the batch axis).

FULL_SLICE = ("slice", None, None, None)
INDEX_KINDS = ("int", "slice", "ints", "mask")


def index_key(entries: Sequence[Sequence[Any]]) -> tuple[Any, ...]:
    """The index as Python indexing takes it: ints, slices, int64 and bool arrays."""
    key: list[Any] = []
    for kind, *rest in entries:
        if kind == "int":
            key.append(int(rest[0]))
        elif kind == "slice":
            key.append(slice(*rest))
        elif kind == "ints":
            key.append(np.asarray(rest[0], dtype=np.int64))
        elif kind == "mask":
            key.append(np.asarray(rest[0], dtype=bool))
        else:
            raise ValueError(f"index: unknown entry kind {kind!r}; expected one of {INDEX_KINDS}")
    return tuple(key)


def spell_index(entries: Any, target: str) -> str:
    """The index as Python source inside `x[...]` (`1, 0:2, Tensor([0, 0, -1])`), arrays as
    the target's tensors (torch reads a list of lists as one index per dim)."""
    if isinstance(entries, str):  # an attribute name (the op table spells the op with names)
        return entries
    return ", ".join(_spell_entry(entry, target) for entry in entries)


def _spell_entry(entry: Sequence[Any], target: str) -> str:
    kind, *rest = entry
    if kind == "slice":
        start, stop, step = rest
        text = f"{'' if start is None else int(start)}:{'' if stop is None else int(stop)}"
        return text if step in (None, 1) else f"{text}:{int(step)}"
    if kind in ("ints", "mask"):
        tensor = "torch.tensor" if target == "torch" else "Tensor"
        return f"{tensor}({np.asarray(rest[0]).tolist()!r})"
    return repr(int(rest[0]))


def _index_batched(args: Sequence[Any], attrs: Attrs) -> Any:
    """The index applied to the trailing dims of a batch (numpy arrays or torch tensors); the
    leading dims get full slices (torch counts a mask after an Ellipsis as one dim)."""
    key = index_key(attrs["index"])
    return args[0][(slice(None),) * (args[0].ndim - _covered(key)) + key]


def _covered(key: tuple[Any, ...]) -> int:
    """How many dims an index key covers (a boolean mask covers as many as it has)."""
    return sum(np.ndim(item) if isinstance(item, np.ndarray) and item.dtype == bool else 1 for item in key)


def _index_shape(shapes: Sequence[Shape], attrs: Attrs) -> Shape | None:
    """The indexed shape; None unless the index covers every dim (the batched form indexes the
    trailing dims) and fits them."""
    key = index_key(attrs["index"])
    if _covered(key) != len(shapes[0]):
        return None
    return np.empty(shapes[0])[key].shape


def _index_attrs(chooser: Chooser, shape: Shape) -> Attrs | None:
    """An index of one of four forms: basic (ints and slices), an integer array on one dim, a
    boolean mask on one dim, or a boolean mask over every dim."""
    if not shape:
        return None
    entries: list[tuple[Any, ...]] = [FULL_SLICE] * len(shape)
    form = chooser.choice(("basic", "ints", "mask", "whole mask"))
    if form == "basic":
        entries = [_basic_entry(chooser, size) for size in shape]
    elif form == "whole mask" and len(shape) > 1:
        entries = [("mask", _bools(chooser, shape, some_true=True))]
    else:
        d = chooser.integer(0, len(shape) - 1)
        if form == "ints":
            entries[d] = ("ints", _integers(chooser, shape[d]))
        else:
            entries[d] = ("mask", _bools(chooser, (shape[d],), some_true=True))
    return {"index": tuple(entries)}


def _basic_entry(chooser: Chooser, size: int) -> tuple[Any, ...]:
    kind = chooser.choice(("int", "slice", "all"))
    if kind == "int":
        return ("int", chooser.integer(-size, size - 1))
    if kind == "all":
        return FULL_SLICE
    start = chooser.integer(0, size - 1)
    stop = chooser.integer(start + 1, size)
    step = chooser.integer(1, 2)
    if chooser.integer(0, 1) == 1:
        start -= size  # the same place counted from the end
    return ("slice", start, None if stop == size else stop, step)


def _integers(chooser: Chooser, size: int) -> tuple[int, ...]:
    """1 to 4 indices into a dim of `size`, negative ones too; half the time with a repeat
    (gradients at a repeated index must add up)."""
    values = [chooser.integer(-size, size - 1) for _ in range(chooser.integer(1, 4))]
    if len(values) > 1 and chooser.integer(0, 1) == 0:
        values[-1] = values[0] - size if values[0] >= 0 else values[0] + size  # same place, other sign
    return tuple(values)


def _bools(chooser: Chooser, shape: Shape, some_true: bool = False) -> Any:
    """A boolean array of `shape` as nested lists (a bool for shape ()); `some_true`: not all false."""
    flat = [chooser.integer(0, 1) == 1 for _ in range(int(np.prod(shape)))]
    if some_true and not any(flat):
        flat[chooser.integer(0, len(flat) - 1)] = True
    return np.array(flat, dtype=bool).reshape(shape).tolist()


# --- where -------------------------------------------------------------------------------------


def _where_attrs(chooser: Chooser, shape: Shape) -> Attrs:
    """A condition of the first argument's shape, or of its trailing dims (it then broadcasts)."""
    kept = len(shape) - chooser.integer(0, len(shape))
    return {"cond": _bools(chooser, shape[len(shape) - kept :])}


def _where_shape(shapes: Sequence[Shape], attrs: Attrs) -> Shape | None:
    try:
        return tuple(np.broadcast_shapes(np.shape(attrs["cond"]), *shapes))
    except ValueError:
        return None


def _condition(attrs: Attrs) -> np.ndarray:
    return np.asarray(attrs["cond"], dtype=bool)


# --- expand ------------------------------------------------------------------------------------


def _expand_attrs(chooser: Chooser, shape: Shape) -> Attrs:
    """Sizes for expand: a size-1 dim may grow, -1 keeps a dim, and a new leading dim may come first."""
    sizes = [chooser.choice((2, -1, 3, 1)) if n == 1 else chooser.choice((-1, n)) for n in shape]
    if not shape or chooser.integer(0, 1) == 1:
        sizes.insert(0, chooser.choice((2, 1, 3)))
    return {"sizes": tuple(sizes)}


def resolved_sizes(sizes: Sequence[int], shape: Shape) -> Shape | None:
    """expand's target shape for an argument of `shape`: -1 keeps the size; None when torch refuses."""
    new = len(sizes) - len(shape)
    if new < 0 or any(n == -1 for n in sizes[:new]):
        return None
    target = tuple(sizes[:new]) + tuple(n if s == -1 else s for s, n in zip(sizes[new:], shape))
    if any(n != 1 and t != n for t, n in zip(target[new:], shape)) or min(target, default=1) < 1:
        return None
    return target


def _expand_batched(x: Any, sizes: Sequence[int], broadcast: Callable[[Any, Shape], Any]) -> Any:
    """expand on a batch (leading axis) of arguments, with `broadcast(array, shape)`."""
    tail = tuple(x.shape[1:])
    if len(tail) < len(sizes):  # give the new dims a size-1 place behind the batch axis
        tail = (1,) * (len(sizes) - len(tail)) + tail
        x = x.reshape((x.shape[0], *tail))
    lead = tuple(x.shape[: x.ndim - len(sizes)])
    target = resolved_sizes(sizes, tuple(x.shape[x.ndim - len(sizes) :]))
    if target is None:
        raise ValueError(f"expand: sizes {tuple(sizes)} do not fit an argument of shape {tail}")
    return broadcast(x, lead + target)


# --- permute, squeeze, unsqueeze, flatten ------------------------------------------------------


def _permute_attrs(chooser: Chooser, shape: Shape) -> Attrs | None:
    """A permutation of the dims (negative) other than the identity, shuffled through the chooser."""
    n = len(shape)
    if n < 2:
        return None
    order = list(range(-n, 0))
    for i in range(n - 1, 0, -1):
        j = chooser.integer(0, i)
        order[i], order[j] = order[j], order[i]
    if order == sorted(order):
        order[-2], order[-1] = order[-1], order[-2]
    return {"dims": tuple(order)}


def _permuted_shape(shapes: Sequence[Shape], attrs: Attrs) -> Shape | None:
    dims = tuple(attrs["dims"])
    if sorted(dims) != list(range(-len(shapes[0]), 0)):
        return None  # not a permutation of this argument's dims
    return tuple(shapes[0][d] for d in dims)


def permute_axes(ndim: int, dims: Sequence[int]) -> tuple[int, ...]:
    """The full axis order for permuting the trailing `len(dims)` of `ndim` axes by `dims`."""
    lead = ndim - len(dims)
    return tuple(range(lead)) + tuple(ndim + d for d in dims)


def _squeeze_attrs(chooser: Chooser, shape: Shape) -> Attrs | None:
    """One dim (a size-1 one first; another is kept, as torch does), sometimes a second one."""
    dims = [-d for d in range(1, len(shape) + 1)]
    if not dims:
        return None
    ones = [d for d in dims if shape[d] == 1]
    chosen = {chooser.choice(ones + dims)}
    if len(dims) > 1 and chooser.integer(0, 2) == 0:
        chosen.add(chooser.choice(dims))
    return {"dims": tuple(sorted(chosen))}


def _squeezed(xp: Any, x: Any, dims: Sequence[int]) -> Any:
    """x without those of its trailing `dims` that have size 1."""
    return xp.squeeze(x, axis=tuple(d for d in dims if x.shape[d] == 1))


def _squeeze_shape(shapes: Sequence[Shape], attrs: Attrs) -> Shape | None:
    shape = shapes[0]
    if not all(-len(shape) <= d <= -1 for d in attrs["dims"]):
        return None
    drop = {len(shape) + d for d in attrs["dims"] if shape[d] == 1}
    return tuple(n for i, n in enumerate(shape) if i not in drop)


def _unsqueeze_attrs(chooser: Chooser, shape: Shape) -> Attrs:
    return {"dim": -chooser.integer(1, len(shape) + 1)}


def _unsqueeze_shape(shapes: Sequence[Shape], attrs: Attrs) -> Shape | None:
    shape = list(shapes[0])
    if not -len(shape) - 1 <= attrs["dim"] <= -1:
        return None
    shape.insert(len(shape) + 1 + attrs["dim"], 1)
    return tuple(shape)


def _flatten_attrs(chooser: Chooser, shape: Shape) -> Attrs | None:
    if not shape:
        return None
    start = -chooser.integer(1, len(shape))
    return {"start_dim": start, "end_dim": chooser.integer(start, -1)}


def flattened(shape: Shape, start: int, end: int) -> Shape:
    """`shape` with its dims start..end (negative, inclusive) merged into one."""
    n = len(shape)
    if not -n <= start <= end <= -1:
        raise ValueError(f"flatten: dims {start}..{end} do not fit a shape of {n} dims {shape}")
    merged = int(np.prod(shape[n + start : n + end + 1]))
    return (*shape[: n + start], merged, *shape[n + end + 1 :])


def _flatten_xp(xp: Any, x: Any, attrs: Attrs) -> Any:
    return xp.reshape(x, flattened(tuple(x.shape), attrs["start_dim"], attrs["end_dim"]))


def _index_terms(shapes: Sequence[Shape], attrs: Attrs) -> tuple[int, tuple[int, ...]]:
    """A repeated index sums the cotangents of its copies: as many as the result has, at most."""
    result = _index_shape(shapes, attrs)
    return 1, (max(1, math.prod(result if result is not None else shapes[0])),)


LAYOUT_SPECS: list[OpSpec] = [
    OpSpec(
        "index",
        1,
        lambda a, k: a[0][index_key(k["index"])],
        _index_batched,
        "{0}[{index}]",
        kinks="none; a repeated index gets the sum of its cotangents",
        tensor_only=True,
        shape=_index_shape,
        tensor_attrs=_index_attrs,
        torch_batched=_index_batched,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,), linear=True, terms=_index_terms),
        array=lambda xp, a, k: a[0][index_key(k["index"])],
        spell_attrs={"index": spell_index},
    ),
    OpSpec(
        "where",
        2,
        lambda a, k: a[0].where(_condition(k), a[1]),
        lambda a, k: np.where(_condition(k), a[0], a[1]),
        "{0}.where(Tensor({cond}), {1})",
        tensor_only=True,
        shape=_where_shape,
        tensor_attrs=_where_attrs,
        torch_template="{0}.where(torch.tensor({cond}), {1})",
        torch_apply=lambda a, k: a[0].where(a[0].new_tensor(k["cond"]).bool(), a[1]),
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0, 0.0), linear=True),
        array=lambda xp, a, k: xp.where(_condition(k), a[0], a[1]),
    ),
    OpSpec(
        "expand",
        1,
        lambda a, k: a[0].expand(*k["sizes"]),
        lambda a, k: _expand_batched(a[0], k["sizes"], np.broadcast_to),
        "{0}.expand(*{sizes})",
        kinks="none; a broadcast element gets the sum of its copies' cotangents",
        tensor_only=True,
        shape=lambda s, k: resolved_sizes(k["sizes"], s[0]),
        tensor_attrs=_expand_attrs,
        torch_batched=lambda a, k: _expand_batched(a[0], k["sizes"], lambda x, s: x.expand(*s)),
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,), linear=True),
        array=lambda xp, a, k: xp.broadcast_to(a[0], resolved_sizes(k["sizes"], tuple(a[0].shape))),
    ),
    OpSpec(
        "permute",
        1,
        lambda a, k: a[0].permute(*k["dims"]),
        lambda a, k: np.transpose(a[0], permute_axes(a[0].ndim, k["dims"])),
        "{0}.permute(*{dims})",
        tensor_only=True,
        shape=_permuted_shape,
        tensor_attrs=_permute_attrs,
        torch_batched=lambda a, k: a[0].permute(*permute_axes(a[0].ndim, k["dims"])),
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),
        array=lambda xp, a, k: xp.transpose(a[0], permute_axes(a[0].ndim, k["dims"])),
    ),
    OpSpec(
        "squeeze",
        1,
        lambda a, k: a[0].squeeze(tuple(k["dims"])),
        lambda a, k: _squeezed(np, a[0], k["dims"]),
        "{0}.squeeze({dims})",
        tensor_only=True,
        shape=_squeeze_shape,
        tensor_attrs=_squeeze_attrs,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),
        array=lambda xp, a, k: _squeezed(xp, a[0], k["dims"]),
    ),
    OpSpec(
        "unsqueeze",
        1,
        lambda a, k: a[0].unsqueeze(k["dim"]),
        lambda a, k: np.expand_dims(a[0], k["dim"]),
        "{0}.unsqueeze({dim})",
        tensor_only=True,
        shape=_unsqueeze_shape,
        tensor_attrs=_unsqueeze_attrs,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),
        array=lambda xp, a, k: xp.expand_dims(a[0], k["dim"]),
    ),
    OpSpec(
        "flatten",
        1,
        lambda a, k: a[0].flatten(k["start_dim"], k["end_dim"]),
        lambda a, k: _flatten_xp(np, a[0], k),
        "{0}.flatten({start_dim}, {end_dim})",
        tensor_only=True,
        shape=lambda s, k: flattened(s[0], k["start_dim"], k["end_dim"]),
        tensor_attrs=_flatten_attrs,
        family="arithmetic",
        accuracy=Accuracy(0.0, (0.0,)),
        array=lambda xp, a, k: _flatten_xp(xp, a[0], k),
    ),
]
