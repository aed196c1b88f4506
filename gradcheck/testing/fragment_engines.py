"""Engines whose one bug once came out as many findings: each must give exactly one.

Each is `structural_engines.Value` (a correct micrograd-style engine with an iterative
topological order) with one thing changed:

- `InplaceAbsAdapter`: `abs` overwrites its input's data with |x| (and computes its own value and
  gradient right), so every other user of the input sees |x|: abs alone is right, and graphs that
  use a negative input elsewhere fail in ways no node shows alone (once 16+ one-graph findings);
- `IdOrderedBackwardAdapter`: backward visits the nodes by descending `id()` (memory addresses),
  not in topological order: right whenever the addresses happen to follow creation, wrong
  otherwise, so any graph fails on some builds (once a graph-code finding and one
  `op — nondeterministic` finding per op);
- `TanhOneMinusTAdapter`: tanh's derivative written `1 - t` instead of `1 - t**2`: 26% off at
  0.37, and barely outside the tolerance at tiny inputs, where it was once shown.
- `MulGradientOffAdapter`: mul's gradient 10% too large, the commonest planted mutant: the
  adapter once weighted every output with the engine's own mul, so the bug showed in every graph,
  as a bug of whichever op the graph ended in (once 10 findings on a 9-op engine).

`AbsAdapter` is the same engine with a correct abs: the clean twin a campaign's time on the buggy
ones is measured against (`benchmarks/bench_accounting.py`; `CorrectAdapter` for the others).
"""

from __future__ import annotations

import math
from typing import Any

from gradcheck.testing.structural_engines import CorrectAdapter, Value


class AbsValue(Value):
    def abs(self) -> Value:
        sign = 1.0 if self.data > 0 else -1.0 if self.data < 0 else 0.0
        return self._make(abs(self.data), (self,), lambda g: (g * sign,))


class InplaceAbsValue(Value):
    def abs(self) -> Value:
        sign = 1.0 if self.data > 0 else -1.0 if self.data < 0 else 0.0
        out = self._make(abs(self.data), (self,), lambda g: (g * sign,))
        self.data = abs(self.data)  # the bug: "no copy needed", the input is made positive in place
        return out


class IdOrderedBackwardValue(Value):
    def order(self) -> list[Value]:
        nodes, stack, seen = [], [self], set()
        while stack:
            node = stack.pop()
            if id(node) not in seen:
                seen.add(id(node))
                nodes.append(node)
                stack.extend(node._prev)
        return sorted(nodes, key=id)  # the bug: "a node is always created after its children"


class TanhOneMinusTValue(Value):
    def tanh(self) -> Value:
        t = math.tanh(self.data)
        return self._make(t, (self,), lambda g: (g * (1.0 - t),))  # the bug: 1 - t, not 1 - t**2


class MulGradientOffValue(Value):
    def __mul__(self, other: Any) -> Value:
        other = self._lift(other)
        return self._make(  # the bug: each partial 10% too large
            self.data * other.data, (self, other), lambda g: (1.1 * g * other.data, 1.1 * g * self.data)
        )


class AbsAdapter(CorrectAdapter):
    name = "abs"
    value_class = AbsValue
    ops = frozenset({"add", "sub", "mul", "neg", "tanh", "abs"})


class InplaceAbsAdapter(CorrectAdapter):
    name = "inplace-abs"
    value_class = InplaceAbsValue
    ops = frozenset({"add", "sub", "mul", "neg", "tanh", "abs"})


class IdOrderedBackwardAdapter(CorrectAdapter):
    name = "id-ordered-backward"
    value_class = IdOrderedBackwardValue


class TanhOneMinusTAdapter(CorrectAdapter):
    name = "tanh-one-minus-t"
    value_class = TanhOneMinusTValue


class MulGradientOffAdapter(CorrectAdapter):
    name = "mul-gradient-off"
    value_class = MulGradientOffValue
