"""Campaign results made by hand, to specify how the reports look without running a campaign.

`triage_campaign()` is a campaign of 40 items in the proportions met on published
engines (bugs, graph code, an adapter's fault, edge behaviour over a few ops at several regions,
conventions) over 2,000 tensor graphs of which 1,500 fail, with problems, snippets and graphs as
long as real ones (a repro with its verdict is about 2.8 KB), every failing graph in a finding.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from gradcheck.campaign import CampaignResult, Failure, GraphRecord, Settings, aggregate
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.records import METRICS
from gradcheck.campaign.report_session import replay_command
from gradcheck.engines.origin import Frame, FrameKind, Producer, Raised
from gradcheck.graphs.registry import TENSOR_OPS
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What

ENGINE = "/home/someone/projects/tensorette/adapters/tensorette_adapter.py:TensoretteAdapter"
REPORT = "/home/someone/projects/tensorette/out/report.json"

# (ops, kind, title's variant, exception raised) of the bugs, most graphs first
BUGS = [
    (("tanh",), Kind.WRONG_GRADIENT, (), ""),
    (("sum",), Kind.EXCEPTION, ("over a tuple of dims",), "TypeError"),
    (("mean",), Kind.EXCEPTION, ("over a tuple of dims", "keeping the reduced dims"), "TypeError"),
    (("add",), Kind.EXCEPTION, ("broadcasting a size-1 dim",), "ValueError"),
    (("mul",), Kind.EXCEPTION, ("broadcasting a size-1 dim",), "ValueError"),
    (("matmul",), Kind.EXCEPTION, ("with a 1-D operand",), "AxisError"),
    (("amax",), Kind.WRONG_GRADIENT, (), ""),
    (("sigmoid",), Kind.WRONG_VALUE, (), ""),
    (("log_softmax",), Kind.WRONG_SECOND_DERIVATIVE, (), ""),
    (("div",), Kind.EXCEPTION, ("with a number on the left",), "TypeError"),
]
GRAPH_CODE = [
    (Kind.STRUCTURAL, "backward() twice does not accumulate like torch"),
    (Kind.NONDETERMINISTIC, "a node used twice"),
]
# (ops, region, kind, exception) of the edge behaviour: 24 findings over 8 ops
EDGES = [
    (("div",), "pole", Kind.EXCEPTION, "ZeroDivisionError"),
    (("div",), "overflow point", Kind.NONFINITE, ""),
    (("div",), "nan/inf", Kind.NONFINITE, ""),
    (("log",), "pole", Kind.EXCEPTION, "ValueError"),
    (("log",), "outside the domain", Kind.EXCEPTION, "ValueError"),
    (("log",), "nan/inf", Kind.NONFINITE, ""),
    (("sqrt",), "pole", Kind.NONFINITE, ""),
    (("sqrt",), "outside the domain", Kind.EXCEPTION, "ValueError"),
    (("sqrt",), "nan/inf", Kind.WRONG_GRADIENT, ""),
    (("exp",), "overflow point", Kind.EXCEPTION, "OverflowError"),
    (("exp",), "nan/inf", Kind.NONFINITE, ""),
    (("exp",), "tiny", Kind.WRONG_VALUE, ""),
    (("pow",), "pole", Kind.EXCEPTION, "ZeroDivisionError"),
    (("pow",), "overflow point", Kind.EXCEPTION, "OverflowError"),
    (("pow",), "outside the domain", Kind.WRONG_TYPE, ""),
    (("pow",), "nan/inf", Kind.NONFINITE, ""),
    (("maximum",), "nan/inf", Kind.WRONG_GRADIENT, ""),
    (("maximum",), "overflow point", Kind.WRONG_GRADIENT, ""),
    (("minimum",), "nan/inf", Kind.WRONG_GRADIENT, ""),
    (("minimum",), "overflow point", Kind.WRONG_GRADIENT, ""),
    (("atan2",), "pole", Kind.NONFINITE, ""),
    (("atan2",), "nan/inf", Kind.NONFINITE, ""),
    (("relu",), "nan/inf", Kind.WRONG_GRADIENT, ""),
    (("relu",), "kink", Kind.NONFINITE, ""),
]
CONVENTIONS = [("amin", "tie"), ("amax", "tie"), ("clamp", "kink"), ("abs", "kink")]


def tensor_graph(op: str, rng: random.Random, nodes: int = 1) -> dict[str, Any]:
    """A graph JSON of `nodes` applications of `op` to a 3x3 input (full-precision values)."""
    values = [[rng.uniform(-3, 3) for _ in range(3)] for _ in range(3)]
    return {
        "format": "minigrad-graph",
        "version": 1,
        "inputs": [{"name": "x0", "value": values, "shape": [3, 3]}],
        "nodes": [{"op": op, "args": [k], "attrs": {}} for k in range(nodes)],
        "outputs": [nodes],
    }


def _problems(rng: random.Random, kind: Kind, raised: str) -> tuple[Problem, ...]:
    point = (("x0", [rng.uniform(-3, 3) for _ in range(9)]),)
    if raised:
        return (Problem(What.RAISED, point=0, inputs=point, raised=Raised(raised, "unsupported operand")),)
    return tuple(
        Problem(
            What.GRADIENT,
            point=0,
            inputs=point,
            input=f"x0[0, {k}]",
            engine=rng.uniform(-1, 1),
            reference=rng.uniform(-1, 1),
            error=0.26,
            allowed=1.1e-09,
            bound=2.75e-10,
            safety=4.0,
        )
        for k in range(3)
    )


def _snippet(graph: dict[str, Any]) -> str:
    """A repro as long as a real one with its verdict (~2.8 KB)."""
    values = repr(graph["inputs"][0]["value"])
    head = f"import torch\nimport numpy as np\n\nx0 = torch.tensor({values}, dtype=torch.float64)\n"
    body = "".join(
        f"# the engine's numbers against torch's, line {k}: print(engine_grads, torch_grads)\n"
        for k in range(28)
    )
    return head + body + "sys.exit(1)\n"


def _made(rng: random.Random, kind: Kind, ops: tuple[str, ...], raised: str = "", **fields: Any) -> Finding:
    """A finding of `kind` on `ops` with problems and a repro as long as real ones."""
    graph = tensor_graph(ops[0] if ops else "mul", rng, nodes=1 if ops else 3)
    check = "second-derivative" if kind is Kind.WRONG_SECOND_DERIVATIVE else "gradient"
    problems = fields.pop("problems", None) or _problems(rng, kind, raised)
    return Finding(kind, ops, check, graph, problems=problems, snippet=_snippet(graph), **fields)


def triage_findings(rng: random.Random, failing: Sequence[int]) -> list[Finding]:
    """The 40 findings in report order, every failing graph index in exactly one (most in bugs)."""
    made = [
        _made(rng, kind, ops, raised, region="ordinary", tier="bug", variant=variant)
        for ops, kind, variant, raised in BUGS
    ]
    for kind, where in GRAPH_CODE:
        rate = "fails 3 of 8 rebuilds" if kind is Kind.NONDETERMINISTIC else ""
        problems = (Problem(What.STRUCTURAL, case=where, note="gradient of x0: engine -6.75, torch -3.375"),)
        made.append(_made(rng, kind, (), phase="structure", where=where, rate=rate, problems=problems))
    fault = Problem(
        What.RAISED,
        point=0,
        raised=Raised(
            "AttributeError",
            "'T' object has no attribute 'expand'",
            Producer.ADAPTER,
            Frame(FrameKind.DEFAULT_SPELLING),
            "expand",
        ),
    )
    made.append(_made(rng, Kind.EXCEPTION, ("expand",), phase="isolation", problems=(fault,)))
    made += [
        _made(rng, kind, ops, raised, phase="edges", region=region, tier="edge", variant=())
        for ops, region, kind, raised in EDGES
    ]
    made += [
        _made(rng, Kind.CONVENTION, (op,), phase="isolation", region=region, variant=())
        for op, region in CONVENTIONS
    ]
    # the failing graphs: 1,000 to the bugs, the rest a few each; a finding counts its graphs
    shares: dict[int, list[int]] = {i: [] for i in range(len(made))}
    for k, index in enumerate(failing):
        shares[k % len(BUGS) if k < 1000 else k % len(made)].append(index)
    return [
        replace(
            f,
            graphs=max(1, len(shares[i])),
            graph_indices=tuple(shares[i]),
            repro=replay_command(REPORT, ENGINE, i),
        )
        for i, f in enumerate(made)
    ]


def triage_campaign(
    graphs: int = 2000, failing: int = 1500, shrunk: int = 10, seed: int = 0
) -> CampaignResult:
    """The 40-item campaign over `graphs` tensor graphs of every tensor op, `failing` of them failing
    (the first `shrunk` shrunk, with their graphs as found and as shrunk)."""
    rng = random.Random(seed)
    failing_indices = sorted(rng.sample(range(graphs), failing))
    findings = triage_findings(rng, failing_indices)
    finding_of = {i: f for f in findings for i in f.graph_indices}
    records = []
    fails = set(failing_indices)
    for index in range(graphs):
        ops = tuple(sorted(rng.sample(TENSOR_OPS, 4)))
        figures = {m: 10 ** rng.uniform(-17, -12) for m in METRICS}
        if index not in fails:
            records.append(GraphRecord(index, ops, True, figures))
            continue
        finding = finding_of[index]
        found = tensor_graph(ops[0], rng, nodes=4)
        failure = Failure(finding.problems, _snippet(found), found, finding=finding)
        if shrunk > 0:
            shrunk -= 1
            failure = Failure(
                finding.problems,
                _snippet(found),
                found,
                _snippet(finding.graph),
                dict(finding.graph),
                finding.ops,
                f"corpus/failure-{index}.json",
                finding,
            )
        records.append(
            GraphRecord(index, ops, False, {**figures, "max_rel_err_torch": 0.26}, finding.problems, failure)
        )
    settings = Settings(engine=ENGINE, graphs=graphs, seed=seed, tensor=True, edges=True)
    return CampaignResult(settings, records, aggregate(records), 95.0, 60.0, findings=findings)
