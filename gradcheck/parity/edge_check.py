"""The edge-value check: each op at the edges of float64 (its registry entry's `edges` table).

At every edge case the engine's value and gradient must match torch's float64 ones: the same
pattern of finite, +inf, -inf and nan, and within `EDGE_TOLERANCE` where both are finite. An
engine that raises where torch computes a result (Python floats raise at `1 / 0` and on overflow)
differs from torch: that is reported too, as kind `exception`. Random graphs never go here: they
keep every node well inside its domain. Which cases differ is decided here (with the edge
tolerances); what kind of difference each is, by `gradcheck.parity.classify` as in every phase.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import mpmath
import numpy as np

from gradcheck.engines.adapter import EngineAdapter, loaded
from gradcheck.engines.origin import Raised
from gradcheck.engines.torch_engine import torch
from gradcheck.graphs.edge_values import describe
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.spellings import Form, adapter_spellings, applicable, spelled
from gradcheck.parity.answers import one_point
from gradcheck.parity.classify import classify
from gradcheck.parity.exact import run_exact
from gradcheck.parity.exact_jets import as_mpf, derive
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import FORWARD, Off, Problem, What, raised_problem
from gradcheck.parity.torch_reference import reverse

# Where both are finite: |engine - torch| <= RTOL * |torch| + ATOL (ATOL lets an engine that keeps
# a 1e-17 gradient where torch rounds to 0, or the reverse, pass: both are right to float64 eps).
EDGE_RTOL = 1e-9
EDGE_ATOL = 1e-15
# An edge graph's meta under `--reference exact` (`edge_cases`): its case is judged by the exact answer.
EXACT = "exact"
NO_EXACT_VALUE = (
    "no exact value here (a pole, off the domain, an inf or nan argument, a -0.0 value): judged against torch"
)


@dataclass(frozen=True)
class EdgeProblem:
    """One difference at one edge case: its kind, which check (forward or gradient) and its record."""

    op: str
    graph: Graph
    kind: Kind
    check: str
    problem: Problem

    @property
    def message(self) -> str:
        """The difference in words (the renderer's)."""
        return str(self.problem)

    @property
    def where(self) -> str:
        node = self.graph.nodes[0]
        args = tuple(_short(i.value) for i in self.graph.inputs)
        return describe(args, node.attr)


def edge_graph(op: str, args: Sequence[Any], attrs: dict[str, Any], reference: str = "torch") -> Graph:
    """The one-op graph `op(*args)` with cotangent weights that do not cancel (tensor rows too);
    `reference` "exact" marks it to be judged by the exact answer (`check_edge`)."""
    inputs = [
        Input(f"x{i}", np.asarray(v, dtype=np.float64), np.shape(v))
        if np.ndim(v)
        else Input(f"x{i}", float(v))
        for i, v in enumerate(args)
    ]
    node = OpNode(op, tuple(range(len(args))), tuple(sorted(attrs.items())))
    meta = {"kind": "tensor"} if any(np.ndim(v) for v in args) else {}
    if reference == EXACT:
        meta["reference"] = EXACT
    return Graph(inputs, [node], [len(args)], meta={**meta, "edge": True})


def torch_edge(graph: Graph) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """torch's float64 value and input gradients at an edge case, and the cotangent it used."""
    leaves = [torch.tensor(np.asarray(i.value, dtype=np.float64), requires_grad=True) for i in graph.inputs]
    node = graph.nodes[0]
    out = REGISTRY[node.op].apply_torch(node.operands(leaves), node.attr)
    cot = _cotangent(tuple(out.shape))
    grads = reverse([out], leaves, [torch.from_numpy(cot)])
    values = [np.zeros(leaf.shape) if g is None else g.detach().numpy() for leaf, g in zip(leaves, grads)]
    return out.detach().numpy(), values, cot


def check_edge(adapter: EngineAdapter, graph: Graph, classified: bool = True) -> list[EdgeProblem]:
    """The engine against torch at one edge case (a graph made by `edge_graph`); with `classified`
    False, the difference's kind is the comparison's own (a re-check that only asks whether the
    case still fails need not classify it again)."""
    with np.errstate(all="ignore"):
        value_t, grads_t, cot = torch_edge(graph)
    values = [np.asarray(i.value) if adapter.tensor else i.value for i in graph.inputs]
    cotangent = [cot if adapter.tensor else float(cot)]
    op = graph.nodes[0].op
    try:
        with np.errstate(all="ignore"):
            forward, grads = adapter.run(graph, values, cotangent)
    except Exception as e:  # the engine raised where torch computed a value
        # `run` computes the value and gradients in one call: as in random graphs (`classify`),
        # an exception is the gradient check's, so a bug both meet is one finding
        return [EdgeProblem(op, graph, Kind.EXCEPTION, "gradient", raised_problem(Raised.of(e, adapter)))]
    try:
        value_e = np.asarray(forward[0], dtype=np.float64)
        grads_e = [np.asarray(g, dtype=np.float64) for g in grads]
    except Exception as e:  # e.g. Python's (-1.0) ** 0.5 is a complex number; a raising __float__
        problem = Problem(What.NOT_REAL, FORWARD, raised=Raised.of(e))
        return [EdgeProblem(op, graph, Kind.WRONG_TYPE, "forward", problem)]
    with np.errstate(all="ignore"):
        problems = _compare(op, graph, "forward", value_e, value_t)
        # slopes at a kink are conventions: the kink cases judge them (a tie of infinities has no
        # one-sided slopes to judge a share by: the finite ties judge the engine's)
        judged_slopes = not _at_a_kink(graph) and not _tied_infinities(graph)
        if judged_slopes:
            for inp, g_e, g_t in zip(graph.inputs, grads_e, grads_t):
                problems += _compare(op, graph, "gradient", g_e, g_t, inp.name)
        answers = _Answers(graph, cot, value_e, grads_e, value_t, grads_t, judged_slopes)
        if graph.meta.get("reference") == EXACT:
            problems = answers.against_exact(problems)
        elif problems and problems[0].problem.what in (What.EDGE_PATTERN, What.EDGE_VALUE):
            problems = answers.judged_by_exact(problems)
        elif not problems:
            problems = answers.torch_flushed()
    if not classified:
        return problems[:1]
    return [_classified(problem, adapter, cotangent) for problem in problems[:1]]


@dataclass
class _Answers:
    """One edge case's three answers side by side, entry by entry (the value, then each input's
    gradient): the engine's, torch's and, where a real derivative exists, the exact one."""

    graph: Graph
    cot: np.ndarray
    value_e: np.ndarray
    grads_e: list[np.ndarray]
    value_t: np.ndarray
    grads_t: list[np.ndarray]
    judged_slopes: bool

    @property
    def engine(self) -> np.ndarray:
        return np.concatenate([np.ravel(self.value_e), *(np.ravel(g) for g in self.grads_e)])

    @property
    def torch(self) -> np.ndarray:
        return np.concatenate([np.ravel(self.value_t), *(np.ravel(g) for g in self.grads_t)])

    def exact(self) -> np.ndarray | None:
        """The exact value and gradients (`parity.exact`, each the float64 nearest), or None
        where none can be had: an argument inf or nan, no real derivative there, a tensor case, a
        branch the exact evaluation cannot decide. Which entries it judges: `judged`."""
        values = [np.asarray(i.value, dtype=np.float64) for i in self.graph.inputs]
        if self.graph.is_tensor or not all(np.isfinite(v).all() for v in values):
            return None
        if not has_real_derivative(self.graph):
            return None
        try:
            exact = run_exact(self.graph, *one_point(self.graph, values, [self.cot]))
        except Exception:
            return None
        if exact.undecided[0]:
            return None
        truth = np.concatenate([exact.forward[:, 0], exact.grads[:, 0]])
        return truth if truth.shape == self.engine.shape else None

    @property
    def judged(self) -> np.ndarray:
        """Per entry, whether the exact answer judges it: not the value at a -0.0 argument (the
        exact numbers' 0 has no sign: atan2(-0.0, -1) is -pi, theirs pi), nor slopes at a kink."""
        values = [np.asarray(i.value, dtype=np.float64) for i in self.graph.inputs]
        signed_zero = any(bool(np.any((v == 0) & np.signbit(v))) for v in values)
        judged = np.full(self.engine.shape, self.judged_slopes)
        judged[: np.size(self.value_e)] = not signed_zero
        return judged

    def _entry_judged(self, problem: EdgeProblem) -> bool:
        entry = problem.problem.input if problem.check != FORWARD else None
        return bool(self.judged[self._names().index(entry)]) if entry in self._names() else False

    def judged_by_exact(self, problems: list[EdgeProblem]) -> list[EdgeProblem]:
        """Differences from torch judged by the exact value before they are the engine's: where
        the engine is within the edge tolerance of the exact answer and torch is not, torch is off
        (`Off.TORCH`, each problem given its entry's exact value); where no exact value can be
        had, or the engine is off it too, the problems stand as they are."""
        truth = self.exact()
        if truth is None or not all(self._entry_judged(p) for p in problems):
            return problems
        judged = self.judged
        engine, torch = self.engine[judged], self.torch[judged]
        if not _close(engine, truth[judged]) or _close(torch, truth[judged]):
            return problems
        return [self._given(p, truth, Off.TORCH) for p in problems]

    def torch_flushed(self) -> list[EdgeProblem]:
        """Where the engine passed against torch but torch gave 0 for an entry whose exact value
        is a number float64 holds (atan2's slope at (1e300, 1e-300), where torch's x² + y²
        overflows), the engine being that number: torch is off (the edge tolerance's absolute
        part hides it). Else nothing."""
        engine, torch = self.engine, self.torch
        flushed = (torch == 0) & (engine != 0) & np.isfinite(engine)
        if not flushed.any():
            return []
        truth = self.exact()
        judged = self.judged
        if truth is None or not _close(engine[judged], truth[judged]):
            return []
        off = flushed & (truth != 0) & np.isfinite(truth) & judged
        first = np.flatnonzero(off)[:1]
        return [self._given(self._entry_problem(int(i), truth), truth, Off.TORCH) for i in first]

    def against_exact(self, problems: list[EdgeProblem]) -> list[EdgeProblem]:
        """`--reference exact`: the engine judged by the exact answer where it can be had (who is
        off each entry: the engine, or the engine and torch), and against torch's conventions,
        said in the problem, where it cannot (a pole, off the domain, an inf or nan argument)."""
        truth = self.exact()
        if truth is None:
            return [replace(p, problem=replace(p.problem, note=NO_EXACT_VALUE)) for p in problems]
        engine, torch, judged = self.engine, self.torch, self.judged
        wrong = ~_close_each(engine, truth) & judged
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            off = Off.BOTH if not _close_each(torch, truth)[i] else Off.ENGINE
            return [self._given(self._entry_problem(i, truth), truth, off)]
        if problems:  # the engine is the exact answer wherever it is judged: torch's, or unjudged
            return [
                self._given(p, truth, Off.TORCH)
                if self._entry_judged(p)
                else replace(p, problem=replace(p.problem, note=NO_EXACT_VALUE))
                for p in problems
            ]
        return self.torch_flushed()

    def _names(self) -> list[str | None]:
        return [None, *(i.name for i in self.graph.inputs)]

    def _entry_problem(self, i: int, truth: np.ndarray) -> EdgeProblem:
        """Entry `i`'s difference as an edge problem (its kind by the one classifier later)."""
        entry = self._names()[i]
        check = FORWARD if entry is None else "gradient"
        e, t = float(self.engine[i]), float(self.torch[i])
        if _pattern(np.array(e)) != _pattern(np.array(truth[i])):
            problem = Problem(What.EDGE_PATTERN, check, input=entry, engine=e, reference=t)
            kind = Kind.NONFINITE
        else:
            problem = Problem(What.EDGE_VALUE, check, input=entry, engine=e, reference=t, error=abs(e - t))
            kind = Kind.WRONG_VALUE if entry is None else Kind.WRONG_GRADIENT
        return EdgeProblem(self.graph.nodes[0].op, self.graph, kind, check, problem)

    def _given(self, problem: EdgeProblem, truth: np.ndarray, off: Off) -> EdgeProblem:
        """`problem` with who is off and its entry's exact value."""
        entry = problem.problem.input if problem.check != FORWARD else None
        names = self._names()
        exact_entry = float(truth[names.index(entry)]) if entry in names else None
        return replace(problem, problem=replace(problem.problem, off=off, exact=exact_entry))


def has_real_derivative(graph: Graph) -> bool:
    """Whether an elementwise edge case's op has a finite real value and first derivatives at its
    arguments, before float64 rounds them: not at a pole (1 / 0, sqrt at 0), not off the domain
    (a negative base's rate along its exponent), so there is a true answer to judge torch by. A
    finite value that only overflows float64 counts (atan2's gradient at (0, 5e-324) is 2e323).
    Ops without an elementwise exact form (reductions, matmul) are left to the exact evaluation."""
    node = graph.nodes[0]
    spec = REGISTRY[node.op]
    if spec.mpmath is None:
        return True
    arrays = np.broadcast_arrays(*(np.asarray(i.value, dtype=np.float64) for i in graph.inputs))
    for point in zip(*(a.reshape(-1) for a in arrays)):
        with np.errstate(all="ignore"):
            found = derive(spec, [as_mpf(x) for x in point], node.attr, 1)
        assert found.d1 is not None
        if not all(mpmath.isfinite(v) for v in (found.value, *found.d1)):
            return False
    return True


def _close_each(answer: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Per entry: whether an answer is the exact one to the edge tolerance (`_close`)."""
    same = _pattern(answer) == _pattern(exact)
    finite = np.isfinite(exact)
    with np.errstate(all="ignore"):
        near = np.abs(answer - exact) <= EDGE_RTOL * np.abs(exact) + EDGE_ATOL
    return same & (near | ~finite)


def _close(answer: np.ndarray, exact: np.ndarray) -> bool:
    """Whether an answer is the exact one to the edge tolerance: the same pattern of finite, inf
    and nan, and within EDGE_RTOL of it (plus EDGE_ATOL) where finite."""
    if (_pattern(answer) != _pattern(exact)).any():
        return False
    finite = np.isfinite(exact)
    with np.errstate(all="ignore"):
        return bool((np.abs(answer - exact)[finite] <= (EDGE_RTOL * np.abs(exact) + EDGE_ATOL)[finite]).all())


def _classified(problem: EdgeProblem, adapter: EngineAdapter, cotangent: list[Any]) -> EdgeProblem:
    """`problem` with the kind and check the one classifier gives it (a valid subgradient at a tie
    is a convention here as in the random graphs; (0, 0) at maximum's tie is a wrong gradient)."""
    cotangent = [c.tolist() if isinstance(c, np.ndarray) and c.ndim == 0 else c for c in cotangent]
    weighted = Graph(
        problem.graph.inputs, problem.graph.nodes, problem.graph.outputs, None, cotangent, problem.graph.meta
    )
    with np.errstate(all="ignore"):
        difference = classify([problem.problem], weighted, adapter)
    return EdgeProblem(problem.op, problem.graph, difference.kind, difference.check, problem.problem)


def _at_a_kink(graph: Graph) -> bool:
    """Whether an edge case is one of its op's kink cases (same arguments, signs of zero included)."""
    node = graph.nodes[0]
    args = [i.value for i in graph.inputs]
    return any(
        attrs == node.attr
        and len(kink) == len(args)
        and all(
            np.ndim(a) == 0 and float(a) == k and math.copysign(1, a) == math.copysign(1, k)
            for a, k in zip(args, kink)
        )
        for kink, attrs in REGISTRY[node.op].kink_cases
    )


def _tied_infinities(graph: Graph) -> bool:
    """Whether an edge case ties a tie-kinked op's arguments at the same infinity (inf, inf)."""
    args = [np.asarray(i.value, dtype=np.float64) for i in graph.inputs]
    tied = len(args) == 2 and bool(np.all(args[0] == args[1]))
    return tied and REGISTRY[graph.nodes[0].op].kinks.startswith("ties") and bool(np.isinf(args[0]).any())


def edge_cases(ops: Sequence[str], tensor: bool = False, reference: str = "torch") -> list[Graph]:
    """One graph per edge case of each op in `ops` (tensor-row cases only for tensor engines),
    each judged by `reference` ("torch", or "exact" where an exact answer can be had)."""
    graphs = []
    for op in ops:
        for args, attrs in REGISTRY[op].edges:
            if tensor or not any(np.ndim(a) for a in args):
                graphs.append(edge_graph(op, args, attrs, reference))
    return graphs


def check_edges(
    engine: EngineAdapter, ops: Sequence[str] | None = None, reference: str = "torch"
) -> list[EdgeProblem]:
    """Every edge case of the ops `engine` supports (or of `ops`), each compared with torch (and
    judged by the exact answer where it differs, or everywhere with `reference` "exact")."""
    adapter = loaded(engine, "check_edges")
    names = sorted(adapter.ops) if ops is None else [op for op in ops if op in adapter.ops]
    problems: list[EdgeProblem] = []
    forms = [s.form for s in adapter_spellings(adapter)]
    cases = edge_cases(names, adapter.tensor, reference) + spelled_edge_cases(
        forms, names, adapter.tensor, reference
    )
    for graph in cases:
        problems += check_edge(adapter, graph)
    return problems


def spelled_edge_cases(
    forms: Iterable[Form], ops: Sequence[str], tensor: bool = False, reference: str = "torch"
) -> list[Graph]:
    """Each edge case of `ops` again in each of the adapter's spellings `forms` that takes it (an
    integer exponent's at integer exponents; one that differs at nan at no nan operand)."""
    graphs = []
    for form in forms:
        if form.op not in ops:
            continue
        for graph in edge_cases([form.op], tensor, reference):
            node = graph.nodes[0]
            at_nan = any(np.isnan(np.asarray(i.value, dtype=np.float64)).any() for i in graph.inputs)
            if applicable([form], node) and not (form.differs_at_nan and at_nan):
                graphs.append(replace(graph, nodes=[spelled(node, form)]))
    return graphs


def _pattern(x: np.ndarray) -> np.ndarray:
    """Per element: 0 finite, 1 +inf, -1 -inf, 2 nan."""
    return np.where(np.isnan(x), 2, np.where(np.isinf(x), np.sign(x), 0)).astype(int)


def _compare(
    op: str, graph: Graph, check: str, e: np.ndarray, t: np.ndarray, of: str = ""
) -> list[EdgeProblem]:
    entry = of or None  # a gradient's input, or the value
    if e.shape != t.shape:
        e = np.broadcast_to(e, t.shape) if e.size in (1, t.size) else e
        if e.shape != t.shape:
            problem = Problem(What.EDGE_SHAPE, check, input=entry, shape=e.shape, expected=t.shape)
            return [EdgeProblem(op, graph, Kind.WRONG_VALUE, check, problem)]
    pe, pt = _pattern(e), _pattern(t)
    if (pe != pt).any():
        i = int(np.flatnonzero((pe != pt).reshape(-1))[0])
        problem = Problem(
            What.EDGE_PATTERN,
            check,
            input=entry,
            engine=_short(e.reshape(-1)[i]),
            reference=_short(t.reshape(-1)[i]),
        )
        return [EdgeProblem(op, graph, Kind.NONFINITE, check, problem)]
    finite = pt == 0
    err = np.abs(e - t)[finite]
    allowed = (EDGE_RTOL * np.abs(t) + EDGE_ATOL)[finite]
    if (err > allowed).any():
        i = int(np.argmax(err - allowed))
        problem = Problem(
            What.EDGE_VALUE,
            check,
            input=entry,
            engine=_short(e[finite][i]),
            reference=_short(t[finite][i]),
            error=float(err[i]),
            allowed=float(allowed[i]),
        )
        kind = Kind.WRONG_VALUE if check == "forward" else Kind.WRONG_GRADIENT
        return [EdgeProblem(op, graph, kind, check, problem)]
    return []


def _cotangent(shape: tuple[int, ...]) -> np.ndarray:
    """1 for a scalar output; 1, -0.5, 0.25 ... for a row, so sums of softmax do not cancel to 0."""
    size = int(np.prod(shape))
    return ((-0.5) ** np.arange(size)).reshape(shape) if shape else np.array(1.0)


def _short(v: Any) -> Any:
    return v.tolist() if isinstance(v, np.ndarray) else float(v)
