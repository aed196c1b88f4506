"""Run one expression on minigrad Tensors and on torch tensors and compare values, gradients
(with a random cotangent, not a sum) and dtypes; optionally second derivatives too.

Used by the test_tensor*, test_functional* and test_linear* files. The expression is a function
of its input tensors written so that it runs on both libraries (`x.exp()`, `x @ y`, ...), or a
pair of functions when the spellings differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

import minigrad

# (value rtol, grad rtol) per dtype, as the issue asks; atol covers entries near zero.
TOLERANCES = {np.float64: (1e-12, 1e-9), np.float32: (1e-5, 1e-5)}
TORCH_DTYPES = {np.float64: torch.float64, np.float32: torch.float32}


def close(actual: np.ndarray, expected: np.ndarray, rtol: float, what: str) -> None:
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != torch's {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0, where=np.isfinite(expected))))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what, equal_nan=True)


def as_pair(fn: Callable[..., Any] | tuple[Callable[..., Any], Callable[..., Any]]) -> tuple[Any, Any]:
    return fn if isinstance(fn, tuple) else (fn, fn)


def check(
    fn: Callable[..., Any] | tuple[Callable[..., Any], Callable[..., Any]],
    arrays: Sequence[np.ndarray],
    dtype: type = np.float64,
    seed: int = 0,
    requires_grad: Sequence[bool] | None = None,
) -> tuple[list[minigrad.Tensor], list[torch.Tensor]]:
    """Compare fn's value, its gradients under a random cotangent, and every grad's dtype."""
    mg_fn, torch_fn = as_pair(fn)
    value_rtol, grad_rtol = TOLERANCES[dtype]
    flags = requires_grad if requires_grad is not None else [True] * len(arrays)
    mine = [minigrad.tensor(a.astype(dtype), requires_grad=f) for a, f in zip(arrays, flags)]
    theirs = [torch.tensor(a.astype(dtype), requires_grad=f) for a, f in zip(arrays, flags)]
    out = mg_fn(*mine)
    ref = torch_fn(*theirs)
    assert out.dtype == np.dtype(dtype), f"result dtype {out.dtype}, expected {np.dtype(dtype)}"
    close(out.data, ref.detach().numpy(), value_rtol, "value")
    if not any(flags):
        return mine, theirs
    cotangent = np.random.default_rng(seed).standard_normal(out.shape).astype(dtype)
    out.backward(minigrad.tensor(cotangent))
    ref.backward(torch.from_numpy(cotangent))
    for i, (m, t) in enumerate(zip(mine, theirs)):
        if t.grad is None:
            assert m.grad is None, f"input {i}: torch has no gradient, minigrad has {m.grad}"
            continue
        assert m.grad is not None, f"input {i}: minigrad has no gradient"
        assert m.grad.dtype == m.dtype, f"input {i}: grad dtype {m.grad.dtype} != tensor dtype {m.dtype}"
        close(m.grad.data, t.grad.numpy(), grad_rtol, f"gradient of input {i}")
    return mine, theirs


def check_second(
    fn: Callable[..., Any] | tuple[Callable[..., Any], Callable[..., Any]],
    arrays: Sequence[np.ndarray],
    seed: int = 0,
) -> None:
    """Compare the gradient of <grad(fn)·u, v> (a Hessian-vector product) with torch's, float64."""
    mg_fn, torch_fn = as_pair(fn)
    rng = np.random.default_rng(seed)
    mine = [minigrad.tensor(a, dtype=np.float64, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out, ref = mg_fn(*mine), torch_fn(*theirs)
    u = rng.standard_normal(out.shape)
    vs = [rng.standard_normal(a.shape) for a in arrays]
    firsts = minigrad.grad(out, mine, minigrad.tensor(u, dtype=np.float64), create_graph=True)
    ref_firsts = torch.autograd.grad(ref, theirs, torch.from_numpy(u), create_graph=True)
    for i, (g, r) in enumerate(zip(firsts, ref_firsts)):
        close(g.data, r.detach().numpy(), 1e-9, f"first derivative {i}")
    mine_used = [(g, v) for g, v in zip(firsts, vs) if g.requires_grad]
    theirs_used = [(g, v) for g, v in zip(ref_firsts, vs) if g.requires_grad]
    if mine_used:
        s = (mine_used[0][0] * minigrad.tensor(mine_used[0][1])).sum()
        for g, v in mine_used[1:]:
            s = s + (g * minigrad.tensor(v)).sum()
        seconds = [x.data for x in minigrad.grad(s, mine, allow_unused=True, materialize_grads=True)]
    else:  # every first derivative is constant: the second derivatives are zero
        seconds = [np.zeros(a.shape) for a in arrays]
    if theirs_used:
        ref_s = sum((g * torch.from_numpy(v)).sum() for g, v in theirs_used)
        ref_seconds = [
            r.numpy(force=True)
            for r in torch.autograd.grad(ref_s, theirs, allow_unused=True, materialize_grads=True)
        ]
    else:
        ref_seconds = [np.zeros(a.shape) for a in arrays]
    for i, (g, r) in enumerate(zip(seconds, ref_seconds)):
        close(g, r, 1e-9, f"second derivative {i}")
