"""The registry's accuracy figures hold: every library engines are written with (torch, Python's
math, numpy, JAX, HIPS autograd) computes each op and its gradient within the rounding bound the
figures give, and its Hessian-vector product within HVP_SAFETY times its bound
(`gradcheck.testing.accuracy`): a figure understated fails here."""

import dataclasses

import pytest

from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.parity.errors import HVP_SAFETY
from gradcheck.testing.accuracy import TENSOR_ENGINES, measure

# JAX compiles each tensor op's shapes anew (seconds per op): benchmarks/op_accuracy.py measures it.
TENSOR_ENGINES_HERE = {label: name for label, name in TENSOR_ENGINES.items() if label != "jax"}
TENSOR_ONLY = [op for op in TENSOR_OPS if op not in SCALAR_OPS]


def within(found) -> list[str]:
    """The engines whose worst error exceeds the bound the registry's figures give."""
    return [
        f"{m.op} by {m.engine}: value {m.value_ratio:.3g} x its bound (needs {m.value_needed:.3g} ulps), "
        f"gradients {[round(r, 3) for r in m.grad_ratio]} x (need {[round(g, 3) for g in m.grads_needed]}), "
        f"Hessian-vector products {[round(r, 3) for r in m.hvp_ratio]} x"
        for m in found
        if m.value_ratio > 1 or max(m.grad_ratio, default=0) > 1 or max(m.hvp_ratio, default=0) > HVP_SAFETY
    ]


@pytest.mark.slow
@pytest.mark.parametrize("op", SCALAR_OPS)
def test_every_library_computes_a_scalar_op_within_its_registry_accuracy(op):
    found = measure(op, points=120)
    assert len(found) >= 5, "torch, math, numpy and the function-style engines all measured"
    assert not within(found), within(found)


@pytest.mark.slow
@pytest.mark.parametrize("op", TENSOR_ONLY)
def test_every_library_computes_a_tensor_op_within_its_registry_accuracy(op):
    found = measure(op, TENSOR_ENGINES_HERE, points=8)
    assert found
    assert not within(found), within(found)


def test_an_understated_figure_fails(monkeypatch):
    # tanh claimed correctly rounded (half an ulp) and its derivative exact: no library is that
    spec = REGISTRY["tanh"]
    understated = dataclasses.replace(spec.accuracy, value=0.25, grads=(0.0,))
    monkeypatch.setitem(REGISTRY, "tanh", dataclasses.replace(spec, accuracy=understated))
    assert within(measure("tanh", points=60))
