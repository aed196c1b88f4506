"""An adapter built by inspecting a micrograd-style value class: `--engine engine.py:Value` with
nothing written.

The class must make a value from a float (`Value(0.7)`), keep the number in `data` (or `value`,
`val`) and its gradient in `grad`, and differentiate by `backward()`. Each scalar op of the
registry is tried once at a normal point (0.7 and 1.3: positive, off every kink and pole) in the
class's spelling: operators and their reflected forms (`2.0 / x`), `**` with a number and with a
value exponent, unary `-`, and the methods the registry's templates name (`x.tanh()`,
`x.atan2(y)`; `abs(x)` too).
An op is left out only when the class lacks it or refuses its operand types (TypeError,
AttributeError, NotImplementedError, or an `assert isinstance` as micrograd's `__pow__` has); an
op that gives a wrong number or raises anything else is kept, so the campaign checks it and
reports it. A number the class refuses on one side of an operator is passed as a value
(`Value(2.0) / x`), and the report says so.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Raised
from gradcheck.engines.snippets import torch_beside, value_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS
from gradcheck.graphs.surface import CURRENT, LATEST
from gradcheck.launcher import command_line

HELD_PREFIX = "object:"  # `gradcheck.engines.loading.spec_of`'s objects (loading imports this module)

# The point every op is tried at: positive, away from every kink and pole of the registry's ops.
SAMPLE = (0.7, 1.3)
# The constant tried on either side of an operator.
NUMBER = 2.0
# What a class raises for an op it does not have or operand types it refuses.
UNSUPPORTED = (TypeError, AttributeError, NotImplementedError, AssertionError)

# op -> (operator symbol, its function, the reflected method that takes a number on the left)
BINARY_OPERATORS: dict[str, tuple[str, Callable[[Any, Any], Any], str]] = {
    "add": ("+", operator.add, "__radd__"),
    "sub": ("-", operator.sub, "__rsub__"),
    "mul": ("*", operator.mul, "__rmul__"),
    "div": ("/", operator.truediv, "__rtruediv__"),
    "pow": ("**", operator.pow, "__rpow__"),
}
# the method behind each operator op
OPERATOR_METHODS = {
    "add": "__add__",
    "sub": "__sub__",
    "mul": "__mul__",
    "div": "__truediv__",
    "pow": "__pow__",
    "pow_const": "__pow__",
    "neg": "__neg__",
}
# where a value class may keep its number, in the order they are looked for
DATA_NAMES = ("data", "value", "val")
# a registry template that spells its op as a method of the first operand: `{0}.tanh()`, `{0}.atan2({1})`
METHOD_TEMPLATE = re.compile(r"\{0\}\.(\w+)\((?:\{1\})?\)")
# op -> the method that computes it (matched ignoring case), for each op the registry spells so
METHOD_OPS: dict[str, str] = {
    op: spelled.group(1) for op in SCALAR_OPS if (spelled := METHOD_TEMPLATE.fullmatch(REGISTRY[op].template))
}


@dataclass(frozen=True)
class RefusedNumber:
    """A number the class refuses on one side of an operator it defines (`2.0 / x` without
    `__rtruediv__`): the op, the side (0: left), the code tried and the exception's record. The
    campaign passes such numbers as values of the class and reports the refusal once."""

    op: str
    side: int
    code: str
    raised: Raised
    missing: str | None = None  # the reflected method the class lacks, when that is why


@dataclass(frozen=True)
class Spelling:
    """How the class writes one registry op. `form` is 'operator' (`symbol` between or before the
    operands), 'method' (`x.name(...)`) or 'builtin' (`abs(x)`); `as_value` holds the operand
    positions where a number must be passed as a value of the class."""

    op: str
    form: str
    name: str
    as_value: tuple[int, ...] = ()

    def template(self) -> str:
        """The spelling as a snippet template (`{0} / {1}`, `{0}.tanh()`, `{0} ** {exponent}`)."""
        if self.op == "pow_const":
            return "{0} ** {exponent}"
        if self.form == "method":
            rest = "".join(f", {{{i}}}" for i in range(1, REGISTRY[self.op].arity))
            return f"{{0}}.{self.name}({rest[2:]})"
        if self.form == "builtin":
            return f"{self.name}({{0}})"
        return f"{self.name}{{0}}" if REGISTRY[self.op].arity == 1 else f"{{0}} {self.name} {{1}}"


def not_a_value_class(cls: type) -> str | None:
    """Why `cls` cannot be driven as a micrograd-style value class (None: it can)."""
    try:
        x, y = cls(SAMPLE[0]), cls(SAMPLE[1])
    except Exception as e:
        return f"{cls.__name__}({SAMPLE[0]}) raised {type(e).__name__}: {e}"
    if data_attribute(cls) is None:
        return f"its values keep {SAMPLE[0]} in none of the attributes {', '.join(DATA_NAMES)}"
    if not hasattr(x, "grad"):
        return "its values have no `grad` attribute"
    if not callable(getattr(x, "backward", None)):
        return "its values have no backward() method"
    for symbol, function in (("+", operator.add), ("*", operator.mul)):
        try:
            function(x, y)
        except UNSUPPORTED as e:
            return f"x {symbol} y raised {type(e).__name__}: {e}"
    return None


def data_attribute(cls: type) -> str | None:
    """The attribute in which the class's values keep their number (`data`, or `value`, `val`)."""
    x = cls(SAMPLE[0])
    for name in DATA_NAMES:
        held = getattr(x, name, None)
        if isinstance(held, (int, float)) and held == SAMPLE[0]:
            return name
    return None


class ValueClassAdapter(EngineAdapter):
    """The adapter built for a value class: the ops `inspect_class` found, in the class's spelling."""

    registry_release = LATEST  # built by inspecting the class with this registry's spellings
    ops_tried_at_load = True  # `inspect_class` ran each op at the sample point

    def __init__(self, value_class: type, spec: str) -> None:
        self.value_class = value_class
        self.spec = spec
        self.name = spec
        self.value_names = value_class.__name__
        self.data = data_attribute(value_class) or "data"
        self.refused_numbers: list[RefusedNumber] = []
        self.spellings, self.left_out, self.notes = inspect_class(value_class, self.refused_numbers)
        self.ops = frozenset(self.spellings)
        self.children = _children_attribute(value_class)

    def leaf(self, value: Any) -> Any:
        return self.value_class(float(value))

    def value(self, node: Any) -> Any:
        return getattr(node, self.data)

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        spelling = self.spellings[op]
        operands = [
            self.value_class(a) if i in spelling.as_value and isinstance(a, float) else a
            for i, a in enumerate(args)
        ]
        return call(spelling, operands, attrs)

    def weighted(self, output: Any, cotangent: Any) -> Any:
        """`output * c`, with c a value of the class when the class refuses numbers on the right."""
        c = float(cotangent)
        return output * (self.value_class(c) if 1 in self.spellings.get("mul", _PLAIN_MUL).as_value else c)

    # --- checking any function of the class's values (gradcheck) ---------------------------------

    def is_node(self, obj: Any) -> bool:
        return isinstance(obj, self.value_class)

    def like(self, template: Any, array: Any, requires_grad: bool = False) -> Any:
        return self.value_class(float(array))

    def grad(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        create_graph: bool = False,
    ) -> list[Any]:
        """`gradients` (one backward()), every node's `grad` zeroed before and restored after (the
        checker differentiates the same graph many times; the class accumulates)."""
        if create_graph:
            raise NotImplementedError(f"engine {self.name!r} does not support second derivatives")
        nodes = self._graph_nodes([*outputs, *inputs])
        saved = [node.grad for node in nodes]
        for node in nodes:
            node.grad = 0.0
        try:
            return [float(g) for g in self.gradients(outputs, inputs, cotangent)]
        finally:
            for node, g in zip(nodes, saved):
                node.grad = g

    def _graph_nodes(self, roots: Sequence[Any]) -> list[Any]:
        """Every value reachable from `roots` through the class's children attribute (only the
        roots when the class keeps none)."""
        seen: dict[int, Any] = {}
        stack = list(roots)
        while stack:
            node = stack.pop()
            if id(node) in seen or not self.is_node(node):
                continue
            seen[id(node)] = node
            if self.children:
                stack.extend(getattr(node, self.children, ()))
        return list(seen.values())

    def source(self, node: Any) -> str:
        return f"{self.value_class.__name__}({float(self.value(node))!r})"

    def source_imports(self, nodes: Sequence[Any]) -> list[str]:
        return import_lines(self.spec, self.value_class.__name__)

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        """torch's numbers on the graph, then the graph in the class's own spelling."""
        if second_order:
            return None
        templates = {op: s.template() for op, s in self.spellings.items()}
        as_value = {op: s.as_value for op, s in self.spellings.items()}
        cls = self.value_class.__name__
        code = value_snippet(graph, import_lines(self.spec, cls), cls, templates, as_value, self.data)
        return torch_beside(graph) + "\n" + code

    def written_snippet(self, graph: Graph) -> str:
        """`snippet` with every number written as a number (`2.0 / x0`), also where the class
        refuses it: the repro of a refused number."""
        templates = {op: s.template() for op, s in self.spellings.items()}
        cls = self.value_class.__name__
        code = value_snippet(graph, import_lines(self.spec, cls), cls, templates, {}, self.data)
        return torch_beside(graph) + "\n" + code

    def report(self) -> str:
        """What the inspection found, for the console: the ops kept and those left out, with why."""
        cls = self.value_class.__name__
        lines = [f"adapter built by inspecting {cls} ({self.spec}): {len(self.ops)} op(s) found"]
        found = [f"{op} ({_code(self.spellings[op], ['x', 'y'])})" for op in sorted(self.ops)]
        lines.append("  found: " + (", ".join(found) or "none"))
        lines += [f"  left out {op}: {why}" for op, why in self.left_out.items()]
        lines += [f"  note: {note}" for note in self.notes]
        if self.children is None:
            lines.append(
                "  note: no attribute holds a result's operands: gradcheck() resets only the inputs' grad"
            )
        return "\n".join(lines)


_PLAIN_MUL = Spelling("mul", "operator", "*")


def call(spelling: Spelling, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Apply `spelling` to engine operands (numbers already passed as values where needed)."""
    if spelling.op == "pow_const":
        return operands[0] ** attrs["exponent"]
    if spelling.form == "method":
        return getattr(operands[0], spelling.name)(*operands[1:])
    if spelling.form == "builtin":
        return abs(operands[0])
    if len(operands) == 1:
        return -operands[0]
    return BINARY_OPERATORS[spelling.op][1](operands[0], operands[1])


def inspect_class(
    cls: type, refused: list[RefusedNumber] | None = None
) -> tuple[dict[str, Spelling], dict[str, str], list[str]]:
    """The class's spelling of each registry scalar op it has, the ops left out with why, and
    notes (numbers passed as values; ops kept although they raised at the sample point); each
    number refused on one side of an operator is added to `refused`."""
    found: dict[str, Spelling] = {}
    left_out: dict[str, str] = {}
    notes: list[str] = []
    for op in SCALAR_OPS:
        candidate = _candidate(cls, op)
        if isinstance(candidate, str):
            left_out[op] = candidate
            continue
        why = _refused(cls, candidate, notes)
        if why is None:
            found[op] = _with_number_operands(cls, candidate, notes, refused)
        else:
            left_out[op] = why
    return found, left_out, notes


def _candidate(cls: type, op: str) -> Spelling | str:
    """The spelling to try for `op`, or why there is none."""
    if op in BINARY_OPERATORS:
        return Spelling(op, "operator", BINARY_OPERATORS[op][0])
    if op == "pow_const":
        return Spelling(op, "operator", "**")
    if op == "neg":
        return Spelling(op, "operator", "-")
    if op in METHOD_OPS:
        name = _method_named(cls, METHOD_OPS[op])
        if name is not None:
            return Spelling(op, "method", name)
        if op == "abs" and hasattr(cls, "__abs__"):
            return Spelling(op, "builtin", "abs")
        return f"no method {METHOD_OPS[op]}()"
    return f"not a spelling this inspection knows ({REGISTRY[op].template})"


def _method_named(cls: type, method: str) -> str | None:
    for name in dir(cls):
        if name.lower() == method.lower() and callable(getattr(cls, name, None)):
            return name
    return None


def _sample_operands(cls: type, spelling: Spelling) -> list[Any]:
    return [cls(v) for v in SAMPLE[: REGISTRY[spelling.op].arity]]


def _refused(cls: type, spelling: Spelling, notes: list[str]) -> str | None:
    """Why the class refuses `spelling` at the sample point (None: it takes it)."""
    operands = _sample_operands(cls, spelling)
    code = _code(spelling, ["x", "y"][: len(operands)])
    method = OPERATOR_METHODS.get(spelling.op)
    if spelling.form == "operator" and not hasattr(cls, method):
        return f"{method} missing: {code} not checked"
    try:
        out = call(spelling, operands, {"exponent": NUMBER})
    except UNSUPPORTED as e:
        return f"{code} raised {type(e).__name__}: {e}".rstrip(": ")
    except Exception as e:  # the op exists and fails at a normal point: a bug to report
        notes.append(f"{spelling.op}: {code} raised {type(e).__name__} at {SAMPLE[0]}; kept, to be checked")
        return None
    if not hasattr(out, "backward"):
        return f"{code} returned a {type(out).__name__}, not a value with backward(): no gradient to check"
    return None


def _with_number_operands(
    cls: type, spelling: Spelling, notes: list[str], refused: list[RefusedNumber] | None = None
) -> Spelling:
    """`spelling` with the sides where the class refuses a number (`2.0 / x`) marked `as_value`,
    each refusal added to `refused`."""
    if not REGISTRY[spelling.op].number_operands:
        return spelling
    as_value = []
    x = cls(SAMPLE[0])
    for side, operands in ((0, [NUMBER, x]), (1, [x, NUMBER])):
        try:
            call(spelling, operands, {})
        except UNSUPPORTED as e:
            as_value.append(side)
            code = _code(spelling, [repr(NUMBER), "x"] if side == 0 else ["x", repr(NUMBER)])
            reflected = BINARY_OPERATORS[spelling.op][2]
            missing = reflected if side == 0 and not hasattr(cls, reflected) else None
            cause = f"{reflected} missing" if missing else f"{code} raised {type(e).__name__}"
            notes.append(f"{cause}: {code} not checked; the constant is passed as {cls.__name__}({NUMBER!r})")
            if refused is not None:
                refused.append(RefusedNumber(spelling.op, side, code, Raised.of(e), missing))
        except Exception:
            pass  # it takes the number; a wrong result is for the campaign to find
    return Spelling(spelling.op, spelling.form, spelling.name, tuple(as_value))


def _code(spelling: Spelling, names: Sequence[str]) -> str:
    return spelling.template().format(*names, exponent=repr(NUMBER))


def _children_attribute(cls: type) -> str | None:
    """The attribute in which a result keeps its operands (micrograd's `_prev`), found by looking
    for the operands in a sum's attributes; None when there is none."""
    x, y = cls(SAMPLE[0]), cls(SAMPLE[1])
    z = x + y
    for name, held in sorted(vars(z).items()) if hasattr(z, "__dict__") else []:
        if isinstance(held, (set, frozenset, tuple, list)) and any(item is x for item in held):
            return name
    return None


def import_lines(spec: str, cls_name: str) -> list[str]:
    """The lines that import the class named by `spec` ('module:Class' or '/path/file.py:Class'),
    or for a class of `__main__` (a notebook's cell) a comment: it is defined where it is checked."""
    where = spec.rpartition(":")[0]
    if where == "__main__" or spec.startswith(HELD_PREFIX):  # a notebook's class: already defined there
        return [f"# {cls_name}: your class, as defined where you checked it"]
    if not where.endswith(".py"):
        return [f"from {where} import {cls_name}"]
    folder, _, file = where.rpartition("/")
    return ["import sys", "", f"sys.path.insert(0, {folder or '.'!r})", f"from {file[:-3]} import {cls_name}"]


def adapter_source(adapter: ValueClassAdapter, class_name: str) -> str:
    """The adapter `adapter` stands for, as a Python file a user can edit and load with
    `--engine FILE.py:class_name`: the class's import, each op's spelling, the numbers passed as
    values, and what the inspection left out and why."""
    cls = adapter.value_class.__name__
    operands = {"exponent": 'k["exponent"]'}
    spellings = [
        f"    {op!r}: lambda a, k: {adapter.spellings[op].template().format('a[0]', 'a[1]', **operands)},"
        for op in sorted(adapter.ops)
    ]
    numbers = {op: s.as_value for op, s in sorted(adapter.spellings.items()) if s.as_value}
    left_out = [f"    {op}: {why}" for op, why in adapter.left_out.items()]
    notes = [f"    {note}" for note in adapter.notes]
    lines = [
        f'"""Adapter for {cls} of {adapter.spec.rpartition(":")[0]},',
        "as `gradcheck run --print-adapter` built it by inspecting the class.",
        "Edit the spellings where your engine differs, then run",
        f"    {command_line('run', '--engine', f'THIS_FILE.py:{class_name}')}",
        "",
        "Left out (add them to SPELLINGS once the class has them):",
        *(left_out or ["    nothing"]),
        *(["", "Notes:", *notes] if notes else []),
        '"""',
        "",
        *import_lines(adapter.spec, cls),
        "",
        "from gradcheck.engines import EngineAdapter",
        "",
        "# registry op -> the op computed with the class, from its operands `a` and attributes `k`",
        "SPELLINGS = {",
        *spellings,
        "}",
        f"# registry op -> operand positions where a constant number is passed as {cls}(number)",
        f"NUMBERS_AS_VALUES = {numbers!r}",
        "",
        "",
        f"class {class_name}(EngineAdapter):",
        f'    """{cls} as an engine under test: the ops in SPELLINGS."""',
        "",
        f"    name = {class_name!r}",
        "    ops = frozenset(SPELLINGS)",
        f"    registry_release = {CURRENT}  # the op registry's forms these spellings were written for",
        "",
        "    def leaf(self, value):",
        f"        return {cls}(float(value))",
        "",
        "    def apply(self, op, args, attrs):",
        "        wrap = NUMBERS_AS_VALUES.get(op, ())",
        f"        args = [{cls}(a) if i in wrap and isinstance(a, float) else a for i, a in enumerate(args)]",
        "        return SPELLINGS[op](args, attrs)",
    ]
    if adapter.data != "data":
        lines += ["", "    def value(self, node):", f"        return node.{adapter.data}"]
    if 1 in numbers.get("mul", ()):
        lines += [
            "",
            "    def weighted(self, output, cotangent):",
            "        # the class refuses a number on the right of *",
            f"        return output * {cls}(float(cotangent))",
        ]
    return "\n".join(lines) + "\n"
