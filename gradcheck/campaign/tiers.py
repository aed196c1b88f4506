"""Tiers: how much a finding matters to the engine's author, decided once, when it is made.

A campaign's findings are a triage, not a list: a wrong tanh derivative at 0.37 must not sit
beside `1 / 0` raising where torch gives inf. Each finding gets one tier from its kind, where
its exception was raised, and the numbers at its failing point (`decide_tier`):

| tier         | when                                                                             |
|--------------|----------------------------------------------------------------------------------|
| `graph-code` | kind structural or nondeterministic: the engine's graph code, whatever the ops    |
| `convention` | kind convention: a valid subgradient at a kink or tie that is not torch's choice |
| `adapter`    | the exception was raised in the adapter's own code or in gradcheck's default     |
|              | spellings (`engine has no .expand`), before any of the engine's code ran          |
| `edge`       | some op's argument is inf, nan, subnormal or at float overflow (its square        |
|              | overflows), or torch's own value or gradient there is inf or nan, or its value    |
|              | underflows (subnormal, or 0 where the exact value is not: sigmoid(-710)), or at a |
|              | pole torch's finite gradient is a convention at a singularity (atan2 at (0, 0))   |
| `bug`        | kind crash or timeout, wherever: the engine ended the process checking it or gave |
|              | no answer, which no input excuses (torch answers at inf and nan too); and         |
|              | everything else: finite, normal arguments where torch's answer is finite, and the |
|              | engine differs (a wrong number, an exception, a non-number, lost accuracy at tiny |
|              | normal magnitudes, a pole where torch's answer is finite such as `x ** 0` at 0)    |
| `torch-off`  | judged against the exact values (`--reference exact`), torch is off and the      |
|              | engine is not: every problem is torch's (`Off.TORCH`). Not the engine's bug: it   |
|              | never fails the engine's campaign, and a report leads with it (torch is the       |
|              | engine everyone trusts unchecked)                                                 |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Graph
from gradcheck.graphs.regions import NONFINITE, OFF_DOMAIN, ORDINARY, POLE, TINY
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Off, Problem

BUG = "bug"
GRAPH_CODE = "graph-code"
EDGE = "edge"
CONVENTION = "convention"
ADAPTER = "adapter"
TORCH_OFF = "torch-off"
# In the order a report leads with them: where torch itself is off first (there are none unless
# the exact values judge, and none when the engine under test is torch), then the engine's own.
TIERS = (TORCH_OFF, BUG, GRAPH_CODE, ADAPTER, EDGE, CONVENTION)
# The tiers that do not fail the engine's campaign (conventions fail it under `--conventions
# torch`: `Finding.is_failure`).
NOT_THE_ENGINES = frozenset({TORCH_OFF})
# The kinds that are bugs whatever the input: the engine's process ended, or it never answered.
_ALWAYS_BUGS = frozenset({Kind.CRASH, Kind.TIMEOUT})

# An argument this large is at float overflow: its square overflows float64 (2 ** 512 ~ 1.3e154).
OVERFLOW_MAGNITUDE = 2.0**512
# At a pole, torch's gradient NEARBY (relative) away beyond SINGULAR times its size at the point
# (plus 1) makes the point a singularity: its finite gradient there is a convention.
NEARBY = 1e-6
SINGULAR = 1e4
# The smallest positive normal float64; nonzero magnitudes below it are subnormal.
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
# The regions at which every op's value and slopes are finite by the registry's reference.
_FINITE_REGIONS = frozenset({ORDINARY, TINY})


@dataclass(frozen=True)
class EdgeFacts:
    """What decides edge against bug at a failing point: some op's argument is inf, nan,
    subnormal or at float overflow (`special_argument`); torch's own value or gradient is inf or
    nan, or its value underflows (`torch_special`)."""

    special_argument: bool
    torch_special: bool

    @property
    def at_edge(self) -> bool:
        return self.special_argument or self.torch_special


def decide_tier(kind: Kind, adapter_fault: bool, facts: EdgeFacts | None) -> str:
    """The tier of a difference of `kind` (see the module's table): graph-code and convention by
    the kind, adapter when the exception was the adapter's (`adapter_fault`), edge when the facts
    at the failing point say so, else bug (no facts: nothing shows an edge); a crash or a timeout
    is a bug wherever it happened."""
    if kind in _ALWAYS_BUGS:
        return BUG
    if kind in (Kind.STRUCTURAL, Kind.NONDETERMINISTIC):
        return GRAPH_CODE
    if kind is Kind.CONVENTION:
        return CONVENTION
    if adapter_fault:
        return ADAPTER
    return EDGE if facts is not None and facts.at_edge else BUG


def tier_by_kind(kind: Kind, problems: Iterable[Problem]) -> str | None:
    """The tier when the kind or the problems decide it (graph-code, convention, adapter; bug for
    a crash or a timeout; torch-off when every problem is torch's); None when it depends on the
    numbers at the failing point (edge or bug)."""
    if kind in _ALWAYS_BUGS:
        return BUG
    problems = list(problems)
    if problems and all(p.off is Off.TORCH for p in problems):
        return TORCH_OFF
    adapter_fault = any(p.by_adapter for p in problems)
    tier = decide_tier(kind, adapter_fault, None)
    return None if tier == BUG else tier


def tier_of(
    kind: Kind, problems: Sequence[Problem], graph: Mapping[str, Any], region: str, check: str
) -> str:
    """`decide_tier` with the facts read from a finding's graph (its first point); a graph that
    cannot be read or evaluated shows no edge."""
    decided = tier_by_kind(kind, problems)
    if decided is not None:
        return decided
    return decide_tier(kind, False, edge_facts(graph, region, check))


def edge_facts(
    graph: Mapping[str, Any] | Graph, region: str = "", check: str = "gradient"
) -> EdgeFacts | None:
    """The facts at `graph`'s first point: every op's arguments by the registry's numpy reference,
    and torch's value and gradient (and Hessian-vector product for a second-derivative finding)
    unless the region already says every value and slope is finite. None when the graph cannot
    be read."""
    try:
        g = graph if isinstance(graph, Graph) else Graph.from_dict(graph)
        arguments, values = _node_numbers(g)
    except Exception:
        return None
    if region == NONFINITE or any(_special(a) for a in arguments):
        return EdgeFacts(True, False)
    outputs = [values[o] for o in g.outputs if o < len(values)]
    torch_special = region == OFF_DOMAIN or any(map(_special_answer, outputs))  # exp(-710) is subnormal
    if not torch_special and any((o == 0).any() for o in outputs):  # sigmoid(-710) rounds to 0
        torch_special = _value_underflows(g)
    at_random = region in _FINITE_REGIONS and not g.meta.get("edge")  # numpy's finite answer holds
    if not torch_special and (not at_random or check == "second-derivative"):
        torch_special = _torch_special(g, check, region)
    return EdgeFacts(False, torch_special)


def _special(values: np.ndarray) -> bool:
    """Whether some entry is inf, nan, subnormal or at float overflow."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        return bool(
            (~np.isfinite(v)).any()
            or ((v > 0) & (v < SMALLEST_NORMAL)).any()
            or (v >= OVERFLOW_MAGNITUDE).any()
        )


def _node_numbers(graph: Graph) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every op node's arguments (constants included), and every node's value (inputs first), at
    the graph's first point by the numpy reference (as far as the reference can take the graph)."""
    from gradcheck.graphs.registry import REGISTRY  # the registry imports numpy only

    values: list[Any] = [np.asarray(v, dtype=np.float64) for v in graph.input_values(0)]
    arguments = list(values)
    with np.errstate(all="ignore"):
        for node in graph.nodes:
            args = [np.asarray(a, dtype=np.float64) for a in node.operands(values)]
            arguments += args
            try:
                values.append(np.asarray(REGISTRY[node.op].numpy(args, node.attr), dtype=np.float64))
            except (ValueError, TypeError, IndexError):
                return arguments, values
    return arguments, values


def _torch_special(graph: Graph, check: str, region: str = "") -> bool:
    """Whether torch's value or gradient (or HVP for a second-derivative check) at the graph's
    first point holds an inf or nan, or its value underflows; at a pole, also whether torch's
    finite gradient there is a convention at a singularity (`_singular_nearby`). False when torch
    cannot evaluate the graph."""
    from gradcheck.parity.classify import torch_at  # imports torch: only when a finding needs it

    values = graph.input_values(0)
    cotangent = _cotangent(graph)
    direction = None
    if check == "second-derivative":
        direction = [np.ones_like(v) if isinstance(v, np.ndarray) else 1.0 for v in values]
    try:
        with np.errstate(all="ignore"):
            reference = torch_at(graph, values, cotangent, direction)
    except Exception:
        return False
    derivatives = [reference.grads[:, 0]] + ([reference.hvp[:, 0]] if reference.hvp is not None else [])
    value = reference.forward[:, 0]
    if _special_answer(value) or any(not np.isfinite(d).all() for d in derivatives):
        return True
    if region == POLE and _singular_nearby(graph, values, cotangent, reference.grads[:, 0]):
        return True
    return bool((value == 0).any()) and _value_underflows(graph)


def _cotangent(graph: Graph) -> list[Any]:
    """The graph's cotangent, or ones (of each output's shape for a tensor graph)."""
    if graph.cotangent is not None:
        return list(graph.cotangent)
    if not graph.is_tensor:
        return [1.0] * len(graph.outputs)
    from gradcheck.graphs.shapes import graph_shapes

    shapes = graph_shapes(graph)
    return [np.ones(shapes[o]) for o in graph.outputs]


def _singular_nearby(graph: Graph, values: list[Any], cotangent: list[Any], here: np.ndarray) -> bool:
    """Whether torch's gradient grows without bound next to the point (every input moved by
    NEARBY, relative): then a finite gradient at the point is a convention at a singularity
    (atan2 at the origin: torch gives 0, its slopes grow as 1 / distance), not a value the
    engine could compute; `x ** 0` at 0 stays 0 next to 0, a bug for an engine to raise there."""
    from gradcheck.parity.classify import torch_at

    moved = [v + NEARBY * np.maximum(1.0, np.abs(v)) for v in values]
    try:
        with np.errstate(all="ignore"):
            near = torch_at(graph, moved, cotangent).grads[:, 0]
    except Exception:
        return False
    bound = SINGULAR * (1.0 + float(np.abs(here).max(initial=0.0)))
    return bool(not np.isfinite(near).all() or np.abs(near).max(initial=0.0) > bound)


def _special_answer(values: np.ndarray) -> bool:
    """Whether a value holds an inf, nan or subnormal entry."""
    v = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        return bool((~np.isfinite(v)).any() or ((v > 0) & (v < SMALLEST_NORMAL)).any())


def _value_underflows(graph: Graph) -> bool:
    """Whether a scalar graph's exact value (mpmath, 40 digits) is below the normal floats but not
    0, where float64 gives 0: sigmoid(-710) is 4.5e-309, which torch rounds to 0. (A derivative
    that underflows does not count: tanh'(355) does, and tanh(355) = 1.0 is an ordinary number.)"""
    if graph.is_tensor:
        return False
    from gradcheck.checker.oracle import MPValue, mpmath  # mpmath: only for a value of 0
    from gradcheck.graphs.registry import REGISTRY

    try:
        with mpmath.workdps(40):
            nodes: list[Any] = [MPValue(float(v)) for v in graph.input_values(0)]
            for node in graph.nodes:
                nodes.append(REGISTRY[node.op].apply(node.operands(nodes), node.attr))
            exact = [abs(MPValue(nodes[o]).data) for o in graph.outputs]
            return any(0 < e < SMALLEST_NORMAL for e in exact)
    except Exception:
        return False


def fix_first_rank(tier: str) -> int:
    """A tier's place among what to fix first: an op's bug and the graph code's rank together (the
    one explaining more graphs comes first: a mistake in backward() that fails 800 graphs is above
    an op's bug that fails 28), the other tiers after them in `TIERS`'s order."""
    return tier_rank(BUG if tier == GRAPH_CODE else tier)


def tier_rank(tier: str) -> int:
    """A tier's place in a report (bugs first); an unknown tier last."""
    return TIERS.index(tier) if tier in TIERS else len(TIERS)
