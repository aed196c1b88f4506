"""matmul / @ against torch.matmul for 1-D, 2-D and batched operands (batch dims broadcasting),
values, gradients and second derivatives; torch's errors for shapes that cannot be multiplied."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
import torch

import minigrad
from minigrad.tests.tensor_torch_check import check, check_second

MATMUL_SHAPES = [
    ((3,), (3,)),  # dot product: a 0-d result
    ((3,), (3, 4)),  # vector-matrix
    ((2, 3), (3,)),  # matrix-vector
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),  # batched with a broadcast matrix
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)),  # batch dims broadcasting against each other
    ((3,), (5, 3, 4)),  # vector with a batch
    ((5, 2, 3), (3,)),
    ((0, 3), (3, 4)),  # empty rows
    ((2, 0), (0, 4)),  # empty inner dim: zeros
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_matches_torch(shapes, dtype):
    rng = np.random.default_rng(0)
    check(lambda a, b: a @ b, [rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])], dtype)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES[:10], ids=str)
def test_matmul_second_derivatives_match_torch(shapes):
    rng = np.random.default_rng(1)
    check_second(lambda a, b: (a @ b) ** 2, [rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])])


def test_matmul_function_and_constant_operands():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((3, 2))
    check((lambda x: minigrad.matmul(x, w), lambda x: x @ torch.from_numpy(w)), [rng.standard_normal((4, 3))])
    check((lambda x: w.T @ x, lambda x: torch.from_numpy(w.T) @ x), [rng.standard_normal((3, 5))])


def test_matmul_skips_the_gradient_of_an_operand_that_does_not_require_it():
    rng = np.random.default_rng(3)
    mine, _ = check(
        lambda x, w: x @ w,
        [rng.standard_normal((4, 3)), rng.standard_normal((3, 2))],
        requires_grad=[False, True],
    )
    assert mine[0].grad is None and mine[1].grad is not None


def test_matmul_errors_name_both_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        minigrad.zeros(2, 3) @ minigrad.zeros(4, 5)
    with pytest.raises(RuntimeError, match=r"\(3,\) and \(4,\)"):
        minigrad.zeros(3) @ minigrad.zeros(4)
    with pytest.raises(RuntimeError, match="at least 1D, but they are 0D and 2D"):
        minigrad.tensor(1.0) @ minigrad.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"batch dimensions \(2,\) and \(3,\)"):
        minigrad.zeros(2, 4, 3) @ minigrad.zeros(3, 3, 4)
