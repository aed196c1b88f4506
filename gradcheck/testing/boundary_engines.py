"""Engines and adapters whose one problem sits where the adapter meets the engine.

- `ComplexPower`: a micrograd-style engine in Python numbers whose `**` gives a complex number for
  a negative base and a fractional exponent (Python's `(-2.0) ** 0.5`, where torch gives nan),
  read by an adapter whose `value()` calls `float()` on it: the TypeError is raised in the
  adapter's code, but the complex number is the engine's answer. Its power rule is micrograd's,
  `c * x ** (c - 1)`, so `x ** 0` at 0 raises ZeroDivisionError (a real bug of pow_const, where
  torch's gradient is 0);
- `KeepdimNotPassed`: minigrad's Tensor through an adapter that says it handles keepdim
  (`registry_release = 2`) but spells `sum` and `mean` without it: the engine is right, the
  outputs lack the reduced dims the graph keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.testing.structural_engines import Rule, Value


class FloatValue(Value):
    """structural_engines' correct Value (+ - * neg) holding whatever Python's arithmetic gives, a
    complex number included, with micrograd's `**` a number."""

    def __init__(self, data: Any, children: tuple[Value, ...] = (), rule: Rule | None = None) -> None:
        super().__init__(0.0, children, rule)
        self.data = data  # not float(data): a complex number stays one

    def __pow__(self, c: float) -> Value:
        """`self.data ** c` in Python: a complex number for a negative base and a fractional c; the
        derivative `c * x ** (c - 1)` raises ZeroDivisionError at x = 0 for c < 1 (c = 0 too)."""
        return self._make(self.data**c, (self,), lambda g: (g * c * self.data ** (c - 1),))


class ComplexPower(EngineAdapter):
    """`FloatValue`, read back with `float()` as a hand-written adapter might."""

    name = "complex-power"
    ops = frozenset({"add", "sub", "mul", "neg", "pow_const"})

    def leaf(self, value: Any) -> FloatValue:
        return FloatValue(float(value))

    def value(self, node: Value) -> float:
        return float(node.data)


class KeepdimNotPassed(MinigradTensor):
    """minigrad's Tensor; the adapter handles release 2's variants but drops `keepdim` from sum and
    mean (first order only)."""

    name = "keepdim-not-passed"
    registry_release = 2
    create_graph = False

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op in ("sum", "mean"):
            return getattr(args[0], op)(attrs["dims"])
        return super().apply(op, args, attrs)
