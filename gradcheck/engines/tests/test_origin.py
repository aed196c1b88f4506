"""Whose exception: the innermost frame of the engine's or the adapter's code decides
(`gradcheck.engines.origin`)."""

import numpy as np
import pytest

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.origin import Frame, FrameKind, Producer, Raised, adapter_frame
from gradcheck.graphs.registry import REGISTRY


class Plain:
    """An engine's value: `+` with values and numbers on the right only; no `.tanh()`."""

    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        return Plain(self.data + (other.data if isinstance(other, Plain) else other))

    def __mul__(self, other):
        return Plain(np.repeat(self.data, 2, axis=(0, 1)))  # the engine's bug, raised inside numpy


class PlainAdapter(EngineAdapter):
    ops = frozenset({"add", "mul", "tanh"})

    def leaf(self, value):
        return Plain(value)

    def apply(self, op, args, attrs):
        if op == "mul":
            return args[0] * args[1]
        if op == "add" and attrs.get("own"):
            return args[0].plus(args[1])  # the adapter's own spelling: Plain has no `plus`
        return super().apply(op, args, attrs)


def exception_of(call):
    with pytest.raises(Exception) as info:
        call()
    return info.value


ADAPTER = PlainAdapter()


def test_an_attribute_the_engine_lacks_in_gradcheck_default_spelling_is_the_adapters():
    e = exception_of(lambda: ADAPTER.apply("tanh", [Plain(1.0)], {}))
    assert adapter_frame(e, ADAPTER) == Frame(FrameKind.DEFAULT_SPELLING)
    record = Raised.of(e, ADAPTER)
    assert (record.type, record.producer, record.attribute) == ("AttributeError", Producer.ADAPTER, "tanh")
    assert record.message == "'Plain' object has no attribute 'tanh'"


def test_an_exception_in_the_adapters_own_method_is_the_adapters():
    e = exception_of(lambda: ADAPTER.apply("add", [Plain(1.0), Plain(2.0)], {"own": True}))
    assert adapter_frame(e, ADAPTER) == Frame(FrameKind.ADAPTER_METHOD, "PlainAdapter.apply")


def test_an_exception_in_the_engines_code_is_the_engines_also_when_numpy_raised_it():
    e = exception_of(lambda: ADAPTER.apply("mul", [Plain(np.ones(2)), Plain(np.ones(2))], {}))
    assert adapter_frame(e, ADAPTER) is None
    assert Raised.of(e, ADAPTER).producer is Producer.ENGINE


def test_a_default_method_the_engine_cannot_take_is_the_adapters():
    e = exception_of(lambda: ADAPTER.backward(Plain(1.0)))  # Plain has no backward()
    assert adapter_frame(e, ADAPTER) == Frame(FrameKind.DEFAULT_METHOD, "EngineAdapter.backward")


def test_a_number_refused_on_the_left_of_an_operator_the_class_defines_is_the_engines():
    # `2.0 + x` without __radd__: the class lacks the reflected method (a bug), wherever Python raised
    e = exception_of(lambda: REGISTRY["add"].apply([2.0, Plain(1.0)], {}))
    assert "unsupported operand" in str(e)
    assert adapter_frame(e, ADAPTER) is None


def test_an_operator_the_class_does_not_define_at_all_is_the_adapters():
    e = exception_of(lambda: REGISTRY["sub"].apply([Plain(1.0), Plain(2.0)], {}))
    assert adapter_frame(e, ADAPTER) == Frame(FrameKind.DEFAULT_SPELLING)
