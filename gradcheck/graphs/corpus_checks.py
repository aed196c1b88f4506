"""Field-by-field checks of a corpus file before it becomes a Graph.

A corpus entry must check something and must be safe to print as runnable code: input names are
Python identifiers (they become variable names in snippets), there is at least one input point,
every points array has the same length, inputs are finite, each op's attributes have the type
and range that op takes, and size and nesting stay within limits. Anything else is rejected
with a GraphFormatError naming the field.
"""

from __future__ import annotations

import json
import keyword
import math
import re
import string
from collections.abc import Callable
from typing import Any

from gradcheck.graphs.ir import NONFINITE_SPELLINGS, GraphFormatError
from gradcheck.graphs.layout_ops import INDEX_KINDS
from gradcheck.graphs.registry import REGISTRY

MAX_BYTES = 4_000_000
MAX_DEPTH = 16  # JSON nesting: a tensor graph's points are [input][point][...shape], well below
MAX_NODES = 10_000
MAX_INPUTS = 1_000
MAX_POINTS = 10_000
MAX_ATTRIBUTE = 1e6  # exponents, clamp bounds: larger ones only overflow
# Names a snippet uses for itself (and op nodes' v<id>): an input may not shadow them.
RESERVED = frozenset(
    {
        "torch",
        "minigrad",
        "Value",
        "Tensor",
        "outputs",
        "inputs",
        "cotangent",
        "grads",
        "hvp",
        "loss",
        "print",
        "sum",
    }
)
_NODE_NAME = re.compile(r"v\d+")


def check_graph_data(text: str, non_finite: bool = False) -> dict[str, Any]:
    """The JSON object in `text` if every field is sound, else GraphFormatError naming the field.

    Inputs and points must be finite, as a regression corpus entry's are; `non_finite` also
    admits inf and nan (spelled "inf", "-inf", "nan"), which an edge-value finding of a report
    carries."""
    if len(text) > MAX_BYTES:
        raise GraphFormatError(f"file is {len(text)} bytes; a corpus graph is at most {MAX_BYTES}")
    try:
        data = json.loads(text)
    except RecursionError:
        raise GraphFormatError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:  # JSONDecodeError, and integers past Python's digit limit
        raise GraphFormatError(f"not valid JSON: {e}") from None
    _check_depth(data, 0)
    if not isinstance(data, dict):
        raise GraphFormatError(f"expected a JSON object, got {type(data).__name__}")
    if "meta" in data and not isinstance(data["meta"], dict):
        raise GraphFormatError(f"'meta' must be an object, got {type(data['meta']).__name__}")
    inputs, nodes = data.get("inputs"), data.get("nodes")
    if isinstance(inputs, list):
        _check_inputs(inputs, non_finite)
    if isinstance(nodes, list):
        if len(nodes) > MAX_NODES:
            raise GraphFormatError(f"'nodes': {len(nodes)} nodes; at most {MAX_NODES}")
        for i, node in enumerate(nodes):
            _check_node(i, node, len(inputs) if isinstance(inputs, list) else 0)
    if data.get("points") is not None:
        _check_points(data["points"], len(inputs) if isinstance(inputs, list) else 0, non_finite)
    if data.get("cotangent") is not None:
        _check_finite("cotangent", data["cotangent"])
    return data


def _check_depth(value: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise GraphFormatError(f"JSON nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for v in value.values():
            _check_depth(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_depth(v, depth + 1)


def _check_inputs(inputs: list[Any], non_finite: bool) -> None:
    if len(inputs) > MAX_INPUTS:
        raise GraphFormatError(f"'inputs': {len(inputs)} inputs; at most {MAX_INPUTS}")
    names: set[str] = set()
    for k, inp in enumerate(inputs):
        if not isinstance(inp, dict):
            raise GraphFormatError(f"inputs[{k}]: expected an object, got {type(inp).__name__}")
        name = inp.get("name", f"x{k}")
        if (
            not isinstance(name, str)
            or not name.isidentifier()
            or not name.isascii()
            or keyword.iskeyword(name)
        ):
            raise GraphFormatError(f"inputs[{k}].name: {name!r} is not a Python identifier")
        if name in RESERVED or _NODE_NAME.fullmatch(name):
            raise GraphFormatError(f"inputs[{k}].name: {name!r} is reserved for the snippets' own variables")
        if name in names:
            raise GraphFormatError(f"inputs[{k}].name: {name!r} is used by two inputs")
        names.add(name)
        if "value" not in inp:
            raise GraphFormatError(f"inputs[{k}].value: missing")
        _check_finite(f"inputs[{k}].value", inp["value"], non_finite)
        shape = inp.get("shape", [])
        if not isinstance(shape, list) or not all(_is_size(s) for s in shape):
            raise GraphFormatError(f"inputs[{k}].shape: expected a list of sizes from 1, got {shape!r}")


def _is_size(value: Any) -> bool:
    """A tensor dimension's size as a graph file spells it: an integer from 1 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_points(points: Any, n_inputs: int, non_finite: bool) -> None:
    if not isinstance(points, list) or len(points) != n_inputs:
        raise GraphFormatError(
            f"'points': expected one array per input ({n_inputs}), got {_describe(points)}"
        )
    lengths = []
    for i, p in enumerate(points):
        if not isinstance(p, list):
            raise GraphFormatError(f"points[{i}]: expected an array of input points, got {_describe(p)}")
        lengths.append(len(p))
        _check_finite(f"points[{i}]", p, non_finite)
    if lengths and min(lengths) == 0:
        raise GraphFormatError("'points': an entry must carry at least one input point, got an empty array")
    if len(set(lengths)) > 1:
        raise GraphFormatError(
            f"'points': arrays of different lengths {lengths}; every input needs each point"
        )
    if lengths and lengths[0] > MAX_POINTS:
        raise GraphFormatError(f"'points': {lengths[0]} points; at most {MAX_POINTS}")


def _check_node(i: int, node: Any, n_inputs: int) -> None:
    where = f"node v{n_inputs + i}"
    if not isinstance(node, dict):
        raise GraphFormatError(f"{where}: expected an object, got {type(node).__name__}")
    spec = REGISTRY.get(node.get("op")) if isinstance(node.get("op"), str) else None
    if spec is None:
        return  # Graph.validate names the unknown op
    attrs = node.get("attrs", {})
    if not isinstance(attrs, dict):
        raise GraphFormatError(f"{where} ({spec.name}): 'attrs' must be an object, got {_describe(attrs)}")
    expected = required_attrs(spec.name)
    missing = sorted(expected - set(attrs) - set(spec.optional_attrs))
    if missing:
        raise GraphFormatError(f"{where} ({spec.name}): missing attribute(s) {missing}")
    extra = sorted(set(attrs) - expected - set(spec.layout_attrs))
    if extra:
        raise GraphFormatError(
            f"{where} ({spec.name}): unknown attribute(s) {extra}; it takes "
            f"{sorted(expected | set(spec.layout_attrs))}"
        )
    for name, value in attrs.items():
        _check_attr(f"{where} ({spec.name}) attribute {name!r}", name, value)
    if spec.name == "clamp" and attrs["low"] > attrs["high"]:
        raise GraphFormatError(f"{where} (clamp): low {attrs['low']!r} is above high {attrs['high']!r}")


def required_attrs(op: str) -> set[str]:
    """The attribute names op `op` takes: the named fields of its snippet templates."""
    spec = REGISTRY[op]
    names = set()
    for template in (spec.template, spec.torch_template or ""):
        for _, field, _, _ in string.Formatter().parse(template):
            if field and not field.isdigit():
                names.add(field)
    return names


def _check_attr(where: str, name: str, value: Any) -> None:
    if name in _STRUCTURED_CHECKS:
        problem = _STRUCTURED_CHECKS[name](value)
        if problem:
            raise GraphFormatError(f"{where}: {problem}, got {_describe(value)}")
        return
    if name in ("dims", "shape", "ranks"):
        if not isinstance(value, list) or not all(_is_int(v) and abs(v) <= 64 for v in value):
            raise GraphFormatError(f"{where}: expected a list of small integers, got {_describe(value)}")
        if name == "shape" and not all(v >= 1 for v in value):
            raise GraphFormatError(f"{where}: a shape's sizes must be at least 1, got {value!r}")
        return
    if name in ("dim", "start_dim", "end_dim"):
        if not _is_int(value) or abs(value) > 64:
            raise GraphFormatError(f"{where}: expected a small integer, got {_describe(value)}")
        return
    if not _finite(value) or abs(value) > MAX_ATTRIBUTE:
        raise GraphFormatError(
            f"{where}: expected a finite number of magnitude at most {MAX_ATTRIBUTE:g}, "
            f"got {_describe(value)}"
        )


def _index_problem(value: Any) -> str:
    """What is wrong with an `index` attribute (layout_ops' entries), or ""."""
    if not isinstance(value, list) or not value:
        return "expected a non-empty list of index entries"
    for entry in value:
        if not isinstance(entry, list) or not entry or entry[0] not in INDEX_KINDS:
            return f"expected entries [kind, ...] with kind one of {INDEX_KINDS}"
        kind, rest = entry[0], entry[1:]
        if kind == "int" and not (len(rest) == 1 and _small_int(rest[0])):
            return 'expected ["int", i] with i a small integer'
        if kind == "slice" and not (len(rest) == 3 and all(v is None or _small_int(v) for v in rest)):
            return 'expected ["slice", start, stop, step] of small integers or null'
        if kind == "slice" and rest[2] is not None and rest[2] < 1:
            return "expected a slice step of at least 1 (torch has no negative steps)"
        if kind == "ints" and not (len(rest) == 1 and _nested(rest[0], _small_int)):
            return 'expected ["ints", [i, ...]] of small integers'
        if kind == "mask" and not (len(rest) == 1 and _nested(rest[0], _is_bool)):
            return 'expected ["mask", [b, ...]] of booleans'
    return ""


def _nested(value: Any, leaf: Callable[[Any], bool]) -> bool:
    """A non-empty (nested) list whose leaves all pass `leaf`."""
    if not isinstance(value, list):
        return False
    return bool(value) and all(_nested(v, leaf) if isinstance(v, list) else leaf(v) for v in value)


def _small_int(value: Any) -> bool:
    return _is_int(value) and abs(value) <= 64


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


# Attributes with a structure of their own: a function naming what is wrong ("" when sound).
_STRUCTURED_CHECKS: dict[str, Callable[[Any], str]] = {
    "index": _index_problem,
    "cond": lambda v: "" if _is_bool(v) or _nested(v, _is_bool) else "expected a boolean or nested booleans",
    "keepdim": lambda v: "" if _is_bool(v) else "expected true or false",
    "sizes": lambda v: (
        ""
        if isinstance(v, list) and all(_small_int(n) and (n >= 1 or n == -1) for n in v)
        else "expected a list of sizes (at least 1, or -1 to keep a dim)"
    ),
    # the losses (nn_ops): how they reduce, and the class index of each row
    "reduction": lambda v: "" if v in ("mean", "sum", "none") else "expected 'mean', 'sum' or 'none'",
    "target": lambda v: (
        ""
        if (_small_int(v) and v >= 0) or (isinstance(v, list) and all(_small_int(n) and n >= 0 for n in v))
        else "expected a class index or a list of them"
    ),
}


def _check_finite(where: str, value: Any, non_finite: bool = False) -> None:
    """Numbers or nested lists of numbers, all finite (no NaN, Infinity or huge integers); with
    `non_finite`, inf and nan pass too (huge integers never do)."""
    if isinstance(value, list):
        for v in value:
            _check_finite(where, v, non_finite)
        return
    if non_finite and (
        value in NONFINITE_SPELLINGS or (isinstance(value, float) and not math.isfinite(value))
    ):
        return
    if not _is_number(value):
        raise GraphFormatError(f"{where}: expected numbers, got {_describe(value)}")
    if not _finite(value):
        raise GraphFormatError(f"{where}: {_describe(value)} is not a finite float64 number")


def _finite(value: Any) -> bool:
    """A number that is a finite float64 (an integer too large for a float is not)."""
    if not _is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
