"""The tasks of a campaign's phases that run engine code, as a runner (`pool`) sends them to
wherever the engine runs: `func(state, units, extra)` -> one result per unit, each unit marked
begun (`pool.marked`), so that a unit whose worker dies is known.

`describe` answers what the command line needs to know about an engine before any campaign
(`EngineFacts`), so that the engine is imported only in a worker. The random graphs,
shrinking and explaining are `pool.check_chunk`, `shrink_batch` and `explain_batch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gradcheck.campaign.edge_phase import EdgeReport, findings_of
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.inspection import inspection_findings
from gradcheck.campaign.isolation import CaseOutcome, IsolationCase, check_case
from gradcheck.campaign.pool import EngineState, marked
from gradcheck.campaign.settings import CampaignError
from gradcheck.campaign.settling import settle_findings, with_rates
from gradcheck.campaign.structure import StructureReport
from gradcheck.campaign.structure_findings import run_structure
from gradcheck.campaign.structure_reference import reference_named
from gradcheck.campaign.validation import (
    campaign_forms,
    campaign_ops,
    campaign_variants,
    surface_note,
    validate,
)
from gradcheck.engines.value_class import ValueClassAdapter, adapter_source
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.spellings import Form
from gradcheck.parity.edge_check import EdgeProblem, check_edge


@dataclass(frozen=True)
class EngineFacts:
    """What the command line knows of an engine without importing it: its adapter's name and
    ops, the ops a campaign of these settings draws (`ops`; empty when `problem` says why the
    settings do not fit the engine: bad input), and for a micrograd-style value class the report
    of its inspection, the numbers it refuses beside its operators (`inspected`: findings of
    phase "inspection", `gradcheck.campaign.inspection`) and the adapter written out as Python
    (`run --print-adapter`). `variants`: the attribute variants the campaign draws its ops in
    (`validation.campaign_variants`); `surface_note`: the variants it does not draw, in words
    (`validation.surface_note`)."""

    name: str
    spec: str | None
    ops: tuple[str, ...]
    supported: tuple[str, ...]
    tensor: bool
    create_graph: bool
    max_depth: int | None
    problem: str | None = None
    inspection: str | None = None  # ValueClassAdapter.report()
    adapter_class: str | None = None  # the class name --print-adapter writes
    adapter_source: str | None = None
    inspected: tuple[Finding, ...] = ()
    variants: frozenset[str] = frozenset()
    # op -> the adapter's other spellings of it the campaign draws (`validation.campaign_forms`)
    forms: dict[str, tuple[Form, ...]] = field(default_factory=dict)
    surface_note: str | None = None
    # op -> the engine's primitives it is built from (`EngineAdapter.built_from`), the campaign's ops'
    built_from: dict[str, frozenset[str]] = field(default_factory=dict)
    forward_mode: bool = False  # the adapter's J·v is checked too (`parity.modes`)
    transforms: tuple[str, ...] = ()  # its other roads to the gradient, checked too (`parity.transforms`)
    hvp_transforms: tuple[str, ...] = ()  # the other order of its H·v, checked too

    def checked(self) -> tuple[str, ...]:
        """The campaign's ops; CampaignError (exit status 2) when the settings do not fit."""
        if self.problem is not None:
            raise CampaignError(self.problem)
        return self.ops


def describe(state: EngineState, units: Sequence[Any], extra: Any = None) -> list[EngineFacts]:
    """The engine's facts for its campaign's settings (one unit)."""
    for _ in marked(units):
        pass
    adapter, settings = state.adapter, state.settings
    problem, ops, variants, note = None, (), frozenset[str](), None
    forms: dict[str, tuple[Form, ...]] = {}
    try:
        ops = validate(settings, adapter)
        variants, note = campaign_variants(settings, adapter), surface_note(settings, adapter)
        forms = campaign_forms(settings, adapter)
    except CampaignError as exc:
        problem = str(exc)
    inspection = class_name = source = None
    if isinstance(adapter, ValueClassAdapter):
        inspection = adapter.report()
        class_name = f"{adapter.value_class.__name__}Adapter"
        source = adapter_source(adapter, class_name)
    inspected = tuple(inspection_findings(adapter, tuple(ops))) if problem is None else ()
    facts = EngineFacts(
        name=adapter.name,
        spec=adapter.spec,
        ops=tuple(ops),
        supported=tuple(sorted(adapter.ops)),
        tensor=bool(getattr(adapter, "tensor", False)),
        create_graph=bool(adapter.create_graph),
        forward_mode=bool(adapter.forward_mode),
        transforms=tuple(adapter.transforms),
        hvp_transforms=tuple(adapter.hvp_transforms),
        max_depth=adapter.max_depth,
        problem=problem,
        inspection=inspection,
        adapter_class=class_name,
        adapter_source=source,
        inspected=inspected,
        variants=variants,
        forms=forms,
        surface_note=note,
        built_from={op: parts for op, parts in adapter.built_from.items() if op in ops},
    )
    return [facts]


def structure(state: EngineState, units: Sequence[Any], extra: Any = None) -> list[StructureReport]:
    """The structural phase (one unit: the ops to use, None for the engine's simplest)."""
    reference = reference_named(state.settings.reference)
    return [run_structure(state.adapter, ops, reference) for ops in marked(units)]


def isolation(state: EngineState, cases: Sequence[IsolationCase], extra: Any = None) -> list[CaseOutcome]:
    """The isolation pass's cases: each one's findings and one-op evidence."""
    settings, adapter = state.settings, state.adapter
    ops, variants = campaign_ops(settings, adapter), campaign_variants(settings, adapter)
    forms = campaign_forms(settings, adapter)
    return [check_case(case, settings, ops, adapter, variants, forms) for case in marked(cases)]


def settle(state: EngineState, units: Sequence[Sequence[Finding]], extra: Any = None) -> list[list[Finding]]:
    """Settling (one unit: the campaign's findings)."""
    return [settle_findings(findings, state.adapter, state.settings.dtype) for findings in marked(units)]


def edge_cases(state: EngineState, graphs: Sequence[Graph], extra: Any = None) -> list[list[EdgeProblem]]:
    """The edge-value phase's cases: each one's differences from torch."""
    return [check_edge(state.adapter, graph) for graph in marked(graphs)]


def edge_findings(
    state: EngineState, units: Sequence[Sequence[EdgeProblem]], extra: Any = None
) -> list[EdgeReport]:
    """The edge cases' differences as findings, re-checked on rebuilds (one unit: every problem)."""
    adapter, dtype = state.adapter, state.settings.dtype
    return [
        EdgeReport(list(problems), with_rates(findings_of(problems, adapter), adapter, dtype))
        for problems in marked(units)
    ]
