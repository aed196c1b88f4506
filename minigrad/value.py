"""`Value`: a scalar that remembers how it was computed, micrograd's API with torch's semantics."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minigrad import autograd, value_backward
from minigrad import elementwise as rules
from minigrad import floatmath as fm
from minigrad import scalar_ops as ops
from minigrad.grad_mode import switches
from minigrad.op import ScalarOp

Number = int | float


def _check_number(data: Any, where: str) -> float:
    """`data` as a float: any real number (int, float, numpy scalars), never a boolean."""
    if type(data) is float:
        return data
    if isinstance(data, numbers.Real) and not isinstance(data, (bool, np.bool_)):
        return fm.as_float(data, where)
    is_bool = isinstance(data, (bool, np.bool_))
    raise TypeError(
        f"{where} expects a real number (int or float), got {type(data).__name__} {data!r}"
        + ("; use 1.0 or 0.0 for a boolean" if is_bool else "")
    )


def _binary_method(
    rule: Any, doc: str | None = None, with_number: Any = None
) -> Callable[[Value, Value | Number], Value]:
    """Value's method for the two-input `rule`: `self <op> other`.

    With another Value the node is made right here, without a call to `_record`: it is the engine's
    hottest path, and that call was about a sixth of the forward pass of micrograd's demo network
    (docs/performance.md). With a number, the number is the op's constant, for `with_number`'s
    rule if given (x ** 2 is not the `Pow` of two inputs).
    """
    forward, number_rule = rule.forward, with_number or rule

    def method(self: Value, other: Value | Number) -> Value:
        if not isinstance(other, Value):
            return _with_number(number_rule, self, other)
        out = _new_value(Value)
        out.data = forward(self.data, other.data)
        out.grad = 0.0
        out._g = None
        out._a, out._b, out._rule = self, other, rule
        if switches.unusual:
            _apply_switches(out)
        return out

    method.__name__ = method.__qualname__ = rule.name
    method.__doc__ = doc or f"self {rule.symbol} other (torch.{rule.name}); other a Value or a number."
    return method


def _unary_method(rule: Any) -> Callable[[Value], Value]:
    """Value's method for the one-input `rule`. A Value's data is a float, so a forward that
    dispatches on its argument's type (`elementary`) is called at its float implementation."""
    forward = getattr(rule.forward, "on_float", rule.forward)

    def method(self: Value) -> Value:
        return _record(rule, forward(self.data), self)

    method.__name__ = method.__qualname__ = rule.name
    method.__doc__ = f"torch.{rule.name} of this Value."
    return method


class Value:
    """A scalar node: `data` (float), `grad` (float) and the op and operands that produced it.

    Every Value takes part in differentiation, as in micrograd. Numbers mixed into an expression
    (the 2 in `x * 2`) are constants stored with the op: they never receive or leak gradients.

    An op's operands sit in the slots `_a` and `_b` rather than in a tuple (one object per node
    instead of two halves the work of Python's garbage collector while a graph grows); an operand
    is another Value or a constant float. micrograd's constructor `Value(data, (a, b), '+')` makes
    a node whose `_backward` closure, set by the caller, is its derivative rule (see `ClosureOp`).
    """

    __slots__ = ("data", "grad", "_a", "_b", "_rule", "_g", "_label")

    def __init__(self, data: Number, _children: Sequence[Value] = (), _op: str = "", label: str = "") -> None:
        self.data = _check_number(data, "Value()")
        self.grad = 0.0
        self._a: Value | float | None = None
        self._b: Value | float | None = None
        self._rule: Any = ClosureOp(_children, _op) if _children or _op else None
        self._g: Any = None
        if label:
            self.label = label

    @property
    def label(self) -> str:
        """A name for this node, shown by `draw_graph` ('' unless set)."""
        try:
            return self._label
        except AttributeError:
            return ""

    @label.setter
    def label(self, text: str) -> None:
        self._label = str(text)

    @property
    def _prev(self) -> tuple[Value, ...]:
        """The Values this one was computed from (none for a leaf), as the autograd core reads them."""
        a, b = self._a, self._b
        if b is None:
            if a is not None:
                return (a,)  # type: ignore[return-value]
            rule = self._rule
            return rule.children if type(rule) is ClosureOp else ()
        if type(b) is float:
            return (a,)  # type: ignore[return-value]
        if type(a) is float:
            return (b,)  # type: ignore[return-value]
        return (a, b)  # type: ignore[return-value]

    _parents = _prev  # the spelling of micrograd's lessons

    @property
    def _const(self) -> float | None:
        """The op's constant operand (the 2 in `x * 2`), or None."""
        for operand in (self._a, self._b):
            if type(operand) is float:
                return operand
        return None

    @property
    def _op(self) -> str:
        """The name of the op that produced this Value ('' for a leaf), as in micrograd."""
        rule = self._rule
        if rule is None:
            return ""
        return getattr(rule, "symbol", None) or rule.name

    @property
    def _backward(self) -> Callable[[], None]:
        """micrograd's per-node step: add `grad` times the local derivatives into the inputs' `.grad`."""
        rule = self._rule
        if type(rule) is ClosureOp:
            return rule.closure
        return self._backward_step

    @_backward.setter
    def _backward(self, closure: Callable[[], None]) -> None:
        rule = self._rule
        if type(rule) is not ClosureOp:
            if rule is not None or self._a is not None:
                raise AttributeError(
                    f"_backward: {self!r} was made by minigrad's op '{self._op}', whose derivative rule is "
                    "fixed; set _backward only on a Value made as Value(data, children, op)"
                )
            rule = self._rule = ClosureOp((), "")
        rule.closure = closure

    def _backward_step(self) -> None:
        if self._prev:
            for parent, grad in zip(self._prev, self._local_grads(self.grad, False)):
                parent.grad += grad

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    def __float__(self) -> float:
        return self.data

    def item(self) -> float:
        """The data as a Python float (torch's spelling)."""
        return self.data

    # --- arithmetic: Value with Value, or Value with a number ------------------------------------

    __add__ = __radd__ = _binary_method(rules.Add)
    __sub__ = _binary_method(rules.Sub)
    __mul__ = __rmul__ = _binary_method(rules.Mul)
    __truediv__ = _binary_method(rules.Div)
    __pow__ = _binary_method(rules.Pow, with_number=ops.PowConst)  # x ** 2 is torch's pow(x, 2)
    atan2 = _binary_method(rules.Atan2, "The angle of the point (other, self): torch.atan2(self, other).")

    def __rsub__(self, other: Number) -> Value:
        return _number_with(rules.Sub, other, self)

    def __rtruediv__(self, other: Number) -> Value:
        return _number_with(rules.Div, other, self)

    def __rpow__(self, other: Number) -> Value:
        return _with_number(ops.RPowConst, self, other)  # c ** x: the Value is RPowConst's input

    __neg__ = _unary_method(rules.Neg)

    def __abs__(self) -> Value:
        return self.abs()

    # --- elementary functions ------------------------------------------------------------------

    relu = _unary_method(rules.ReLU)
    tanh = _unary_method(rules.Tanh)
    sigmoid = _unary_method(rules.Sigmoid)
    exp = _unary_method(rules.Exp)
    log = _unary_method(rules.Log)
    sin = _unary_method(rules.Sin)
    cos = _unary_method(rules.Cos)
    sqrt = _unary_method(rules.Sqrt)
    abs = _unary_method(rules.Abs)
    atan = _unary_method(rules.Atan)

    # --- autograd ------------------------------------------------------------------------------

    def backward(self, gradient: Value | Number | None = None) -> None:
        """Add d(self)/d(node) into `.grad` of every node self depends on (seed 1.0 by default).

        The graph is kept: calling backward again adds the same gradients once more, like torch
        with `retain_graph=True`. Use `Module.zero_grad()` or set `.grad = 0.0` to start over.
        """
        autograd.backward([self], [gradient])

    def _local_grads(self, g: Any, create_graph: bool) -> Sequence[Any]:
        # The core asks only nodes that have inputs. Operands go to the rule as floats (or, under
        # create_graph, as Values), constants as floats; only the Value operands' gradients are kept.
        rule, a, b = self._rule, self._a, self._b
        if a is None:
            return rule.local_grads(self, g, create_graph)
        if create_graph and not switches.unusual:  # grad mode on, no anomaly detection: nothing to switch
            return _call_rule(rule, g, self, a, b, a, b)
        if create_graph:
            # A nan made inside the rule is reported below as this node's backward, not as a forward op.
            anomaly, switches.anomaly_enabled = switches.anomaly_enabled, False
            try:
                grads = _call_rule(rule, g, self, a, b, a, b)
            finally:
                switches.anomaly_enabled = anomaly
        else:
            grads = _call_rule(rule, g, self.data, a, b, _data(a), _data(b))
        if switches.anomaly_enabled:
            _check_backward_anomaly(self, g, grads)
        return grads

    # the core's two walks, specialised for scalar graphs
    _topological_order = staticmethod(value_backward.topological_order)
    _propagate = staticmethod(value_backward.propagate_floats)

    @staticmethod
    def _accumulate_grads(order: list[Any]) -> None:
        for node in order:
            g = node._g
            if g is not None:
                node.grad += g
                node._g = None

    def _seed(self, gradient: Any, create_graph: bool) -> Any:
        if gradient is None:
            seed = 1.0
        elif isinstance(gradient, Value):
            return gradient if create_graph else gradient.data
        else:
            seed = _check_number(gradient, "backward(gradient)")
        return Value(seed) if create_graph else seed

    def _export_grad(self, g: Any, create_graph: bool) -> Any:
        if create_graph and not isinstance(g, Value):
            return Value(g)
        return g

    def _zero_grad_like(self, create_graph: bool) -> Any:
        return Value(0.0) if create_graph else 0.0


class ClosureOp:
    """The op of a node made the micrograd way, `Value(data, children, op)` with a `_backward` closure.

    The closure adds `local derivative * out.grad` into each child's `.grad`. `backward()` runs it
    with `out.grad` set to this pass's gradient and the children's `.grad` set to zero, reads what
    it added, and restores them, so such nodes mix with minigrad's ops, reused nodes included.
    `grad()` and `create_graph` need a rule they can call on Values, which a closure is not.
    """

    __slots__ = ("children", "name", "closure")

    def __init__(self, children: Sequence[Value], op: str) -> None:
        for child in children:
            if not isinstance(child, Value):
                raise TypeError(
                    f"Value(data, children, op): children must be Values, got {type(child).__name__}"
                )
        self.children = tuple(dict.fromkeys(children))  # each child once, as micrograd's set
        self.name = str(op)
        self.closure: Callable[[], None] = _no_backward

    def local_grads(self, out: Value, g: Any, create_graph: bool) -> list[float]:
        if create_graph or not switches.closures_allowed:
            raise RuntimeError(
                f"grad: the op {self.name or '(unnamed)'!r} of {out!r} was made as Value(data, children, op) "
                "with a _backward closure, which only backward() can run; grad() and create_graph need a "
                "derivative rule: write the op as a ScalarOp and apply it with minigrad.apply_op"
            )
        saved_out, saved = out.grad, [child.grad for child in self.children]
        out.grad = g
        for child in self.children:
            child.grad = 0.0
        try:
            self.closure()
            return [child.grad for child in self.children]
        finally:
            out.grad = saved_out
            for child, grad in zip(self.children, saved):
                child.grad = grad


def _no_backward() -> None:
    """A leaf's `_backward`, as micrograd's: nothing to propagate."""


def _call_rule(rule: Any, g: Any, out: Any, a: Any, b: Any, x: Any, y: Any) -> Sequence[Any]:
    """The rule, called on (x, y), the operands (a, b) or their data; only the gradients of Value
    operands are kept (a constant operand is a float and gets none)."""
    if b is None:
        return rule.backward(g, out, x)
    if type(b) is float:
        return rule.backward(g, out, x, y)[:1]
    if type(a) is float:
        return rule.backward(g, out, x, y)[1:]
    return rule.backward(g, out, x, y)


def _data(x: Any) -> Any:
    return x if x is None or type(x) is float else x.data


_new_value = Value.__new__


def _const(other: Any, op: str) -> float | None:
    """A number operand as a float constant, or None when the operand is not a number."""
    if type(other) is float:
        return other
    if type(other) is bool or not isinstance(other, (int, float)):
        return None
    return fm.as_float(other, op)


def _with_number(rule: Any, value: Value, other: Any) -> Value:
    """value <op> other for a number `other`, a constant of the op."""
    c = _const(other, rule.symbol)
    if c is None:
        return NotImplemented
    return _record(rule, rule.forward(value.data, c), value, c)


def _number_with(rule: Any, other: Any, value: Value) -> Value:
    """other <op> value for a number `other`, a constant of the op."""
    c = _const(other, rule.symbol)
    if c is None:
        return NotImplemented
    return _record(rule, rule.forward(c, value.data), c, value)


def _record(rule: Any, data: float, a: Value | float, b: Value | float | None = None) -> Value:
    """A new Value holding `data`, remembering `rule` and its operands unless grad mode is off."""
    out = _new_value(Value)
    out.data = data
    out.grad = 0.0
    out._g = None
    out._a, out._b, out._rule = a, b, rule
    if switches.unusual:
        _apply_switches(out)
    return out


def _apply_switches(out: Value) -> None:
    """What the unusual switches do to a new node: anomaly detection checks its value, and with
    grad mode off it forgets its op and operands (it is a leaf)."""
    if switches.anomaly_enabled and out.data != out.data:
        _check_forward_anomaly(out._rule, out.data, out._a, out._b)
    if not switches.grad_enabled:
        out._a = out._b = out._rule = None


def apply_op(rule: type[ScalarOp], *inputs: Value | Number, const: float | None = None) -> Value:
    """Apply a custom `ScalarOp` to one or two Values: the way to add an op of your own to minigrad.

    Number inputs are wrapped as fresh leaf Values; `const`, if given, is passed last to both rules.
    """
    if not 1 <= len(inputs) <= 2:
        raise TypeError(f"apply_op({rule.__name__}): a scalar op takes 1 or 2 inputs, got {len(inputs)}")
    values = tuple(x if isinstance(x, Value) else Value(x) for x in inputs)
    if const is not None:
        const = fm.as_float(const, f"apply_op({rule.__name__})")
        if len(values) == 2:
            rule = _with_constant(rule, const)
        else:
            return _record(rule, float(rule.forward(values[0].data, const)), values[0], const)
    return _record(rule, float(rule.forward(*[v.data for v in values])), *values)


def _with_constant(rule: type[ScalarOp], const: float) -> type[ScalarOp]:
    """A two-input rule with `const` bound as its last argument (the node has no slot left for it)."""

    def forward(a: float, b: float) -> float:
        return rule.forward(a, b, const)

    def backward(g: Any, out: Any, a: Any, b: Any) -> tuple[Any, ...]:
        return rule.backward(g, out, a, b, const)

    return type(
        rule.__name__, (rule,), {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    )


def _describe(rule: Any, operands: Sequence[Any]) -> str:
    shown = ", ".join(
        f"constant {x!r}" if type(x) is float else repr(float(_value_of(x)))
        for x in operands
        if x is not None
    )
    return f"'{rule.__name__}' ({getattr(rule, 'symbol', None) or rule.name}) with inputs ({shown})"


def _value_of(x: Any) -> float:
    return x.data if isinstance(x, Value) else x


def _check_forward_anomaly(rule: Any, data: float, a: Any, b: Any) -> None:
    if any(math.isnan(_value_of(x)) for x in (a, b) if x is not None):
        return
    raise RuntimeError(f"detect_anomaly: forward of {_describe(rule, (a, b))} returned nan")


def _check_backward_anomaly(node: Value, g: Any, grads: Sequence[Any]) -> None:
    if math.isnan(_value_of(g)):
        return
    for index, grad in enumerate(grads):
        if math.isnan(_value_of(grad)):
            raise RuntimeError(
                f"detect_anomaly: backward of {_describe(node._rule, (node._a, node._b))} "
                f"returned nan in its gradient for input {index} (output gradient {_value_of(g)!r})"
            )
