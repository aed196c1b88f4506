"""`Value` as a user meets it: construction, bad input, worked numbers from micrograd's examples."""

from __future__ import annotations

import gc
import math
import tracemalloc

import numpy as np
import pytest

import minigrad
from minigrad import ScalarOp, Value, apply_op


def test_data_is_stored_as_float_and_grad_starts_at_zero() -> None:
    v = Value(3)
    assert type(v.data) is float and v.data == 3.0
    assert v.grad == 0.0
    assert v._op == ""
    assert repr(v) == "Value(data=3.0, grad=0.0)"


def test_numpy_real_scalars_are_accepted() -> None:
    assert Value(np.float64(2.5)).data == 2.5
    assert Value(np.int32(-4)).data == -4.0
    assert Value(np.float32(0.5)).data == 0.5


@pytest.mark.parametrize("bad", ["abc", None, [1.0], 1 + 2j, b"1", Value(1.0), np.array([1.0, 2.0])])
def test_non_numbers_are_refused_naming_their_type(bad: object) -> None:
    with pytest.raises(TypeError, match=type(bad).__name__):
        Value(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("flag", [True, False, np.bool_(True)])
def test_booleans_are_refused_with_a_hint(flag: object) -> None:
    with pytest.raises(TypeError, match=r"bool.*use 1\.0 or 0\.0"):
        Value(flag)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expr", "other"),
    [
        (lambda v: v + "x", "str"),
        (lambda v: "x" + v, "str"),
        (lambda v: v - "x", "str"),
        (lambda v: "x" - v, "str"),
        (lambda v: v * None, "NoneType"),
        (lambda v: v / [1], "list"),
        (lambda v: v ** "2", "str"),
        (lambda v: "2" ** v, "str"),
        (lambda v: v + True, "bool"),
    ],
)
def test_arithmetic_with_a_non_number_raises_type_error_naming_it(expr, other: str) -> None:
    with pytest.raises(TypeError) as info:
        expr(Value(1.0))
    assert "Value" in str(info.value) and other in str(info.value)


def test_backward_seed_must_be_a_number() -> None:
    with pytest.raises(TypeError, match=r"backward.*str"):
        Value(1.0).backward("one")  # type: ignore[arg-type]


def test_nan_data_is_allowed_and_propagates() -> None:
    x = Value(math.nan)
    y = x * 2.0 + 1.0
    y.backward()
    assert math.isnan(x.data) and math.isnan(y.data)
    assert x.grad == 2.0


def test_op_names_are_recorded_like_micrograd() -> None:
    x, y = Value(1.0), Value(2.0)
    assert (x + y)._op == "+"
    assert (x * 2)._op == "*"
    assert (x**y)._op == "**"
    assert x.relu()._op == "ReLU"
    assert x.tanh()._op == "tanh"


def test_float_and_item_give_the_data() -> None:
    v = Value(-1.25)
    assert float(v) == -1.25 and v.item() == -1.25


# --- worked numbers -----------------------------------------------------------------------------


def test_x_times_y_plus_x() -> None:
    x, y = Value(2.0), Value(3.0)
    z = x * y + x
    z.backward()
    assert (z.data, x.grad, y.grad) == (8.0, 4.0, 2.0)


def test_square_of_a_times_b_plus_c() -> None:
    a, b, c = Value(2.0), Value(3.0), Value(1.0)
    out = (a * b + c) ** 2
    out.backward()
    assert (out.data, a.grad, b.grad, c.grad) == (49.0, 42.0, 28.0, 14.0)


def test_reused_intermediate_node_counts_every_use() -> None:
    a = Value(1.0)
    b = a + a
    c = b + b
    c.backward()
    assert (c.data, a.grad, b.grad) == (4.0, 4.0, 2.0)


def test_every_value_on_the_path_receives_its_gradient_like_micrograd() -> None:
    a = Value(1.5)
    b = a * 2.0
    c = b * 3.0
    c.backward()
    assert (c.grad, b.grad, a.grad) == (1.0, 3.0, 6.0)


def test_micrograd_readme_expression_matches_torch() -> None:
    torch = pytest.importorskip("torch")

    def expression(a, b):
        c = a + b
        d = a * b + b**3
        c = c + c + 1
        c = c + 1 + c + (-a)
        d = d + d * 2 + (b + a).relu()
        d = d + 3 * d + (b - a).relu()
        e = c - d
        f = e**2
        g = f / 2.0
        g = g + 10.0 / f
        return g

    a, b = Value(-4.0), Value(2.0)
    g = expression(a, b)
    g.backward()
    ta = torch.tensor(-4.0, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    tg = expression(ta, tb)
    tg.backward()
    assert math.isclose(g.data, tg.item(), rel_tol=1e-12)
    assert math.isclose(a.grad, ta.grad.item(), rel_tol=1e-12)
    assert math.isclose(b.grad, tb.grad.item(), rel_tol=1e-12)


# --- custom ops -----------------------------------------------------------------------------------


class Hypot(ScalarOp):
    """sqrt(a² + b²), a test op of two inputs: forward and derivative rule side by side."""

    name = "hypot"
    forward = staticmethod(math.hypot)

    @staticmethod
    def backward(g, out, a, b):
        return g * a / out, g * b / out


class ScaledSquare(ScalarOp):
    """c · a², a test op of one input and a constant."""

    name = "scaled_square"
    forward = staticmethod(lambda a, c: c * a * a)

    @staticmethod
    def backward(g, out, a, c):
        return (g * 2.0 * c * a,)


def test_apply_op_records_a_custom_two_input_op() -> None:
    x, y = Value(3.0), Value(4.0)
    out = apply_op(Hypot, x, y)
    (out * 2.0).backward()
    assert (out.data, out._op, x.grad, y.grad) == (5.0, "hypot", 1.2, 1.6)


def test_apply_op_passes_the_constant_last_and_wraps_numbers_as_leaves() -> None:
    x = Value(3.0)
    out = apply_op(ScaledSquare, x, const=0.5)
    out.backward()
    assert (out.data, x.grad) == (4.5, 3.0)
    assert apply_op(Hypot, 3.0, 4.0).data == 5.0


def test_apply_op_custom_rules_serve_create_graph_too() -> None:
    x = Value(3.0)
    (d1,) = minigrad.grad(apply_op(ScaledSquare, x, const=0.5), x, create_graph=True)
    (d2,) = minigrad.grad(d1, x)
    assert (d1.data, d2) == (3.0, 1.0)


@pytest.mark.parametrize("count", [0, 3])
def test_apply_op_takes_one_or_two_inputs(count: int) -> None:
    with pytest.raises(TypeError, match=rf"Hypot.*1 or 2 inputs, got {count}"):
        apply_op(Hypot, *[Value(1.0)] * count)


# --- footprint: what keeps the engine fast under Python's garbage collector ----------------------


def test_each_op_result_is_a_single_object_the_collector_tracks() -> None:
    x, y = Value(1.0), Value(2.0)
    gc.collect()
    before = len(gc.get_objects())
    nodes = [x * y for _ in range(500)] + [(x + 1.0).tanh() for _ in range(250)]
    tracked = len(gc.get_objects()) - before
    assert tracked <= len(nodes) + 260  # the list, the 750 results, the 250 intermediates: no tuples


def chain_bytes_per_node(nodes: int = 10_000) -> float:
    """Bytes held per node by a chain y = y * 1.0001 of `nodes` ops (tracemalloc)."""
    x = Value(0.5)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        y = x
        for _ in range(nodes):
            y = y * 1.0001
        per_node = (tracemalloc.get_traced_memory()[0] - before) / nodes
    finally:
        tracemalloc.stop()
    assert y.data > 0.5
    return per_node


def test_a_node_takes_well_under_micrograds_688_bytes() -> None:
    per_node = chain_bytes_per_node()
    assert per_node <= 688 / 3


def test_labels_and_hand_written_ops_cost_no_memory_on_ordinary_nodes() -> None:
    per_node = chain_bytes_per_node()
    assert round(per_node) <= 112  # the Value (7 slots) and its float; a few bytes of the loop aside


class FailsOnce(ScalarOp):
    """Identity whose derivative rule raises the first time it is asked."""

    name = "fails_once"
    calls = 0
    forward = staticmethod(lambda a: a)

    @staticmethod
    def backward(g, out, a):
        FailsOnce.calls += 1
        if FailsOnce.calls == 1:
            raise ArithmeticError("planted failure")
        return (g,)


@pytest.mark.parametrize("how", ["backward", "grad", "create_graph"])
def test_a_pass_that_fails_leaves_nothing_behind_for_the_next(how: str) -> None:
    FailsOnce.calls = 0
    x = Value(1.5)
    y = apply_op(FailsOnce, x * x) * 3.0 + x
    with pytest.raises(ArithmeticError, match="planted"):
        if how == "backward":
            y.backward()
        else:
            minigrad.grad(y, x, create_graph=how == "create_graph")
    y.backward()
    assert x.grad == 3.0 * 2 * 1.5 + 1.0
