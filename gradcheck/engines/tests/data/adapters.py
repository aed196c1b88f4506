"""Hand-written adapters for the two test engines, as a user would write them from
docs/adapters.md: what the inspected class's adapter must agree with."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gradcheck.engines import EngineAdapter

HERE = Path(__file__).parent


def _engine_class(file: str, name: str) -> type:
    spec = importlib.util.spec_from_file_location(f"handwritten_{file[:-3]}", HERE / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


PlainValue = _engine_class("plain_engine.py", "Value")
QuirkyScalar = _engine_class("quirky_engine.py", "Scalar")


class PlainAdapter(EngineAdapter):
    name = "plain"
    ops_tried_at_load = True  # as the inspection's adapter: the same checks, the same findings
    ops = frozenset({"add", "sub", "mul", "div", "pow_const", "neg", "relu", "tanh", "exp", "log"})

    def leaf(self, value):
        return PlainValue(float(value))


class QuirkyAdapter(EngineAdapter):
    name = "quirky"
    ops_tried_at_load = True
    ops = frozenset({"add", "sub", "mul", "div", "pow_const", "neg", "relu", "sigmoid"})

    def leaf(self, value):
        return QuirkyScalar(float(value))

    def apply(self, op, args, attrs):
        if op == "div" and isinstance(args[0], float):  # no __rtruediv__
            args = [QuirkyScalar(args[0]), args[1]]
        return super().apply(op, args, attrs)
