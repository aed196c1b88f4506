"""A micrograd-style engine spelled differently: no `__rtruediv__` (so `2.0 / x` raises
TypeError), `**` only with a number exponent (a value exponent raises TypeError), a `sigmoid`
method, `relu` named `relu`, `zero_grad()` instead of assigning `grad`, and children kept in
`parents`. Test data: `--engine gradcheck/engines/tests/data/quirky_engine.py:Scalar`."""

import math


class Scalar:
    def __init__(self, data, parents=(), backward=None):
        self.data = float(data)
        self.grad = 0.0
        self.parents = tuple(parents)
        self._local = backward or (lambda g: ())

    def _wrap(self, other):
        return other if isinstance(other, Scalar) else Scalar(other)

    def __add__(self, other):
        other = self._wrap(other)
        return Scalar(self.data + other.data, (self, other), lambda g: (g, g))

    __radd__ = __add__

    def __mul__(self, other):
        other = self._wrap(other)
        return Scalar(self.data * other.data, (self, other), lambda g: (g * other.data, g * self.data))

    __rmul__ = __mul__

    def __sub__(self, other):
        other = self._wrap(other)
        return Scalar(self.data - other.data, (self, other), lambda g: (g, -g))

    def __rsub__(self, other):
        return self._wrap(other) - self

    def __truediv__(self, other):
        other = self._wrap(other)
        return Scalar(
            self.data / other.data, (self, other), lambda g: (g / other.data, -g * self.data / other.data**2)
        )

    def __neg__(self):
        return Scalar(-self.data, (self,), lambda g: (-g,))

    def __pow__(self, exponent):
        if not isinstance(exponent, (int, float)):
            raise TypeError(f"exponent must be a number, not {type(exponent).__name__}")
        return Scalar(self.data**exponent, (self,), lambda g: (g * exponent * self.data ** (exponent - 1),))

    def sigmoid(self):
        s = 1.0 / (1.0 + math.exp(-self.data))
        return Scalar(s, (self,), lambda g: (g * s * (1.0 - s),))

    def relu(self):
        return Scalar(max(self.data, 0.0), (self,), lambda g: (g * (self.data > 0),))

    def zero_grad(self):
        self.grad = 0.0

    def backward(self):
        order, seen = [], set()
        stack = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents)
        self.grad = 1.0
        for node in reversed(order):
            for parent, g in zip(node.parents, node._local(node.grad)):
                parent.grad += g
