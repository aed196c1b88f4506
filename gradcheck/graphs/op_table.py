"""The registry as a markdown table for docs/adapters.md: each op's arity, attributes and meaning.

    python -m gradcheck.graphs.op_table docs/adapters.md   # rewrite the table between its markers

docs/tests/test_op_table.py fails when the table in the docs and the registry differ.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from gradcheck.graphs.generate import RngChooser
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, OpSpec

START, END = "<!-- op-table:start -->", "<!-- op-table:end -->"

# What each attribute an op can carry means to an engine implementing the op.
ATTRIBUTE_MEANINGS: dict[str, str] = {
    "exponent": "the constant power (a float; integral values too)",
    "dims": "the axes to reduce over, a tuple (negative: counted from the last)",
    "dim": "the axis (negative) along which to normalise",
    "low": "lower bound, inclusive",
    "high": "upper bound, inclusive",
    "shape": "the new shape",
    "ndim_in": "the argument's rank (so a leading batch axis can be kept)",
    "reduction": "'mean', 'sum' or 'none', as torch's losses take it",
    "target": "the class index of each row (an int for one row), no gradient",
    "keepdim": "whether the reduced dims stay, with size 1 (optional, default False)",
    "index": (
        'one entry per dim: ["int", i], ["slice", start, stop, step], ["ints", [i, ...]] '
        '(repeats and negatives allowed) or ["mask", [b, ...]] (a mask may cover several dims)'
    ),
    "cond": "the boolean condition, nested lists broadcasting against both operands",
    "sizes": "the target sizes; -1 keeps a dim's size, extra leading sizes add dims",
    "start_dim": "the first dim merged (negative)",
    "end_dim": "the last dim merged (negative, inclusive)",
    "ranks": "the operands' ranks (1 a vector, 2 a matrix, 3 a batch of matrices; for the batched layout)",
}

# Where an attribute means something else for one op.
OP_ATTRIBUTE_MEANINGS: dict[tuple[str, str], str] = {
    ("transpose", "dims"): "the two axes to swap, a pair (negative)",
    ("permute", "dims"): "the new order of all the dims (negative)",
    ("squeeze", "dims"): "the dims to drop where their size is 1 (others stay, as in torch)",
    ("unsqueeze", "dim"): "where the new size-1 dim goes (negative, counted in the result)",
    ("max_dim", "dim"): "the dim (negative) to reduce; the values of torch's (values, indices)",
    ("min_dim", "dim"): "the dim (negative) to reduce; the values of torch's (values, indices)",
}

# Shapes a tensor op's attributes are drawn for, to learn which attributes it takes.
_PROBE_SHAPES = [(3,), (2, 3), (2, 3, 4)]


def attribute_names(spec: OpSpec) -> list[str]:
    """Every attribute `spec` can carry: its drawn ones and those its tensor rule draws."""
    names = set(spec.attrs)
    for _, attrs in spec.kink_cases:
        names |= set(attrs)
    if spec.tensor_attrs is not None:
        chooser = RngChooser(np.random.default_rng(0))
        for shape in _PROBE_SHAPES:
            names |= set(spec.tensor_attrs(chooser, shape) or {})
    return sorted(names)


def _meaning(spec: OpSpec) -> str:
    args = [f"a{i}" for i in range(spec.arity)]
    spelled = spec.snippet(args, {name: name for name in attribute_names(spec)}, "torch")
    return spelled.replace("'", "")


def _attribute_meaning(op: str, attr: str) -> str:
    meaning = OP_ATTRIBUTE_MEANINGS.get((op, attr)) or ATTRIBUTE_MEANINGS.get(attr)
    if meaning is None:
        raise KeyError(f"op {op!r} has attribute {attr!r} with no meaning in op_table.ATTRIBUTE_MEANINGS")
    return meaning


def markdown() -> str:
    """The table, one row per registry op in registry order."""
    rows = [
        "| op | arity | kind | attributes | torch meaning (registry spelling) | kinks and poles |",
        "|---|---|---|---|---|---|",
    ]
    for name, spec in REGISTRY.items():
        attrs = "; ".join(f"`{a}`: {_attribute_meaning(name, a)}" for a in attribute_names(spec)) or "–"
        kind = "scalar and tensor" if name in SCALAR_OPS else "tensor"
        kinks = spec.kinks or "–"
        rows.append(f"| `{name}` | {spec.arity} | {kind} | {attrs} | `{_meaning(spec)}` | {kinks} |")
    return "\n".join(rows)


def rewrite(path: Path) -> bool:
    """Replace the table between the markers in `path`; True when it changed."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path}: no {START} ... {END} markers to put the op table between")
    new = pattern.sub(lambda m: f"{START}\n{markdown()}\n{END}", text)
    path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: {'rewritten' if rewrite(Path(arg)) else 'already up to date'}")
