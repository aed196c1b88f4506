"""`no_grad` / `enable_grad` / `set_grad_enabled` and `detect_anomaly` on Values."""

from __future__ import annotations

import math

import pytest

import minigrad
from minigrad import Value, detect_anomaly, enable_grad, is_anomaly_enabled, is_grad_enabled, no_grad


def test_no_grad_records_nothing() -> None:
    x = Value(2.0)
    with no_grad():
        y = (x * 3.0).tanh() + x
    assert y._prev == () and y._op == ""
    y.backward()
    assert x.grad == 0.0 and y.grad == 1.0


def test_a_value_made_under_no_grad_is_a_constant_for_later_graphs() -> None:
    x = Value(2.0)
    with no_grad():
        frozen = x * x
    z = frozen * x
    z.backward()
    assert x.grad == 4.0  # only the direct use of x; nothing flows through `frozen`


def test_no_grad_works_as_a_decorator_like_torch() -> None:
    @no_grad()
    def frozen_double(x: Value) -> Value:
        return x * 2.0

    out = frozen_double(Value(1.0))
    assert out.data == 2.0 and out._prev == ()
    assert frozen_double(Value(1.0))._prev == ()  # reusable: a fresh context on every call
    assert is_grad_enabled()


def test_enable_grad_inside_no_grad_records_again() -> None:
    x = Value(2.0)
    with no_grad():
        assert not is_grad_enabled()
        with enable_grad():
            y = x * x
        assert not is_grad_enabled()
    assert is_grad_enabled()
    y.backward()
    assert x.grad == 4.0


def test_set_grad_enabled_restores_the_mode_after_an_exception() -> None:
    with pytest.raises(ZeroDivisionError), minigrad.set_grad_enabled(False):
        assert not is_grad_enabled()
        raise ZeroDivisionError
    assert is_grad_enabled()


def test_backward_itself_records_no_graph() -> None:
    x = Value(0.3)
    y = x.sin() * x
    y.backward()
    assert type(x.grad) is float
    (g,) = minigrad.grad(y, x)
    assert type(g) is float


def test_create_graph_under_no_grad_builds_no_graph_like_torch() -> None:
    x = Value(0.3)
    y = x.sin() * x
    with no_grad():
        (g,) = minigrad.grad(y, x, create_graph=True)
    assert isinstance(g, Value) and g._prev == ()


# --- detect_anomaly -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "op", "shown"),
    [
        (lambda x: (x - 2.0).log(), "Log", "-1.0"),
        (lambda x: (x - 2.0).sqrt(), "Sqrt", "-1.0"),
        (lambda x: (x - 2.0) ** 0.5, "PowConst", "constant 0.5"),
        (lambda x: (x - 1.0) / (x - 1.0), "Div", "0.0, 0.0"),
        (lambda x: (x * 1e308 * 10.0) - (x * 1e308 * 10.0), "Sub", "inf, inf"),
    ],
)
def test_forward_anomaly_names_the_first_op_producing_nan_and_its_inputs(expr, op: str, shown: str) -> None:
    x = Value(1.0)
    with detect_anomaly(), pytest.raises(RuntimeError, match=rf"forward of '{op}'.*{shown}.*returned nan"):
        expr(x)
    assert math.isnan(expr(x).data)  # outside the block the same expression just gives nan


def test_ops_on_nan_inputs_are_not_anomalies() -> None:
    with detect_anomaly():
        y = Value(math.nan) * 2.0 + 1.0
    assert math.isnan(y.data)


def test_backward_anomaly_names_the_op_whose_gradient_is_nan() -> None:
    x = Value(0.0)
    with detect_anomaly():
        y = x.sqrt() * 0.0  # forward is fine; d sqrt/dx = inf, times the incoming 0 gives nan
        with pytest.raises(RuntimeError, match=r"backward of 'Sqrt'.*0\.0.*input 0"):
            y.backward()


def test_torch_flags_the_same_backward_anomaly() -> None:
    torch = pytest.importorskip("torch")
    t = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly():
        ty = t.sqrt() * 0.0
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            ty.backward()


def test_backward_anomaly_is_also_caught_on_the_create_graph_path() -> None:
    x = Value(0.0)
    with detect_anomaly():
        y = x.sqrt() * 0.0
        with pytest.raises(RuntimeError, match="backward of 'Sqrt'"):
            minigrad.grad(y, x, create_graph=True)


def test_without_detect_anomaly_nan_gradients_pass_silently() -> None:
    x = Value(0.0)
    (x.sqrt() * 0.0).backward()
    assert math.isnan(x.grad)


def test_detect_anomaly_switch_is_restored() -> None:
    with pytest.raises(RuntimeError), detect_anomaly():
        assert is_anomaly_enabled()
        Value(-1.0).log()
    assert not is_anomaly_enabled()
