"""The expression-graph IR: inputs with values, op nodes, outputs; JSON round trip; runnable snippets.

Node ids: inputs are 0..n_inputs-1 in order, op node i has id n_inputs + i. An op node names a
registry op, its argument node ids, its attributes (an exponent, a dim) and its constants: plain
numbers standing as operands (`2.0 - x`, `x / 0.5`, `2.0 ** x`; in tensor graphs also 0-d
tensors without a gradient). A graph may also carry a batch of extra input points (`points`), the
same structure checked at several inputs at once, and the cotangent (one weight per output) its
backward pass is seeded with.

JSON format (`"format": "minigrad-graph"`), version 2 adds constants to version 1. A node is
`{"op": "sub", "args": [3], "attrs": {}, "consts": [{"at": 0, "value": 2.0}]}`: operand position
`at` (0 = left) is the number `value`, and `args` fill the other positions in order, so this node
is `2.0 - v3`; `"tensor": true` in a constant makes it a 0-d float64 tensor instead of a Python
number. `consts` is left out when empty, and a graph without constants is written as version 1,
byte for byte what version 1 readers expect; version 1 files (no `consts`) load unchanged.
A node's arity is `len(args) + len(consts)`; a constant never stands for every operand of a node.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.graphs.registry import REGISTRY

FORMAT = "minigrad-graph"
# The attribute naming which of an adapter's spellings of its op a node is drawn in
# (`gradcheck.graphs.spellings`): how the engine is called, not part of the op's math.
SPELLING = "spelling"
VERSION = 2  # the version written for graphs with constants; VERSION_1 for the others
VERSION_1 = 1
READABLE_VERSIONS = (VERSION_1, VERSION)
# A spelling's code: its operands' code and the op's attributes to the expression (`Spelling.code`).
SpelledCode = Callable[[Sequence[str], dict[str, Any]], str]
SpelledCodes = Mapping[tuple[str, str], SpelledCode]  # by the spelling's op and name


class GraphFormatError(ValueError):
    """A graph description (usually JSON) that does not describe a valid graph."""


@dataclass(frozen=True)
class Input:
    """A leaf: a name and a value (a float, or a float64 array of `shape` for tensor graphs)."""

    name: str
    value: Any
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class Constant:
    """A number standing as operand `at` of an op node; `tensor`: a 0-d float64 tensor, not a float."""

    at: int
    value: float
    tensor: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"at": self.at, "value": self.value}
        if self.tensor:
            d["tensor"] = True
        return d


def plain_constant(c: Constant) -> float:
    """A constant as the plain float that numpy references and Python-number operands use."""
    return c.value


@dataclass(frozen=True)
class OpNode:
    """One op application: registry op name, argument node ids, attributes (sorted key/value pairs)
    and constant operands (sorted by position)."""

    op: str
    args: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    consts: tuple[Constant, ...] = ()

    @property
    def attr(self) -> dict[str, Any]:
        """The op's attributes, as its reference math reads them (without the spelling)."""
        attrs = dict(self.attrs)
        attrs.pop(SPELLING, None)
        return attrs

    @property
    def arity(self) -> int:
        return len(self.args) + len(self.consts)

    def operands(
        self, nodes: Sequence[Any], constant: Callable[[Constant], Any] = plain_constant
    ) -> list[Any]:
        """The op's operands in order: `nodes[id]` for each argument, `constant(c)` for each constant."""
        at = {c.at: c for c in self.consts}
        ids = iter(self.args)
        return [constant(at[i]) if i in at else nodes[next(ids)] for i in range(self.arity)]

    def with_args(self, args: tuple[int, ...]) -> OpNode:
        """The same op, attributes and constants on other argument ids."""
        return OpNode(self.op, args, self.attrs, self.consts)


@dataclass
class Graph:
    """An expression graph: `inputs`, `nodes` (op nodes in evaluation order) and `outputs` (node ids).

    `points`, when present, holds K input points (one array of shape (K, *input.shape) per input;
    point 0 equals the inputs' values); `cotangent`, when present, one weight per output.
    """

    inputs: list[Input]
    nodes: list[OpNode]
    outputs: list[int]
    points: list[np.ndarray] | None = None
    cotangent: list[Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    # --- structure ---------------------------------------------------------------------------

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    @property
    def n_points(self) -> int:
        return 1 if self.points is None else int(self.points[0].shape[0])

    @property
    def is_tensor(self) -> bool:
        """A tensor graph: tensor inputs or ops, or marked so (meta kind 'tensor', e.g. 0-d inputs)."""
        return (
            self.meta.get("kind") == "tensor"
            or any(inp.shape != () for inp in self.inputs)
            or any(op_is_tensor(node.op) for node in self.nodes)
        )

    def ops(self) -> list[str]:
        """The distinct op names used, in order of first use."""
        return list(dict.fromkeys(node.op for node in self.nodes))

    def name_of(self, node_id: int) -> str:
        """The variable name a snippet gives node `node_id` (x0, x1... for inputs, v<id> for ops)."""
        return self.inputs[node_id].name if node_id < self.n_inputs else f"v{node_id}"

    def depth(self) -> int:
        """The longest input-to-output path, counted in op nodes."""
        depths = [0] * self.n_inputs
        depth_of = depths.__getitem__
        for node in self.nodes:
            args = node.args  # most nodes have one argument: no max() call for them
            depths.append(1 + (depth_of(args[0]) if len(args) == 1 else max(map(depth_of, args))))
        return max((depths[o] for o in self.outputs), default=0)

    def use_counts(self) -> list[int]:
        """How many times each node is used as an argument (counting repeats within one op)."""
        counts = [0] * (self.n_inputs + len(self.nodes))
        for node in self.nodes:
            for a in node.args:
                counts[a] += 1
        return counts

    def path_count(self) -> int:
        """How many paths lead from the outputs back to the inputs, node by node (a node used
        twice by one op counts twice): what a backward that follows every path walks."""
        paths = [0] * (self.n_inputs + len(self.nodes))
        for o in self.outputs:
            paths[o] += 1
        for i in range(len(paths) - 1, self.n_inputs - 1, -1):
            for a in self.nodes[i - self.n_inputs].args:
                paths[a] += paths[i]
        return sum(paths[: self.n_inputs])

    def input_values(self, point: int = 0) -> list[Any]:
        """The input values at batch point `point` (floats, or arrays for tensor inputs)."""
        if self.points is None:
            if point != 0:
                raise IndexError(f"graph has a single input point; asked for point {point}")
            return [inp.value for inp in self.inputs]
        return [_scalar_or_array(p[point]) for p in self.points]

    def instance(self, point: int, cotangent: Sequence[Any] | None = None) -> Graph:
        """The same structure at one input point, unbatched (what a bug report needs)."""
        values = self.input_values(point)
        inputs = [Input(inp.name, v, inp.shape) for inp, v in zip(self.inputs, values)]
        cot = list(cotangent) if cotangent is not None else self.cotangent
        return Graph(inputs, list(self.nodes), list(self.outputs), None, cot, dict(self.meta))

    def validate(self) -> None:
        """Raise GraphFormatError unless ids, arities and op names are consistent."""
        n = self.n_inputs
        if not self.outputs:
            raise GraphFormatError("graph has no outputs")
        for i, node in enumerate(self.nodes):
            spec = REGISTRY.get(node.op)
            if spec is None:
                raise GraphFormatError(f"node v{n + i}: unknown op {node.op!r}; known: {sorted(REGISTRY)}")
            if node.arity != spec.arity:
                raise GraphFormatError(
                    f"node v{n + i}: op {node.op!r} takes {spec.arity} arguments, got {len(node.args)}"
                    + (f" and {len(node.consts)} constant(s)" if node.consts else "")
                )
            positions = [c.at for c in node.consts]
            if node.consts and (not node.args or len(set(positions)) != len(positions)):
                raise GraphFormatError(
                    f"node v{n + i}: constants at positions {positions} must be distinct and leave "
                    "at least one operand a node"
                )
            for c in node.consts:
                if not 0 <= c.at < spec.arity:
                    raise GraphFormatError(
                        f"node v{n + i}: constant position {c.at} is not an operand of {node.op!r} "
                        f"(0..{spec.arity - 1})"
                    )
            for a in node.args:
                if not isinstance(a, int) or not 0 <= a < n + i:
                    raise GraphFormatError(
                        f"node v{n + i}: argument id {a!r} must be an earlier node id in [0, {n + i})"
                    )
        for o in self.outputs:
            if not isinstance(o, int) or not 0 <= o < n + len(self.nodes):
                raise GraphFormatError(f"output id {o!r} is not a node id in [0, {n + len(self.nodes)})")
        if self.points is not None:
            if len(self.points) != n:
                raise GraphFormatError(f"points: {len(self.points)} arrays for {n} inputs")
            for inp, p in zip(self.inputs, self.points):
                if p.shape[1:] != inp.shape:
                    raise GraphFormatError(
                        f"points for input {inp.name}: shape {p.shape} does not match (K, *{inp.shape})"
                    )
        if self.cotangent is not None and len(self.cotangent) != len(self.outputs):
            raise GraphFormatError(
                f"cotangent has {len(self.cotangent)} entries for {len(self.outputs)} outputs"
            )

    # --- JSON ----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; floats are stored exactly (repr round-trips float64)."""
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION if any(n.consts for n in self.nodes) else VERSION_1,
            "inputs": [
                {"name": i.name, "value": _to_json_value(i.value), "shape": list(i.shape)}
                for i in self.inputs
            ],
            "nodes": [_node_dict(n) for n in self.nodes],
            "outputs": list(self.outputs),
        }
        if self.points is not None:
            d["points"] = [p.tolist() for p in self.points]
        if self.cotangent is not None:
            d["cotangent"] = [_to_json_value(c) for c in self.cotangent]
        if self.meta:
            d["meta"] = self.meta
        return d

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Graph:
        """Parse a dict made by `to_dict`; GraphFormatError names the first problem found."""
        if not isinstance(d, Mapping):
            raise GraphFormatError(f"expected a JSON object, got {type(d).__name__}")
        if d.get("format") != FORMAT:
            raise GraphFormatError(f"'format' must be {FORMAT!r}, got {d.get('format')!r}")
        if d.get("version") not in READABLE_VERSIONS:
            raise GraphFormatError(
                f"unsupported version {d.get('version')!r}; this reader knows {list(READABLE_VERSIONS)}"
            )
        for key in ("inputs", "nodes", "outputs"):
            if not isinstance(d.get(key), list):
                raise GraphFormatError(f"'{key}' must be a list, got {type(d.get(key)).__name__}")
        try:
            inputs = []
            for k, i in enumerate(d["inputs"]):
                shape = tuple(int(s) for s in i.get("shape", []))
                inputs.append(Input(str(i.get("name", f"x{k}")), _from_json_value(i["value"], shape), shape))
            nodes = [_node_from_dict(n) for n in d["nodes"]]
            points = None
            if d.get("points") is not None:
                points = [np.asarray(p, dtype=np.float64) for p in d["points"]]
            cot = d.get("cotangent")
            cotangent = None if cot is None else [_from_json_value(c, None) for c in cot]
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise GraphFormatError(f"malformed graph entry: {type(e).__name__}: {e}") from e
        graph = cls(inputs, nodes, list(d["outputs"]), points, cotangent, dict(d.get("meta", {})))
        graph.validate()
        return graph

    @classmethod
    def from_json(cls, text: str) -> Graph:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise GraphFormatError(f"not valid JSON: {e}") from e
        return cls.from_dict(data)

    # --- snippets --------------------------------------------------------------------------------

    def to_python(self, target: str = "minigrad", spelled: SpelledCodes | None = None) -> str:
        """A self-contained Python snippet computing this graph and its gradients with `target`.

        target: 'minigrad' (Value, or Tensor for tensor graphs) or 'torch' (float64). Paste it into
        a bug report: it prints the outputs and the gradient of each input. `spelled`: the code of
        each spelling a node may record (`graphs.spellings`), by its op and name; a node in another is
        written in the registry's.
        """
        if target not in ("minigrad", "torch"):
            raise ValueError(f"to_python: target must be 'minigrad' or 'torch', got {target!r}")
        tensor = self.is_tensor
        lines: list[str] = []
        if target == "torch":
            lines += ["import torch", ""]
            leaf = lambda v: f"torch.tensor({literal(v)}, dtype=torch.float64, requires_grad=True)"
        elif tensor:
            lines += ["import minigrad", "import minigrad.functional", "from minigrad import Tensor", ""]
            leaf = lambda v: f"Tensor({literal(v)}, requires_grad=True, dtype=minigrad.float64)"
        else:
            lines += ["import minigrad", "from minigrad import Value", ""]
            leaf = lambda v: f"Value({literal(v)})"
        for inp in self.inputs:
            lines.append(f"{inp.name} = {leaf(inp.value)}")
        for i, node in enumerate(self.nodes):
            spec = REGISTRY[node.op]
            args = node.operands([self.name_of(k) for k in range(self.n_inputs + i)], constant_code(target))
            write = (spelled or {}).get((node.op, dict(node.attrs).get(SPELLING)))
            code = spec.snippet(args, node.attr, target) if write is None else write(args, node.attr)
            lines.append(f"v{self.n_inputs + i} = {code}")
            if write is not None and "np." in code and "import numpy as np" not in lines:
                lines.insert(0, "import numpy as np")
        outs = ", ".join(self.name_of(o) for o in self.outputs)
        names = ", ".join(inp.name for inp in self.inputs)
        lines.append(f"outputs = [{outs}]")
        lines.append(f"inputs = [{names}]")
        if self.cotangent is not None:
            if target == "torch":
                cot = ", ".join(f"torch.tensor({literal(c)}, dtype=torch.float64)" for c in self.cotangent)
            elif tensor:
                cot = ", ".join(f"Tensor({literal(c)}, dtype=minigrad.float64)" for c in self.cotangent)
            else:
                cot = ", ".join(literal(c) for c in self.cotangent)
            lines.append(f"cotangent = [{cot}]")
        else:
            ones = (
                "torch.ones_like(o)" if target == "torch" else ("minigrad.ones_like(o)" if tensor else "1.0")
            )
            lines.append(f"cotangent = [{ones} for o in outputs]")
        module = "torch.autograd" if target == "torch" else "minigrad"
        lines.append(f"grads = {module}.grad(outputs, inputs, cotangent, allow_unused=True)")
        lines.append('print("outputs:", outputs)')
        lines.append('print("grads:", grads)')
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_python("minigrad")


# registry tensor-op membership without importing the registry at module import time
def op_is_tensor(op: str) -> bool:
    spec = REGISTRY.get(op)
    return spec is not None and spec.tensor_only


def _node_dict(n: OpNode) -> dict[str, Any]:
    d: dict[str, Any] = {
        "op": n.op,
        "args": list(n.args),
        "attrs": {k: _to_json_value(v) for k, v in n.attrs},
    }
    if n.consts:
        d["consts"] = [c.to_dict() for c in n.consts]
    return d


def _node_from_dict(n: Mapping[str, Any]) -> OpNode:
    consts = []
    for c in n.get("consts", []):
        value = c["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"constant {value!r} of op {n['op']!r} is not a number")
        consts.append(Constant(int(c["at"]), float(value), bool(c.get("tensor", False))))
    attrs = tuple(sorted(dict(n.get("attrs", {})).items()))
    return OpNode(str(n["op"]), tuple(n["args"]), attrs, tuple(sorted(consts, key=lambda c: c.at)))


def constant_code(target: str) -> Callable[[Constant], str]:
    """How a snippet spells a constant operand: a float literal (parenthesised when negative, so
    `(-1.0) ** x` keeps its meaning), or a 0-d float64 tensor."""

    def code(c: Constant) -> str:
        if c.tensor:
            if target == "torch":
                return f"torch.tensor({literal(c.value)}, dtype=torch.float64)"
            return f"Tensor({literal(c.value)}, dtype=minigrad.float64)"
        text = literal(c.value)
        return f"({text})" if text.startswith("-") else text

    return code


def _scalar_or_array(x: np.ndarray) -> Any:
    return float(x) if np.ndim(x) == 0 else np.array(x, dtype=np.float64)


def _to_json_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, tuple):
        return list(v)
    return v


NONFINITE_SPELLINGS = ("inf", "-inf", "nan")


def _from_json_value(v: Any, shape: tuple[int, ...] | None) -> Any:
    if isinstance(v, list):
        arr = np.asarray(v, dtype=np.float64)
        if shape is not None and arr.shape != shape:
            raise ValueError(f"value of shape {arr.shape} does not match declared shape {shape}")
        return arr
    if shape:
        raise ValueError(f"scalar value {v!r} given for declared shape {shape}")
    if v in NONFINITE_SPELLINGS:  # strict JSON (a report) spells inf and nan as strings
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"value {v!r} is not a number")
    return float(v)


def literal(v: Any) -> str:
    """`v` as Python source that evaluates back to it: `float('inf')` and `float('nan')` for the
    non-finite, a list for an array."""
    if isinstance(v, np.ndarray):
        return repr(v.tolist()).replace("inf", "float('inf')").replace("nan", "float('nan')")
    if isinstance(v, (int, float, np.floating)):
        x = float(v)
        return repr(x) if np.isfinite(x) else f"float('{x!r}')"
    return repr(v)
