"""The structural phase: the engine's graph code checked apart from its ops, before any random graph.

Deterministic graphs on the simplest ops the engine has (`mul` for a node that matters, `add` to
reuse it; either one alone when the engine has only one, or when the other differs from torch
alone: that is an op's bug, not the graph code's) exercise what no op rule decides: a node
used twice and eight times, a diamond, a node shared between two outputs (compared with the
reference's answers, `structure_reference`: torch's, or the exact values with `--reference exact`;
each rebuilt `REBUILDS` times while the earlier builds stay alive, so ids and set orders change),
`backward()` twice, gradients reset and taken again and interior nodes' gradients (object-style
adapters), chains 10^3, 10^4 and 10^5 deep, bisected
down to the deepest the engine takes when one fails, and backward() timed on ladders of shared
nodes of growing depth: a backward that recurses down every path (2^depth of them) instead of
visiting each node once is named, and tells the campaign to judge its gradients by the rounding
of a sum over paths and to leave out the graphs it cannot finish in time (`phases.following_paths`).

The checks are run, and their differences diagnosed into one finding per cause, by
`gradcheck.campaign.structure_findings`.

The other phases' findings are re-checked on rebuilds and folded into a structural finding
about shared nodes by `gradcheck.campaign.settling`, which builds on `retaining` here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.campaign.findings import Finding
from gradcheck.campaign.rebuilding import Kept, retaining, spare_leaves
from gradcheck.campaign.structure_reference import TORCH, Reference
from gradcheck.checker.flat import flat_vector
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.functional import FunctionAdapter
from gradcheck.engines.origin import Raised, adapter_frame
from gradcheck.engines.tracing import applying
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.wording import exception, frame

REBUILDS = 8  # how many times a finding's graph is rebuilt and re-checked before it is named
PHASE_REBUILDS = 32  # how many times the structural phase builds each shared-node graph afresh
DEPTHS = (1_000, 10_000, 100_000)  # the chain depths tried, stopping at the first that fails
# The name of the recursion-limit finding: its identity, the same whatever depth it was met at
# (the depth, in its problems and `GraphCode.depth`, depends on the Python and the engine).
RECURSION_LIMIT = "recursion limit in backward() of deep chains"
# The name of the finding of gradients that change from build to build of one graph: whichever
# checks showed it (the shared-node graphs, or backward() itself on a chain of two ops).
BUILD_ORDER = "gradients depend on the build (backward()'s order follows object ids or sets)"
# The name of the finding of a backward that follows every path from the output (2^depth on a
# ladder of shared nodes) instead of every node once.
EVERY_PATH = "backward() follows every path, not every node: its time doubles with each shared level"
# The one finding of a backward that visits a node once per path to it (a topological sort without
# its visited set, the tutorials' typical slip): shared nodes counted once per path, and the time
# of following every path; the shared-node and ladder checks each show a half of it.
NO_VISITED = (
    "backward() visits a node once per path to it (a topological sort without its visited set): "
    "a shared node's gradient counted once per path, the time doubling with each shared level"
)
PATH_FINDINGS = (EVERY_PATH, NO_VISITED)  # the findings of a backward that follows every path
# The ladder's depths, tried in turn until one backward() takes `LADDER_SECONDS` (a backward that
# visits each node once takes microseconds at any of them), and how much slower 4 levels more
# must make it to count as following paths (2^4 = 16 times the paths; twice the nodes at most).
LADDER_DEPTHS = tuple(range(4, 41, 4))
LADDER_SECONDS = 0.1
PATH_GROWTH = 6.0
_VALUES = (1.5, -0.75, 0.625, 2.25)  # the inputs: exact in binary, no product of two is 1


@dataclass(frozen=True)
class CaseResult:
    """One structural check: its name, what it exercises (`cause`), the outcome and the evidence.

    status: "passed", "failed" or "not applicable"; failures of `runs` rebuilds differed from
    the reference; detail: the first difference (or why the check does not apply); ratio: the
    engine's first differing gradient over the reference's.
    """

    name: str
    cause: str
    status: str
    runs: int = 0
    failures: int = 0
    detail: str = ""
    ratio: float | None = None
    graph: Graph | None = None
    depth: int | None = None  # the depth a chain first fails at (the deep-chain check)
    seconds_per_path: float | None = None  # a backward that follows every path: its cost per path
    raised: Raised | None = None  # the engine's exception, when the first difference was one
    recursion_limit: bool = False  # the deep-chain check met Python's recursion limit
    assigns: bool = False  # an op on one node gave one partial: its backward assigns (`machinery`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cause": self.cause,
            "status": self.status,
            "runs": self.runs,
            "failures": self.failures,
            "detail": self.detail,
        }


@dataclass
class StructureReport:
    """The phase's checks, the findings diagnosed from them and the time it took."""

    cases: list[CaseResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        """One line: "structural phase: 10 checks, 9 passed, 1 failed, 1 not applicable; 0.4 s"."""
        counts = {s: sum(c.status == s for c in self.cases) for s in ("passed", "failed", "not applicable")}
        parts = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        return (
            f"structural phase: {len(self.cases)} checks ({parts}), {len(self.findings)} finding(s); "
            f"{self.seconds:.1f} s"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"checks": [c.to_dict() for c in self.cases]}


# --- the graphs -------------------------------------------------------------------------------------


def simplest_ops(ops: Sequence[str]) -> tuple[str, str] | None:
    """(the op that makes a node worth sharing, the op that reuses it): mul and add when present."""
    base = "mul" if "mul" in ops else "add" if "add" in ops else None
    combine = "add" if "add" in ops else base
    return None if base is None or combine is None else (base, combine)


def _graph(n_inputs: int, nodes: list[tuple[str, int, int]], outputs: list[int]) -> Graph:
    inputs = [Input(f"x{i}", _VALUES[i]) for i in range(n_inputs)]
    cotangent = [1.0, -2.0][: len(outputs)]
    return Graph(inputs, [OpNode(op, (a, b)) for op, a, b in nodes], outputs, cotangent=cotangent)


def sharing_graphs(base: str, combine: str) -> dict[str, Graph]:
    """The cases of shared nodes: node 2 = x0 base x1 is used again and again."""
    return {
        "a node used twice": _graph(2, [(base, 0, 1), (combine, 2, 2)], [3]),
        "a node used eight times": _graph(
            2, [(base, 0, 1), (combine, 2, 2), (combine, 3, 3), (combine, 4, 4)], [5]
        ),
        "a diamond": _graph(2, [(base, 0, 1), (combine, 2, 1), (base, 2, 0), (combine, 3, 4)], [5]),
        "a node used directly and through another": _graph(
            2, [(base, 0, 1), (base, 2, 1), (combine, 3, 2)], [4]
        ),
        "a node shared between two outputs": _graph(2, [(base, 0, 1), (combine, 2, 0), (base, 2, 1)], [3, 4]),
    }


def tree_graph(base: str, combine: str) -> Graph:
    """A chain with no node used twice, for backward twice, resets and interior gradients."""
    return _graph(4, [(base, 0, 1), (combine, 4, 2), (base, 5, 3)], [6])


def ladder_graph(combine: str, depth: int) -> Graph:
    """`depth` levels, each combining two distinct nodes made from the level below (it combined
    with the identity constant, twice): 2^depth paths from the output to x0 (the gradient is
    2^depth for add). Two distinct parents, not one node on both sides: an engine that keeps a
    node's parents in a set would see one parent and one path."""
    identity = Constant(1, 1.0 if combine == "mul" else 0.0)
    nodes, below = [], 0
    for _ in range(depth):
        first, second = 1 + len(nodes), 2 + len(nodes)
        nodes += [
            OpNode(combine, (below,), consts=(identity,)),
            OpNode(combine, (below,), consts=(identity,)),
        ]
        nodes.append(OpNode(combine, (first, second)))
        below = len(nodes)  # the combining node: inputs and nodes are numbered together
    return Graph([Input("x0", _VALUES[0])], nodes, [below], cotangent=[1.0])


def chain_graph(combine: str, depth: int) -> Graph:
    """x0 combined with the constant 1 `depth` times in a row (no node is used twice)."""
    nodes = [OpNode(combine, (k,), consts=(Constant(1, 1.0),)) for k in range(depth)]
    return Graph([Input("x0", _VALUES[0])], nodes, [depth], cotangent=[1.0])


# --- running them -----------------------------------------------------------------------------------


def _difference(
    engine: np.ndarray, expected: np.ndarray, labels: Sequence[str], reference: Reference = TORCH
) -> tuple[str, float | None]:
    """The first entry where the engine differs from the reference's answer, as text and ratio
    ("" when none)."""
    close = np.isclose(engine, expected, rtol=1e-9, atol=1e-12) | (np.isnan(engine) & np.isnan(expected))
    if close.all():
        return "", None
    k = int(np.flatnonzero(~close)[0])
    ratio = float(engine[k] / expected[k]) if expected[k] != 0 else None
    return f"{labels[k]}: engine {float(engine[k])!r}, {reference.name} {float(expected[k])!r}", ratio


def _repeat(
    name: str,
    cause: str,
    graph: Graph,
    runs: int,
    attempt: Callable[[], tuple[str, float | None]],
    adapter: EngineAdapter | None = None,
) -> CaseResult:
    """`attempt` run `runs` times (each a fresh build); an exception is a difference, except
    NotImplementedError or one raised in the adapter's code or gradcheck's defaults (the adapter
    offers no `backward`, say): the adapter cannot express the check, which does not apply."""
    failures, first, ratio, first_raised = 0, "", None, None
    for _ in range(runs):
        raised = None
        try:
            detail, r = attempt()
        except NotImplementedError as e:
            return CaseResult(name, cause, "not applicable", detail=f"the adapter cannot: {e}", graph=graph)
        except Exception as e:
            where = adapter_frame(e, adapter) if adapter is not None else None
            if where is not None:
                detail = f"the adapter cannot: {type(e).__name__}: {e} (in {frame(where)})"
                return CaseResult(name, cause, "not applicable", detail=detail, graph=graph)
            raised = Raised.of(e)
            detail, r = exception(raised), None
        if detail:
            failures += 1
            if not first:
                first, ratio, first_raised = detail, r, raised
    status = "failed" if failures else "passed"
    return CaseResult(name, cause, status, runs, failures, first, ratio, graph, raised=first_raised)


def on_rebuilds(
    name: str,
    cause: str,
    graph: Graph,
    adapter: EngineAdapter,
    runs: int,
    attempt: Callable[[EngineAdapter], tuple[str, float | None]],
) -> CaseResult:
    """`attempt` (`_repeat`'s) on `runs` builds by a twin of `adapter` that keeps each one alive,
    so that the next one's nodes sit at other addresses (`rebuilding.retaining`)."""
    twin, kept = retaining(adapter)

    def once() -> tuple[str, float | None]:
        try:
            return attempt(twin)
        finally:
            kept.rebuild += 1

    try:
        return _repeat(name, cause, graph, runs, once, adapter)
    finally:
        kept.clear()


def sharing_case(
    adapter: EngineAdapter,
    name: str,
    graph: Graph,
    runs: int = PHASE_REBUILDS,
    reference: Reference = TORCH,
) -> CaseResult:
    """A shared-node graph's gradients against the reference's, rebuilt `runs` times."""
    values = graph.input_values(0)
    cotangent = list(graph.cotangent or [1.0])
    expected = reference.gradients(graph, values, cotangent)
    labels = [f"gradient of {i.name}" for i in graph.inputs]

    def attempt(twin: EngineAdapter) -> tuple[str, float | None]:
        _, grads = twin.run(graph, values, cotangent)
        return _difference(flat_vector(grads), expected, labels, reference)

    return on_rebuilds(name, "sharing", graph, adapter, runs, attempt)


def object_style(adapter: EngineAdapter) -> str:
    """Why the object checks (backward twice, resets, interior gradients, deep chains) do not apply
    ("" if they do). An adapter that offers no `backward` (it overrides `gradients` only, as
    docs/adapters.md allows) finds out when gradcheck's default raises: not applicable either."""
    if isinstance(adapter, FunctionAdapter):
        return "a function-style engine has no backward() to call twice and stores no gradients"
    cls = type(adapter)
    if cls.build is not EngineAdapter.build or cls.run is not EngineAdapter.run:
        return "the adapter builds graphs its own way (it overrides build or run)"
    return ""


# An object check: given the adapter, the graph's nodes (its `leaves` first, the output last), the
# gradients it observes; None for a node whose gradient the engine does not keep.
Observe = Callable[[EngineAdapter, list[Any], int], list[Any]]


class SecondBackwardRefused(Exception):
    """The engine raised on a second backward() through the same graph: torch's own default (its
    buffers are freed unless retain_graph=True), so no bug of the graph code."""


def _second_backward(adapter: EngineAdapter, output: Any) -> None:
    try:
        adapter.backward(output)
    except Exception as e:
        raise SecondBackwardRefused(f"{type(e).__name__}: {e}") from e


def _backward_twice(adapter: EngineAdapter, nodes: list[Any], leaves: int) -> list[Any]:
    adapter.backward(nodes[-1])
    _second_backward(adapter, nodes[-1])
    return [adapter.grad_of(n) for n in nodes[:leaves]]


def _reset_and_again(adapter: EngineAdapter, nodes: list[Any], leaves: int) -> list[Any]:
    adapter.backward(nodes[-1])
    adapter.zero_grad(nodes)
    _second_backward(adapter, nodes[-1])
    return [adapter.grad_of(n) for n in nodes[:leaves]]


def _interior(adapter: EngineAdapter, nodes: list[Any], leaves: int) -> list[Any]:
    adapter.backward(nodes[-1])
    return [adapter.grad_of(n) for n in nodes[leaves:-1]]


OBJECT_CHECKS: dict[str, tuple[str, Observe]] = {
    "backward() twice": ("backward-twice", _backward_twice),
    "gradients reset and taken again": ("reset", _reset_and_again),
    "interior nodes' gradients": ("interior", _interior),
}


def _observe(adapter: EngineAdapter, graph: Graph, observe: Observe, kept: Kept) -> list[Any]:
    leaves = [adapter.leaf(v) for v in graph.input_values(0)]
    nodes = adapter.program(graph).run(leaves, adapter.operand)
    kept += [nodes, spare_leaves(adapter, kept.rebuild)]
    kept.rebuild += 1
    return observe(adapter, list(nodes), graph.n_inputs)


def object_case(
    adapter: EngineAdapter, name: str, graph: Graph, runs: int = REBUILDS, reference: Reference = TORCH
) -> CaseResult:
    """One of `OBJECT_CHECKS` on `graph`, against what the reference observes (torch's, with its
    interior gradients retained, or the exact values)."""
    cause, observe = OBJECT_CHECKS[name]
    reason = object_style(adapter)
    if reason:
        return CaseResult(name, cause, "not applicable", detail=reason, graph=graph)
    expected = reference.observed(graph, cause)
    labels = [f"gradient of {graph.name_of(i)}" for i in range(graph.n_inputs + len(graph.nodes))]
    labels = labels[: graph.n_inputs] if cause != "interior" else labels[graph.n_inputs : -1]
    kept = Kept()
    unkept: list[str] = []

    def attempt() -> tuple[str, float | None]:
        try:
            grads = _observe(adapter, graph, observe, kept)
        except SecondBackwardRefused as e:
            unkept.append(f"the engine refuses a second backward() through one graph, as torch does: {e}")
            return "", None
        if any(g is None for g in grads):
            unkept.append("the engine keeps no gradient on interior nodes")
            return "", None
        return _difference(flat_vector([adapter.plain(g) for g in grads]), expected, labels, reference)

    result = _repeat(name, cause, graph, runs, attempt, adapter)
    if unkept and result.status == "passed":
        return CaseResult(name, cause, "not applicable", detail=unkept[0], graph=graph)
    return result


def _chain_attempt(adapter: EngineAdapter, combine: str, depth: int) -> tuple[str, float | None]:
    """A chain `depth` deep built op by op (no graph object of that size) through the methods the
    random graphs use (`leaf`, the compiled `apply`, `operand` for the constant 1), its gradient
    against 1."""
    x0 = adapter.leaf(_VALUES[0])
    step = adapter.program(chain_graph(combine, 1)).steps[0][0]  # the adapter's apply of `combine`
    one = Constant(1, 1.0)
    y = x0
    applying(combine)
    for _ in range(depth):
        y = step([y, adapter.operand(one)], {})
    (g,) = adapter.gradients([y], [x0], [1.0])
    return _difference(flat_vector([0.0 if g is None else adapter.plain(g)]), np.ones(1), ["gradient of x0"])


def depth_case(adapter: EngineAdapter, combine: str) -> CaseResult:
    """Chains 10^3, 10^4, 10^5 deep; at the first that fails by recursion, the deepest that works.
    Run on a fresh thread's stack: how deep the caller's stack is (a console script, `python -m`,
    a pytest plugin) then does not move the depth at which a recursive backward() gives up."""
    name = "deep chains"
    reason = object_style(adapter)
    if reason:
        return CaseResult(name, "depth", "not applicable", detail=reason)
    return on_fresh_stack(lambda: _chains(adapter, combine, name))


def _chains(adapter: EngineAdapter, combine: str, name: str) -> CaseResult:
    passed, graph = 0, chain_graph(combine, 3)
    for depth in DEPTHS:
        outcome = _try_chain(adapter, combine, depth)
        if isinstance(outcome, NotApplicable):
            return CaseResult(name, "depth", "not applicable", detail=str(outcome))
        if outcome is RecursionError:
            limit = _bisect(adapter, combine, passed, depth)
            detail = (
                f"recursion limit at depth {limit + 1}: a chain of {limit} ops works, one of {limit + 1} "
                f"raises RecursionError (Python's recursion limit is {sys.getrecursionlimit()})"
            )
            return CaseResult(
                name, "depth", "failed", 1, 1, detail, graph=graph, depth=limit + 1, recursion_limit=True
            )
        if isinstance(outcome, Raised):
            detail = f"a chain {depth} deep: {exception(outcome)}"
            return CaseResult(name, "depth", "failed", 1, 1, detail, graph=graph, depth=depth, raised=outcome)
        if outcome:
            detail = f"a chain {depth} deep: {outcome}"
            return CaseResult(name, "depth", "failed", 1, 1, detail, graph=graph, depth=depth)
        passed = depth
    return CaseResult(name, "depth", "passed", len(DEPTHS), 0, f"chains up to {DEPTHS[-1]} deep work")


def paths_case(adapter: EngineAdapter, combine: str) -> CaseResult:
    """backward() timed on ladders of shared nodes (`ladder_graph`) of growing depth: a backward
    that visits each node once takes about as long at every depth; one that recurses down every
    path takes twice as long with each level. On a fresh stack, as the deep chains."""
    name = "a ladder of shared nodes"
    reason = object_style(adapter)
    if reason:
        return CaseResult(name, "paths", "not applicable", detail=reason)
    return on_fresh_stack(lambda: _ladders(adapter, combine, name))


def _ladders(adapter: EngineAdapter, combine: str, name: str) -> CaseResult:
    seconds: dict[int, float] = {}
    for depth in LADDER_DEPTHS:
        try:
            seconds[depth] = _ladder_seconds(adapter, combine, depth)
            if seconds[depth] < LADDER_SECONDS:  # the least of three: a pause of the machine's is no path
                seconds[depth] = min(
                    seconds[depth], *(_ladder_seconds(adapter, combine, depth) for _ in range(2))
                )
        except Exception as e:  # the graph code's other findings say what is wrong with it
            return CaseResult(
                name,
                "paths",
                "not applicable",
                detail=f"a ladder {depth} deep: {exception(Raised.of(e, adapter))}",
            )
        if seconds[depth] >= LADDER_SECONDS:
            break
    depths = sorted(seconds)
    last = depths[-1]
    graph = ladder_graph(combine, 3)
    # the details hold no time measured (report.json is the same on every run); the rate is kept
    # apart for the campaign (`phases.following_paths`)
    if len(depths) < 2 or seconds[last] < LADDER_SECONDS:
        detail = f"backward() of ladders up to {last} deep (2^{last} paths) takes under {LADDER_SECONDS:g} s"
        return CaseResult(name, "paths", "passed", len(depths), 0, detail, graph=graph)
    before = depths[-2]
    growth = seconds[last] / max(seconds[before], 1e-9)
    if growth < PATH_GROWTH:
        detail = (
            f"backward() grows slowly with the depth of a ladder (under {PATH_GROWTH:g} times for 4 levels)"
        )
        return CaseResult(name, "paths", "passed", len(depths), 0, detail, graph=graph)
    detail = (
        f"backward() of a ladder {last} deep takes {PATH_GROWTH:g} times or more as long as one "
        f"{before} deep: it follows each of the 2^depth paths, not each node once"
    )
    per_path = seconds[last] / 2.0**last
    return CaseResult(name, "paths", "failed", len(depths), 1, detail, graph=graph, seconds_per_path=per_path)


def _ladder_seconds(adapter: EngineAdapter, combine: str, depth: int) -> float:
    """How long the engine's gradients of a ladder `depth` deep take (the build not counted)."""
    graph = ladder_graph(combine, depth)
    leaves = [adapter.leaf(v) for v in graph.input_values(0)]
    nodes = adapter.program(graph).run(leaves, adapter.operand)
    started = time.perf_counter()
    adapter.gradients([nodes[-1]], leaves, [1.0])
    return time.perf_counter() - started


def on_fresh_stack(work: Callable[[], Any]) -> Any:
    """`work()` on a new thread, whose stack is as deep wherever this is called from."""
    with ThreadPoolExecutor(1, thread_name_prefix="gradcheck-deep-chains") as thread:
        return thread.submit(work).result()


class NotApplicable(str):
    """Why a check cannot run through this adapter (its own code or a default it relies on raised)."""


def right_alone(
    adapter: EngineAdapter, op: str, at: Sequence[float] = _VALUES[:2], reference: Reference = TORCH
) -> bool:
    """Whether the engine's `op` of two inputs gives the reference's value and gradients at the
    checks' inputs (or `at`): the structural checks build on it, so that a difference there is the
    graph code's."""
    graph = _graph(2, [(op, 0, 1)], [2])
    values, cotangent = list(at), list(graph.cotangent or ())
    try:
        forward, grads = adapter.run(graph, values, cotangent)
    except Exception:
        return False
    engine = flat_vector([*forward, *grads])
    expected = reference.answers(graph, values, cotangent)
    return engine.shape == expected.shape and not _difference(engine, expected, ["output", "x0", "x1"])[0]


def _try_chain(adapter: EngineAdapter, combine: str, depth: int) -> Any:
    """ "" when the chain works, RecursionError when it overflows, `NotApplicable` when the
    adapter's code raised, the engine's exception as a record, else what the engine did wrong."""
    try:
        detail, _ = _chain_attempt(adapter, combine, depth)
    except RecursionError:
        return RecursionError
    except Exception as e:
        raised = Raised.of(e, adapter)
        if raised.by_adapter:
            return NotApplicable(f"the adapter cannot: {exception(raised)}")
        return raised
    return detail


def _bisect(adapter: EngineAdapter, combine: str, works: int, fails: int) -> int:
    """The deepest chain between `works` and `fails` that does not overflow the stack."""
    while fails - works > 1:
        middle = (works + fails) // 2
        if _try_chain(adapter, combine, max(middle, 1)) is RecursionError:
            fails = middle
        else:
            works = middle
    return works
