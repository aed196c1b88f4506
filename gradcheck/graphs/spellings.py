"""Spellings: the other ways an engine's users write an op, each a variant of its own.

A library often has several names for one op (`np.abs` and `np.absolute`, `x ** y` and
`np.power`) and several argument types it takes (`x ** 2.0`, `x ** 2`, `x ** np.array(2)`); each
can reach its own derivative rule, so a bug in one is invisible through the others. An adapter
lists them (`spellings`, a tuple of `Spelling`); the generator draws each node of a listed op in
its default spelling or one of them, the node records the choice in its `spelling` attribute
(kept through JSON and the shrinker), the adapter applies it, and a finding's title names it
("abs as np.absolute"). A spelling of `integer_exponent` is drawn only where the exponent has
an integer value (pow_const's attribute, pow's constant exponent), which its rule passes as an
integer: judged against the same exact value as the float exponent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gradcheck.graphs.ir import SPELLING, OpNode, SpelledCode

# The ops whose exponent an `integer_exponent` spelling passes as an integer.
EXPONENT_OPS = frozenset({"pow_const", "pow"})


@dataclass(frozen=True)
class Spelling:
    """Another way to write `op`: `name` as a title says it ("np.absolute"), and `rule`, the op so
    written: (operands, attrs) for an object-style adapter, (xp, operands, attrs) for a
    function-style one. `integer_exponent`: drawn only for an integer-valued exponent (the rule
    makes it an int, an integer array or tensor). `differs_at_nan`: it gives another answer
    where an operand is nan (jnp.fmax), so no edge case with a nan operand is checked in it.
    `code`: the spelling as the engine's code on its operands' code, for a repro in the engine's
    own terms (`Graph.to_python`); None where the repro runs the graph through the adapter."""

    op: str
    name: str
    rule: Callable[..., Any]
    integer_exponent: bool = False
    differs_at_nan: bool = False
    code: SpelledCode | None = None

    @property
    def form(self) -> Form:
        return Form(self.op, self.name, self.integer_exponent, self.differs_at_nan)


@dataclass(frozen=True)
class Form:
    """What the generator knows of a spelling (no rule: it travels to processes without the
    engine): its op, its name, whether it needs an integer exponent and differs at nan."""

    op: str
    name: str
    integer_exponent: bool = False
    differs_at_nan: bool = False


Forms = Mapping[str, tuple[Form, ...]]  # op -> the forms a node of it may be drawn in


def array_module_spellings(module: str) -> tuple[Spelling, ...]:
    """The spellings every numpy-like module documents (`module`: "np", "jnp"), as a function-style
    adapter writes them with its `xp`: `{module}.absolute`, `{module}.power` for pow and pow_const,
    and pow_const's exponent as a Python int and as an integer array."""
    return (
        Spelling("abs", f"{module}.absolute", lambda xp, a, k: xp.absolute(a[0])),
        Spelling("pow", f"{module}.power", lambda xp, a, k: xp.power(a[0], a[1])),
        Spelling("pow_const", f"{module}.power", lambda xp, a, k: xp.power(a[0], k["exponent"])),
        Spelling("pow_const", "x ** int", lambda xp, a, k: a[0] ** int(k["exponent"]), integer_exponent=True),
        Spelling(
            "pow_const",
            "x ** int array",
            lambda xp, a, k: a[0] ** xp.asarray(int(k["exponent"])),
            integer_exponent=True,
        ),
    )


# The methods that spell ops: a subclass overriding one spells them its own way.
_SPELLING_METHODS = ("apply", "op")


def adapter_spellings(adapter: Any) -> tuple[Spelling, ...]:
    """The spellings an adapter lists (`spellings`); ValueError for a repeated name or an entry
    that is no `Spelling`. A subclass that spells ops its own way (its own `apply`, or `op` for
    a function-style adapter) lists its own: its base's spellings would bypass its spelling."""
    listed = tuple(getattr(adapter, "spellings", ()) or ())
    for cls in type(adapter).__mro__:
        if "spellings" in vars(cls):
            break
        if any(m in vars(cls) for m in _SPELLING_METHODS):
            return ()
    seen: set[tuple[str, str]] = set()
    for s in listed:
        if not isinstance(s, Spelling):
            raise ValueError(
                f"adapter {type(adapter).__name__}: spellings must be Spelling entries, got {s!r}"
            )
        if (s.op, s.name) in seen:
            raise ValueError(
                f"adapter {type(adapter).__name__} lists the spelling {s.name!r} of {s.op} twice"
            )
        if s.integer_exponent and s.op not in EXPONENT_OPS:
            raise ValueError(
                f"adapter {type(adapter).__name__}: spelling {s.name!r} of {s.op} has integer_exponent, "
                f"which only {sorted(EXPONENT_OPS)} have"
            )
        seen.add((s.op, s.name))
    return listed


def forms_of(spellings: Iterable[Spelling], ops: Iterable[str]) -> dict[str, tuple[Form, ...]]:
    """op -> the forms of its spellings, for the ops among `ops` (what a campaign draws)."""
    ops = set(ops)
    forms: dict[str, tuple[Form, ...]] = {}
    for s in spellings:
        if s.op in ops:
            forms[s.op] = (*forms.get(s.op, ()), s.form)
    return forms


def rule_of(spellings: Iterable[Spelling], op: str, name: str) -> Spelling:
    """The spelling `name` of `op`; KeyError naming the ones listed when the adapter has none."""
    for s in spellings:
        if s.op == op and s.name == name:
            return s
    listed = [s.name for s in spellings if s.op == op]
    raise KeyError(f"the adapter lists no spelling {name!r} of {op}; it lists {listed}")


def spelling_of(node: OpNode) -> str | None:
    """The spelling a node records (None: the default)."""
    for key, value in node.attrs:
        if key == SPELLING:
            return str(value)
    return None


def integer_exponent(node: OpNode) -> bool:
    """Whether a node's exponent is a number of integer value: pow_const's attribute, or pow's
    constant on the right."""
    if node.op == "pow_const":
        return float(node.attr.get("exponent", 0.5)).is_integer()
    if node.op == "pow":
        return any(c.at == 1 and float(c.value).is_integer() for c in node.consts)
    return False


def applicable(forms: Iterable[Form], node: OpNode) -> list[Form]:
    """The forms `node` may be drawn in (an integer exponent's only where it has one)."""
    return [f for f in forms if f.op == node.op and (not f.integer_exponent or integer_exponent(node))]


def spelled(node: OpNode, form: Form | None) -> OpNode:
    """`node` in `form` (None: as it is, the default spelling)."""
    if form is None:
        return node
    attrs = tuple(sorted((*((k, v) for k, v in node.attrs if k != SPELLING), (SPELLING, form.name))))
    return OpNode(node.op, node.args, attrs, node.consts)


def unspelled(node: OpNode) -> OpNode:
    """`node` in its op's default spelling."""
    if spelling_of(node) is None:
        return node
    return OpNode(node.op, node.args, tuple((k, v) for k, v in node.attrs if k != SPELLING), node.consts)


def draw_form(chooser: Any, forms: Forms | None, node: OpNode) -> OpNode:
    """`node` in its default spelling (choice 0, where shrinking goes) or one of its forms; no
    draw at all for an op without forms (the graphs of an adapter listing none stay the same)."""
    if not forms or node.op not in forms:
        return node
    options = applicable(forms[node.op], node)
    if not options:
        return node
    k = chooser.integer(0, len(options))
    return spelled(node, options[k - 1] if k else None)


def spelled_code(adapter: Any) -> dict[tuple[str, str], SpelledCode]:
    """The code of each spelling `adapter` lists that has one, by its op and name (`Graph.to_python`)."""
    return {(s.op, s.name): s.code for s in adapter_spellings(adapter) if s.code is not None}
