"""backward() itself, checked before any op: the root's seed, each binary op's accumulation into
one node used on both sides, and each op's use of the gradient that reaches it from above.

These are the mistakes a learner makes in the machinery of a micrograd-style engine rather than
in a derivative formula, and each one makes every graph it touches fail: a `backward()` that never
sets the root's gradient to 1 leaves every gradient 0; one that sets every node's gradient to 1
leaves every gradient 1; an `=` where `+=` belongs in one op's `_backward` loses all but one use
of a node (`x + x` gives 1, not 2); a `_backward` that leaves out `out.grad` is right only where
the gradient from above is 1, so a one-op graph (whose root is seeded with 1) never shows it.
Each check here is built so that a right op elsewhere cannot make it fail, and its finding says
what the mistake is. Each is built `MACHINERY_REBUILDS` times at other addresses: a check that an
order following object ids fails on some builds only is no mistake of the op it names.
`gradcheck.campaign.structure_findings` runs them with the other structural checks, and the
campaign lets their findings explain the graphs they make fail (`gradcheck.campaign.explain`,
`gradcheck.campaign.settling`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from gradcheck.campaign.structure import (
    CaseResult,
    _difference,
    _graph,
    object_style,
    on_rebuilds,
    right_alone,
    tree_graph,
)
from gradcheck.campaign.structure_reference import TORCH, Reference
from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.graphs.generate import Sizes, random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY

SEED = "seed"  # the cause of the root's-seed check and its findings
ACCUMULATION = "accumulation"  # the cause of the one-node-on-both-sides checks
UPSTREAM = "upstream"  # the cause of the under-an-upstream-gradient checks
# The cause of the finding that backward() calls a node's `_backward` before the gradient from above
# has reached it (its topological order not reversed): every op's upstream check gets nothing through.
ORDER = "order"
UNREVERSED = (
    "backward() calls a node's _backward before the gradient from above has reached it (is the "
    "topological order reversed?): gradients stop at the first interior node"
)
# The causes of the findings about backward() itself that explain every wrong gradient, whatever
# the ops: the root's seed, and an order that runs a node before its gradient is in.
EVERY_GRADIENT = (SEED, ORDER)
# The binary ops whose `x OP x` is smooth where x = ACCUMULATION_AT (no tie, kink or pole), so that
# the sum of the two partials is the whole derivative.
SMOOTH_ON_ONE_NODE = ("add", "sub", "mul", "div", "pow", "atan2")
ACCUMULATION_AT = 1.5
UPSTREAM_WEIGHT = 2.0  # the gradient that reaches the op from above in the upstream checks
_ONE_OP = Sizes(inputs=(1, 2), nodes=(1, 1), outputs=(1, 1), deep_every=0)
_CLOSE = 1e-9
# The builds of each check: ids rising, then falling (`rebuilding.spare_leaves`), twice over.
MACHINERY_REBUILDS = 4


def _ratios(engine: np.ndarray, torch: np.ndarray) -> np.ndarray | None:
    """engine / torch over the entries where torch's is nonzero, when the engine is 0 wherever
    torch is and every entry is finite (else None: no one factor relates them)."""
    if engine.shape != torch.shape or not (np.all(np.isfinite(torch)) and np.all(np.isfinite(engine))):
        return None
    nonzero = torch != 0
    if not nonzero.any() or np.any(engine[~nonzero] != 0):
        return None
    return engine[nonzero] / torch[nonzero]


def on_every_build(case: CaseResult) -> bool:
    """Whether a failed check failed on every build: a mistake of the op or of backward(), not an
    order that depends on the build."""
    return case.status == "failed" and case.failures == case.runs


# --- the root's seed --------------------------------------------------------------------------------


def seed_case(adapter: EngineAdapter, ops: Sequence[str], reference: Reference = TORCH) -> CaseResult:
    """backward() of a small tree, its root differentiated as it is: the leaves' gradients against
    the reference's. Its detail names the seed the engine behaves as if it used: every gradient 0
    (never seeded), every gradient 1 (every node set to 1), or k times the reference's (seeded with k)."""
    name = "the root's seed"
    base = "mul" if "mul" in ops else "add" if "add" in ops else None
    combine = "add" if "add" in ops else base
    if base is None or combine is None:
        return CaseResult(name, SEED, "not applicable", detail="the engine has neither add nor mul")
    graph = tree_graph(base, combine)
    values = graph.input_values(0)
    torch = reference.gradients(graph, values, [1.0])

    def attempt(twin: EngineAdapter) -> tuple[str, float | None]:
        _, grads = twin.run(graph, values, [1.0])
        engine = flat_vector(grads)
        if engine.shape != torch.shape:
            return "", None
        if np.all(engine == 0) and np.any(torch != 0):
            return "every gradient is 0: backward() never sets the root's gradient to 1", 0.0
        if np.all(engine == 1) and not np.all(torch == 1):
            return "every gradient is 1: backward() sets each node's gradient to 1, not the root's alone", 1.0
        ratios = _ratios(engine, torch)
        uniform = ratios is not None and np.allclose(ratios, ratios[0], rtol=_CLOSE)
        if ratios is not None and uniform and abs(ratios[0] - 1) > _CLOSE:
            k = float(ratios[0])
            return (
                f"every gradient is {k:g} times {reference.theirs}: "
                f"backward() seeds the root with {k:g}, not 1",
                k,
            )
        return "", None  # another difference is another check's to name

    return on_rebuilds(name, SEED, graph, adapter, MACHINERY_REBUILDS, attempt)


# --- one node on both sides of a binary op ----------------------------------------------------------


def accumulation_graph(op: str) -> Graph:
    """x0 OP x0: one node on both sides, its gradient the sum of the op's two partials."""
    return Graph([Input("x0", ACCUMULATION_AT)], [OpNode(op, (0, 0))], [1], cotangent=[1.0])


def accumulation_case(adapter: EngineAdapter, op: str, reference: Reference = TORCH) -> CaseResult:
    """`x OP x` against the reference, for an op right with two inputs: a gradient equal to one of the two
    partials is an `=` where `+=` belongs in the op's backward (the last use overwrites the other)."""
    name = f"{op} with one node on both sides"
    graph = accumulation_graph(op)
    if not right_alone(adapter, op, at=(ACCUMULATION_AT, ACCUMULATION_AT), reference=reference):
        detail = f"the engine's {op} differs from {reference.alone} alone"
        return CaseResult(name, ACCUMULATION, "not applicable", detail=detail)
    torch = reference.gradients(graph, [ACCUMULATION_AT], [1.0])
    two = _graph(2, [(op, 0, 1)], [2])
    partials = reference.gradients(two, [ACCUMULATION_AT, ACCUMULATION_AT], [1.0])

    one_partial: list[bool] = []

    def attempt(twin: EngineAdapter) -> tuple[str, float | None]:
        _, grads = twin.run(graph, [ACCUMULATION_AT], [1.0])
        engine = flat_vector(grads)
        detail, ratio = _difference(engine, torch, ["gradient of x0"], reference)
        if not detail:
            return "", None
        if engine.shape == (1,) and any(np.isclose(engine[0], p, rtol=_CLOSE, atol=0) for p in partials):
            one_partial.append(True)
            detail = (
                f"x {_symbol(op)} x gives x.grad {float(engine[0])!r}, {reference.name} {float(torch[0])!r}: "
                f"{op}'s backward assigns its gradients (`=` where `+=` belongs), "
                "so one use overwrites the other"
            )
        return detail, ratio

    result = on_rebuilds(name, ACCUMULATION, graph, adapter, MACHINERY_REBUILDS, attempt)
    if result.status == "passed":  # `x OP x` hides an `=` for one operand that runs second
        result = next(
            (
                r
                for r in (reuse_case(adapter, op, side, reference) for side in (0, 1))
                if r.status == "failed"
            ),
            result,
        )
        return result
    return replace(result, assigns=bool(one_partial)) if result.status == "failed" else result


REUSE_OTHER = 0.75  # the other operand of the reuse graphs (inside every smooth op's domain)


def reuse_graph(op: str, side: int, direct: bool = True) -> Graph:
    """(x0 OP x1) * x0 for `side` 0, (x1 OP x0) * x0 for side 1: the mul's backward runs before
    OP's in every topological order (its output needs OP's), so x0's gradient from the mul is
    there when OP's backward adds its own, and an `=` there overwrites it. `direct` False: the
    mul's second operand is a third input of x0's value, the graph whose x0 gradient OP alone gives."""
    args = (0, 1) if side == 0 else (1, 0)
    inputs = [Input("x0", ACCUMULATION_AT), Input("x1", REUSE_OTHER)]
    if not direct:
        inputs.append(Input("x2", ACCUMULATION_AT))
    return Graph(
        inputs,
        [OpNode(op, args), OpNode("mul", (len(inputs), 0 if direct else 2))],
        [len(inputs) + 1],
        cotangent=[1.0],
    )


def reuse_case(adapter: EngineAdapter, op: str, side: int, reference: Reference = TORCH) -> CaseResult:
    """`reuse_graph` against the reference, for an op and a mul right alone: x0's gradient equal to the
    one OP's path alone gives is an `=` where `+=` belongs for that operand of OP's backward. Any
    other difference is not this check's to tell (a mul that leaves out out.grad fails here too,
    and `upstream_case` names it): the case is then not applicable."""
    name = f"{op} with its {'first' if side == 0 else 'second'} operand used again after it"
    graph = reuse_graph(op, side)
    at = (ACCUMULATION_AT, REUSE_OTHER) if side == 0 else (REUSE_OTHER, ACCUMULATION_AT)
    if not (
        right_alone(adapter, op, at=at, reference=reference)
        and right_alone(adapter, "mul", reference=reference)
    ):
        detail = f"the engine's {op} or mul differs from {reference.alone} alone"
        return CaseResult(name, ACCUMULATION, "not applicable", detail=detail)
    values = graph.input_values(0)
    torch = reference.gradients(graph, values, [1.0])
    apart = reuse_graph(op, side, direct=False)
    op_path_only = float(reference.gradients(apart, apart.input_values(0), [1.0])[0])
    assigned: list[bool] = []

    def attempt(twin: EngineAdapter) -> tuple[str, float | None]:
        _, grads = twin.run(graph, values, [1.0])
        engine = flat_vector(grads)
        detail, ratio = _difference(engine, torch, ["gradient of x0", "gradient of x1"], reference)
        if (
            detail
            and engine.shape == torch.shape
            and np.isclose(engine[0], op_path_only, rtol=_CLOSE, atol=0)
        ):
            assigned.append(True)
            written = f"(x0 {_symbol(op)} x1) * x0" if side == 0 else f"(x1 {_symbol(op)} x0) * x0"
            detail = (
                f"{written} gives x0.grad {float(engine[0])!r}, {reference.name} {float(torch[0])!r}: "
                f"{op}'s backward "
                f"assigns its {'first' if side == 0 else 'second'} operand's gradient (`=` where `+=` "
                "belongs), so it overwrites what the mul gave x0 before it"
            )
        return detail, ratio

    result = on_rebuilds(name, ACCUMULATION, graph, adapter, MACHINERY_REBUILDS, attempt)
    if on_every_build(result) and not assigned:  # another mistake: the upstream checks tell which
        detail = f"{result.detail}; not as an `=` would: left to the checks under an upstream gradient"
        return replace(result, status="not applicable", detail=detail)
    return replace(result, assigns=bool(assigned)) if result.status == "failed" else result


def assigning(case: CaseResult) -> bool:
    """Whether a failed accumulation case showed an `=` where `+=` belongs, on every build."""
    return on_every_build(case) and case.assigns


def _symbol(op: str) -> str:
    return {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}.get(op, op)


# --- each op under a gradient from above other than 1 ----------------------------------------------


def upstream_graph(op: str, seed: int = 0) -> Graph | None:
    """A one-op graph of `op` at a point inside its domain, its output weighted by the constant
    `UPSTREAM_WEIGHT` with the engine's mul at the root (whose own backward is then seeded with 1,
    the one place a `_backward` that leaves out `out.grad` is right), so that the op is reached by
    a gradient of 2 from above. None when no one-op graph of `op` can be drawn."""
    rng = np.random.default_rng([0x5EED, seed, sorted(REGISTRY).index(op)])
    one = random_graph(rng, ops=[op], tensor=False, points=1, sizes=_ONE_OP)
    if len(one.nodes) != 1 or one.outputs != [one.n_inputs]:
        return None
    weight = OpNode("mul", (one.n_inputs,), consts=(Constant(1, UPSTREAM_WEIGHT),))
    return Graph(one.inputs, [*one.nodes, weight], [one.n_inputs + 1], cotangent=[1.0])


def upstream_case(adapter: EngineAdapter, op: str, reference: Reference = TORCH) -> CaseResult:
    """`op` under a gradient of 2 from above, for an op right alone (seeded with 1) and a mul by a
    constant right at the root: gradients half torch's are a backward that leaves out `out.grad`."""
    name = f"{op} under a gradient of {UPSTREAM_WEIGHT:g} from above"
    graph = upstream_graph(op)
    if graph is None:
        return CaseResult(name, UPSTREAM, "not applicable", detail=f"no one-op graph of {op} here")
    alone = Graph(graph.inputs, graph.nodes[:1], [graph.n_inputs], cotangent=[1.0])
    weight = OpNode("mul", (0,), consts=(Constant(1, UPSTREAM_WEIGHT),))
    weight_alone = Graph([Input("x0", 1.25)], [weight], [1], cotangent=[1.0])
    parts = (
        (alone, f"the engine's {op} differs from {reference.alone} alone"),
        (weight_alone, f"the engine's mul by a number differs from {reference.alone} alone"),
    )
    for part, why in parts:
        if not _right(adapter, part, reference):
            return CaseResult(name, UPSTREAM, "not applicable", detail=why)
    values = graph.input_values(0)
    torch = reference.gradients(graph, values, [1.0])
    labels = [f"gradient of {i.name}" for i in graph.inputs]

    def attempt(twin: EngineAdapter) -> tuple[str, float | None]:
        _, grads = twin.run(graph, values, [1.0])
        engine = flat_vector(grads)
        detail, ratio = _difference(engine, torch, labels, reference)
        if not detail:
            return "", None
        ratios = _ratios(engine, torch)
        if ratios is not None and np.allclose(ratios, 1 / UPSTREAM_WEIGHT, rtol=_CLOSE):
            detail = (
                f"{detail}: {op}'s backward leaves out out.grad (the gradient from above): right where "
                f"out.grad is 1, as at the root, and off by that factor everywhere else"
            )
        else:
            detail = f"{detail}: {op}'s backward is right only where the gradient from above is 1"
        return detail, ratio

    return on_rebuilds(name, UPSTREAM, graph, adapter, MACHINERY_REBUILDS, attempt)


def _right(adapter: EngineAdapter, graph: Graph, reference: Reference = TORCH) -> bool:
    """Whether the engine gives the reference's value and gradients of one-point `graph`."""
    values = graph.input_values(0)
    try:
        forward, grads = adapter.run(graph, values, [1.0])
    except Exception:
        return False
    engine = flat_vector([*forward, *grads])
    expected = reference.answers(graph, values, [1.0])
    labels = [str(k) for k in range(len(expected))]
    return engine.shape == expected.shape and not _difference(engine, expected, labels)[0]


def machinery_cases(
    adapter: EngineAdapter, ops: Sequence[str], reference: Reference = TORCH
) -> list[CaseResult]:
    """The root's seed, then each smooth binary op on one node, then each scalar op under a gradient
    from above (object-style engines: a function-style engine has no backward() of its own)."""
    reason = object_style(adapter)
    if reason:
        return [CaseResult("backward() itself", SEED, "not applicable", detail=reason)]
    cases = [seed_case(adapter, ops, reference)]
    if cases[0].status == "failed":  # every gradient is off by the seed: nothing else can be told
        return cases
    cases += [accumulation_case(adapter, op, reference) for op in SMOOTH_ON_ONE_NODE if op in ops]
    if "mul" in ops:  # every op where each was run once already, else the phase's own ops
        tried = adapter.ops_tried_at_load
        scalar = [op for op in ops if op in REGISTRY and not REGISTRY[op].tensor_only]
        scalar = [op for op in scalar if tried or op in ("add", "mul")]
        cases += [upstream_case(adapter, op, reference) for op in scalar]
    return cases


def unreached(cases: Sequence[CaseResult]) -> list[CaseResult]:
    """The upstream checks, when backward() itself is what fails them: at least two ops applicable,
    and through every one of them nothing of the gradient from above reached its inputs (each
    input's gradient 0, on every build), as when the nodes run in topological order, not reversed.
    Else []."""
    applicable = [c for c in cases if c.cause == UPSTREAM and c.status != "not applicable"]
    if len(applicable) < 2:
        return []
    starved = [c for c in applicable if c.status == "failed" and on_every_build(c) and c.ratio == 0]
    return starved if len(starved) == len(applicable) else []
