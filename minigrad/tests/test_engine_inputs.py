"""What the engines accept: numbers only, integer and bool tensors as torch has them, and numbers too
large for the op's dtype named in the error together with the op."""

from __future__ import annotations

import datetime
import re

import numpy as np
import pytest

import minigrad
from minigrad import NumberTooLargeError, Value

torch = pytest.importorskip("torch")

HUGE = 10**400

# --- Tensor dtypes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "dtype_name"),
    [
        (np.array([object(), object()]), "object"),
        (np.array([1.0, 2.0], dtype=object), "object"),
        (np.array(["a", "b"]), "<U1"),
        (np.array([b"a"]), "|S1"),
        (np.array(["2024-01-01"], dtype="datetime64[D]"), "datetime64[D]"),
        (np.array([1, 2], dtype="timedelta64[s]"), "timedelta64[s]"),
        (np.array([1 + 2j]), "complex128"),
    ],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_tensor_rejects_non_numeric_dtypes_naming_the_dtype(data, dtype_name):
    with pytest.raises(TypeError, match=rf"tensor: dtype {re.escape(dtype_name)} is not supported"):
        minigrad.tensor(data)


def test_tensor_rejects_an_explicit_non_numeric_dtype_and_datetime_objects():
    with pytest.raises(TypeError, match="dtype object is not supported"):
        minigrad.tensor([1.0, 2.0], dtype=object)
    with pytest.raises(TypeError, match="could not infer a numeric dtype"):
        minigrad.tensor([datetime.date(2024, 1, 1)])


def test_from_numpy_shares_numeric_arrays_only():
    array = np.array([1.0, 2.0])
    assert minigrad.from_numpy(array).data is array
    with pytest.raises(TypeError, match="from_numpy: dtype <U1 is not supported"):
        minigrad.from_numpy(np.array(["a"]))


def test_a_non_numeric_array_operand_is_rejected_too():
    with pytest.raises(TypeError, match=r"mul: dtype object is not supported"):
        minigrad.tensor([1.0, 2.0]) * np.array([1.0, "x"], dtype=object)


@pytest.mark.parametrize("data", [[1, 2], [True, False], [1, 2.5], [[1], [2]], 3, True, 2.5])
def test_dtypes_of_new_tensors_follow_torch(data):
    assert str(minigrad.tensor(data).dtype) == str(torch.tensor(data).dtype).removeprefix("torch.")


@pytest.mark.parametrize("data", [[1, 2], [True]])
def test_integer_and_bool_tensors_cannot_require_grad_as_in_torch(data):
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        torch.tensor(data, requires_grad=True)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        minigrad.tensor(data, requires_grad=True)


@pytest.mark.parametrize(
    "expression",
    [
        lambda t, i, b: i + 1.5,
        lambda t, i, b: i / 2,
        lambda t, i, b: i * 2,
        lambda t, i, b: b + b,
        lambda t, i, b: b + 1,
        lambda t, i, b: i + t,
        lambda t, i, b: b * t,
        lambda t, i, b: i.exp(),
        lambda t, i, b: i**2,
    ],
)
def test_integer_and_bool_operands_promote_as_torch(expression):
    mine = expression(minigrad.tensor([1.5, 2.0]), minigrad.tensor([1, 2]), minigrad.tensor([True, False]))
    theirs = expression(torch.tensor([1.5, 2.0]), torch.tensor([1, 2]), torch.tensor([True, False]))
    assert str(mine.dtype) == str(theirs.dtype).removeprefix("torch.")
    assert mine.tolist() == pytest.approx(theirs.tolist())


# --- numbers too large for the op ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "op"),
    [
        (lambda x: Value(HUGE), r"Value\(\)"),
        (lambda x: x + HUGE, r"\+"),
        (lambda x: HUGE - x, "-"),
        (lambda x: x * HUGE, r"\*"),
        (lambda x: x**HUGE, r"\*\*"),
        (lambda x: HUGE**x, r"\*\*"),
        (lambda x: x.backward(HUGE), r"backward\(gradient\)"),
    ],
)
def test_value_names_the_op_and_the_number_too_large_for_a_float(expression, op):
    with pytest.raises(
        NumberTooLargeError, match=rf"^{op}: the number 1000000000\.\.\.00000 \(401 digits\) is too large"
    ):
        expression(Value(2.0))


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (lambda: minigrad.tensor([1.0, 2.0]) + HUGE, "add: the number 1000000000...00000"),
        (lambda: HUGE * minigrad.tensor([1.0]), "mul: the number"),
        (lambda: minigrad.tensor([1.0]) ** HUGE, "pow: the number"),
        (lambda: minigrad.tensor([1, 2]) + 2**70, "add: the number 1180591620717411303424 is too large for"),
        (lambda: minigrad.tensor([HUGE]), "tensor: the number 1000000000...00000"),
        (lambda: minigrad.tensor([[1], [2**70]]), "tensor: the number 1180591620717411303424"),
        (lambda: minigrad.where(minigrad.tensor([True]), minigrad.tensor([1.0]), HUGE), "where: the number"),
    ],
)
def test_tensor_ops_name_the_op_and_the_number_too_large_for_the_dtype(expression, message):
    with pytest.raises(OverflowError) as caught:
        expression()
    assert isinstance(caught.value, NumberTooLargeError)
    assert str(caught.value).startswith(message)


def test_large_numbers_that_fit_still_work():
    assert (Value(1.0) + 10**300).data == 1e300
    assert (minigrad.tensor([1.0]) * 2**70).tolist() == [float(2**70)]
