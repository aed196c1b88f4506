"""The tolerance policy: its test, how op names map to families, and no false alarms at its tightness."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minigrad
from gradcheck import Tolerance, gradcheck, is_differentiable_at, policy_for
from gradcheck.checker.tolerance import DEFAULT, FAMILIES, PROBES, TORCH, family_of
from minigrad import Value


def test_tolerance_is_torchs_test_with_atol_in_units_of_scale():
    tol = Tolerance(atol=1e-6, rtol=1e-3)
    assert tol.accepts(1.0 + 1.0009e-3, 1.0)
    assert not tol.accepts(1.0 + 1.2e-3, 1.0)
    assert tol.accepts(5e-7, 0.0) and not tol.accepts(2e-6, 0.0)
    assert tol.accepts(2e-6, 0.0, scale=10.0)


def test_nan_and_infinity_pass_only_when_both_sides_agree():
    tol = Tolerance(1e-10, 1e-10)
    assert list(tol.accepts([math.nan, math.inf, math.nan, 1.0], [math.nan, math.inf, 1.0, math.nan])) == [
        True,
        True,
        False,
        False,
    ]


def test_negative_tolerances_are_rejected():
    with pytest.raises(ValueError, match="atol and rtol must be >= 0"):
        Tolerance(-1.0, 0.0)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_op_minigrad_defines_belongs_to_a_family():
    importlib.import_module("minigrad.nn")  # its losses are ops too
    bases = [minigrad.ScalarOp] + ([minigrad.TensorOp] if hasattr(minigrad, "TensorOp") else [])
    ops = [op for base in bases for op in _subclasses(base) if op.__module__.startswith("minigrad.")]
    names = {op.name for op in ops if isinstance(getattr(op, "name", None), str)}
    names |= {op.__name__ for op in ops if op.__module__ == "minigrad.scalar_ops"}
    assert len(names) > 20
    assert {name for name in names if family_of(name) is None} == set()


def test_every_op_of_the_parity_registry_belongs_to_a_family():
    registry = pytest.importorskip("gradcheck.graphs.registry")
    assert {name for name in registry.REGISTRY if family_of(name) is None} == set()


def test_policy_is_the_loosest_family_and_unknown_ops_get_the_default():
    assert policy_for(["exp", "+"]) == FAMILIES["exp_log"] | FAMILIES["arithmetic"]
    assert policy_for(["ReLU", "pow_const", "tanh"]) == (
        FAMILIES["piecewise"] | FAMILIES["sqrt_pow"] | FAMILIES["tanh_sigmoid"]
    )
    assert policy_for(["sin", "my_custom_op"]) == DEFAULT | FAMILIES["trig"]
    assert policy_for([]) == FAMILIES["arithmetic"]


def test_every_policy_is_far_tighter_than_torch_and_catches_a_1e6_relative_error():
    for tol in [*FAMILIES.values(), DEFAULT]:
        assert tol.atol <= TORCH.atol / 1e3 and tol.rtol <= TORCH.rtol / 1e4
        assert not tol.accepts(1.0 + 1e-6, 1.0)


@settings(max_examples=25)
@given(st.sampled_from(PROBES), st.integers(0, 2**32 - 1))
def test_no_false_alarms_on_correct_gradients_at_the_policy_tolerance(probe, seed):
    x = np.random.default_rng(seed).uniform(*probe.domain, 3)
    inputs = [Value(float(v)) for v in x]
    if probe.family == "piecewise":
        assume(is_differentiable_at(probe.fn, inputs, radius=1e-2))
    assert gradcheck(probe.fn, inputs)
    assert gradcheck(probe.fn, inputs, fast_mode=True, seed=seed)
