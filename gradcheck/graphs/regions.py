"""Input regions: where on an op's domain a graph's point lies (a pole, a kink, a tie, ...).

A finding's root cause is its op, its region, its check and its kind: one rule that fails at a
pole is one problem whichever exception type or edge value showed it, and a separate problem
from the same op failing at an overflow point or at ordinary inputs. The region of a graph is the
most special region any of its op nodes sits in at the graph's first point (numpy reference
values, so it does not depend on the engine under test).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph, OpNode
from gradcheck.graphs.opspec import MAX_MAGNITUDE, OpSpec
from gradcheck.graphs.registry import REGISTRY

NONFINITE = "nan/inf"
POLE = "pole"
OFF_DOMAIN = "outside the domain"
OVERFLOW = "overflow point"
TIE = "tie"
KINK = "kink"
TINY = "tiny"
ORDINARY = "ordinary"
# Most special first: a node at a pole and at tiny magnitudes is at the pole (a divisor of 0 is a
# pole whatever the numerator, nan and inf included); maximum(1e300, 1e300) is at a tie; a huge
# finite argument beside an infinite one is an overflow point.
REGIONS: tuple[str, ...] = (POLE, OFF_DOMAIN, TIE, KINK, OVERFLOW, NONFINITE, TINY, ORDINARY)
# Nonzero magnitudes below this are tiny: far below what ordinary graphs draw, where formulas that
# subtract nearly equal numbers (an exp-based tanh) lose their digits.
TINY_MAGNITUDE = 1e-6

# How a finding's title places a region ("div at a pole — ...").
PLACES = {
    NONFINITE: "at nan/inf",
    POLE: "at a pole",
    OFF_DOMAIN: "outside its domain",
    OVERFLOW: "at an overflow point",
    TIE: "at a tie",
    KINK: "at a kink",
    TINY: "at tiny magnitudes",
    ORDINARY: "",
}


def region_of(graph: Graph) -> str:
    """The most special region of `graph`'s op nodes at its first point (`ORDINARY` if none);
    tiny magnitudes only where an input or a constant operand is tiny (an intermediate value that
    cancels to 1e-17 at ordinary inputs does not make a finding one of tiny magnitudes)."""
    values: list[Any] = [np.asarray(v, dtype=np.float64) for v in graph.input_values(0)]
    constants = [np.asarray(c.value, dtype=np.float64) for node in graph.nodes for c in node.consts]
    tiny_inputs = any(tiny(v).any() for v in [*values, *constants])
    found = ORDINARY
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            spec = REGISTRY[node.op]
            args = [np.asarray(a, dtype=np.float64) for a in node.operands(values)]
            try:
                out = np.asarray(spec.numpy(args, node.attr), dtype=np.float64)
            except (ValueError, TypeError, IndexError):  # shapes the reference cannot take
                return found
            region = node_region(spec, node, args, out)
            if region == TINY and not tiny_inputs:
                region = ORDINARY
            if REGIONS.index(region) < REGIONS.index(found):
                found = region
            values.append(out)
    return found


def node_region(spec: OpSpec, node: OpNode, args: Sequence[np.ndarray], out: np.ndarray) -> str:
    """The region of one op node at arguments `args` (its reference output `out`)."""
    attrs = node.attr
    if spec.poles is not None and np.asarray(spec.poles(args, attrs)).any():
        return POLE
    finite = all(np.isfinite(a).all() for a in args)
    if finite and np.isnan(out).any():  # finite arguments where torch's value is nan: sqrt(-1)
        return OFF_DOMAIN
    at_kink = finite and _branches_differ(spec, args, attrs)  # -inf's nudges are nan, not a kink
    if at_kink and spec.kinks.startswith("ties"):
        return TIE
    if at_kink or _a_kink_case(spec, args, attrs):
        return KINK
    if any((np.abs(a[np.isfinite(a)]) > MAX_MAGNITUDE).any() for a in args):
        return OVERFLOW  # inf / 1e300: the 1e300 is where formulas overflow, whatever the inf does
    if finite and (not np.isfinite(out).all() or not _finite_slopes(spec, args, attrs, out)):
        return OVERFLOW
    if not finite:
        return NONFINITE
    if any(tiny(a).any() for a in args):
        return TINY
    return ORDINARY


def tiny(values: Any) -> np.ndarray:
    """Which entries of `values` are tiny: nonzero and below `TINY_MAGNITUDE` in size."""
    v = np.asarray(values, dtype=np.float64)
    return (v != 0) & (np.abs(v) < TINY_MAGNITUDE)


def _branches_differ(spec: OpSpec, args: Sequence[np.ndarray], attrs: dict[str, Any]) -> bool:
    """Whether the op's branch (which side of a kink) changes under the smallest nudges of its
    arguments: exactly at a kink or a tie, not merely near one. Every element is nudged by a
    different amount, so tied arguments (maximum(x, x), a row's equal maxima) come apart."""
    if spec.branch is None:
        return False
    here = np.asarray(spec.branch(args, attrs), dtype=np.float64)
    sizes = [a.size for a in args]
    pattern = np.arange(1, sum(sizes) + 1, dtype=np.float64)
    for sign in (1.0, -1.0):
        nudged, start = [], 0
        for a, size in zip(args, sizes):
            steps = pattern[start : start + size].reshape(a.shape)
            nudged.append(a + sign * steps * (1e-9 * np.abs(a) + 1e-300))
            start += size
        if not np.array_equal(np.asarray(spec.branch(nudged, attrs), dtype=np.float64), here, equal_nan=True):
            return True
    return False


def _finite_slopes(spec: OpSpec, args: Sequence[np.ndarray], attrs: dict[str, Any], out: np.ndarray) -> bool:
    if spec.grads is None:
        return True
    try:
        slopes = spec.grads(args, attrs, out)
    except (ValueError, TypeError, ZeroDivisionError):
        return True
    return all(np.isfinite(np.asarray(s, dtype=np.float64)).all() for s in slopes)


def _a_kink_case(spec: OpSpec, args: Sequence[np.ndarray], attrs: dict[str, Any]) -> bool:
    """Whether `args` are exactly one of the registry's kink cases (scalar arguments)."""
    if any(a.ndim for a in args):
        return False
    return any(
        case_attrs == attrs and len(case) == len(args) and all(float(a) == c for a, c in zip(args, case))
        for case, case_attrs in spec.kink_cases
        if not any(np.ndim(c) for c in case)
    )
