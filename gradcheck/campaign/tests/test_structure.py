"""The structural phase names each bug of an engine's graph code once, as the graph code's, never an op's.

The engines are `gradcheck.testing.structural_engines`: one micrograd-style Value with one bug each.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from gradcheck.campaign.findings import Finding
from gradcheck.campaign.phases import PATH_BUDGET
from gradcheck.campaign.settling import (
    BUILD_ORDER_REBUILDS,
    fold_into_build_order,
    rebuild_failures,
    reuses,
    verdict_changes_with_build,
    with_rates,
    without_reuse,
)
from gradcheck.campaign.structure import (
    BUILD_ORDER,
    EVERY_PATH,
    REBUILDS,
    RECURSION_LIMIT,
    depth_case,
    on_fresh_stack,
    paths_case,
    sharing_graphs,
)
from gradcheck.campaign.structure_findings import run_structure
from gradcheck.cli import main
from gradcheck.cli.replay import Saved, load_saved, replay
from gradcheck.engines import EngineAdapter, load_engine
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.classify import torch_at
from gradcheck.parity.kinds import Kind
from gradcheck.testing import reordered_engines as reordered
from gradcheck.testing import structural_engines as se
from gradcheck.testing.fragment_engines import MulGradientOffAdapter

ROOT = Path(__file__).resolve().parents[3]
ENGINES = "gradcheck.testing.structural_engines"
BUGS = {
    "DoubledSharedAdapter": "a shared node's gradient is counted twice",
    "OverwriteAdapter": "gradients are assigned, not accumulated (`=` where `+=` belongs)",
    "LeafZeroGradAdapter": "zero_grad leaves interior gradients, which the next backward() adds again",
    "RecursiveSortAdapter": RECURSION_LIMIT,
    "IdOrderAdapter": BUILD_ORDER,
}


@pytest.mark.parametrize("adapter", sorted(BUGS))
def test_each_graph_code_bug_is_one_structural_finding_without_ops(adapter):
    report = run_structure(getattr(se, adapter)())
    assert len(report.findings) == 1, [f.title for f in report.findings]
    (finding,) = report.findings
    assert finding.kind in (Kind.STRUCTURAL, Kind.NONDETERMINISTIC)
    assert finding.ops == ()
    assert finding.where.startswith(BUGS[adapter])


@pytest.mark.parametrize(
    "engine", ["minigrad", "gradcheck.engines.torch_engine:TorchAdapter", f"{ENGINES}:CorrectAdapter"]
)
def test_correct_engines_have_no_structural_finding(engine):
    report = run_structure(load_engine(engine))
    assert report.findings == []
    assert {c.status for c in report.cases} <= {"passed", "not applicable"}


def test_micrograd_shows_its_recursion_limit_and_its_backward_twice():
    pytest.importorskip("micrograd")
    names = [f.where for f in run_structure(load_engine("micrograd")).findings]
    assert sorted(names) == sorted([RECURSION_LIMIT, "backward() twice does not accumulate like torch"])
    assert len(names) == 2


def test_a_wrong_mul_is_no_graph_code_finding_the_checks_share_nodes_through_add_instead():
    report = run_structure(MulGradientOffAdapter())
    assert report.findings == [], "mul's own bug, not the graph code's"
    cases = {c.name: c for c in report.cases}
    assert cases["a node used twice"].status == "passed", "checked with add"
    two = cases["a node shared between two outputs"]
    assert two.status == "not applicable" and "weights two outputs with the engine's mul" in two.detail


def test_micrograds_structural_findings_come_with_repros_in_its_own_terms():
    pytest.importorskip("micrograd")
    by_cause = {f.structural_cause: f for f in run_structure(load_engine("micrograd")).findings}
    twice = by_cause["backward-twice"].snippet
    assert "from micrograd.engine import Value" in twice and twice.count(".backward()") == 2
    scope: dict = {}
    exec(twice, scope)  # the second backward() adds interior gradients again: -6.75 where torch has -3.375
    assert scope["x0"].grad == -6.75
    chain = by_cause["depth"].snippet
    assert "for _ in range(" in chain
    with pytest.raises(RecursionError):
        exec(chain, {})


def test_a_recursion_limit_is_found_to_the_op():
    (case,) = [c for c in run_structure(se.RecursiveSortAdapter()).cases if c.cause == "depth"]
    depth = int(case.detail.split()[4].rstrip(":"))
    assert case.depth == depth
    x = y = se.RecursiveSortValue(1.0)
    for _ in range(depth - 1):
        y = y + 1.0
    on_fresh_stack(y.backward)  # one op less than the limit works on a stack as deep as the check's
    assert x.grad == 1.0
    for _ in range(20):  # a few ops more overflow, whatever the stack's depth here
        y = y + 1.0
    with pytest.raises(RecursionError):
        y.backward()


def _nested(levels: int, work):
    return _nested(levels - 1, work) if levels else work()


def test_the_recursion_limit_is_one_finding_at_one_depth_however_deep_the_callers_stack():
    # a console script, `python -m` and a pytest plugin call the phase from stacks of other depths
    adapter = se.RecursiveSortAdapter()
    shallow = depth_case(adapter, "add")
    deep = _nested(300, lambda: depth_case(adapter, "add"))
    assert shallow.status == deep.status == "failed"
    assert shallow.detail == deep.detail and shallow.depth == deep.depth
    (found,) = _nested(200, lambda: run_structure(adapter)).findings
    assert found.where == RECURSION_LIMIT and found.graph_code.depth == shallow.depth
    assert str(shallow.depth) not in found.title, "the depth is no part of the finding's identity"


def test_function_style_engines_skip_the_object_checks():
    pytest.importorskip("jax")
    report = run_structure(load_engine("jax"))
    statuses = {c.cause: c.status for c in report.cases}
    assert statuses["sharing"] == "passed"
    assert statuses["backward-twice"] == statuses["depth"] == "not applicable"


class TorchScalars(EngineAdapter):
    """torch's 0-d float64 tensors through the default object-style methods, as a user writes it:
    a second backward() raises (torch frees the graph's buffers without retain_graph)."""

    name = "torch-scalars"
    ops = frozenset({"add", "mul", "tanh"})

    def leaf(self, value):
        import torch

        return torch.tensor(float(value), dtype=torch.float64, requires_grad=True)

    def value(self, node):
        return float(node.detach())


def test_an_engine_refusing_a_second_backward_as_torch_does_has_no_structural_finding():
    pytest.importorskip("torch")
    report = run_structure(TorchScalars())
    statuses = {c.cause: c.status for c in report.cases}
    assert report.findings == []
    assert statuses["backward-twice"] == statuses["reset"] == "not applicable"
    assert statuses["sharing"] == "passed"


def test_a_graph_without_reuse_computes_the_same():
    graph = sharing_graphs("mul", "add")["a diamond"]
    tree = without_reuse(graph)
    assert reuses(graph) and not reuses(tree)
    assert tree.n_inputs > graph.n_inputs
    same = torch_at(graph, graph.input_values(0), [1.0]).forward
    np.testing.assert_array_equal(torch_at(tree, tree.input_values(0), [1.0]).forward, same)


class _Flaky(se.CorrectAdapter):
    """Every other gradient doubled: a difference that only some rebuilds show."""

    calls = 0

    def gradients(self, outputs, inputs, cotangent):
        type(self).calls += 1
        grads = super().gradients(outputs, inputs, cotangent)
        return [2 * g for g in grads] if self.calls % 2 else grads


def _finding(graph) -> Finding:
    return Finding(kind=Kind.WRONG_GRADIENT, ops=tuple(graph.ops()), check="gradient", graph=graph.to_dict())


def test_a_finding_that_only_some_rebuilds_show_is_nondeterministic_with_its_rate():
    graph = sharing_graphs("mul", "add")["a diamond"].instance(0)
    (flaky,) = with_rates([_finding(graph)], _Flaky())
    assert flaky.kind is Kind.NONDETERMINISTIC
    assert flaky.rate == f"fails {REBUILDS // 2} of {REBUILDS} rebuilds"
    assert "nondeterministic (fails 4 of 8 rebuilds)" in flaky.title
    (steady,) = with_rates([_finding(graph)], se.DoubledSharedAdapter())
    assert steady.kind is Kind.WRONG_GRADIENT


class _OrderFlippingValue(se.Value):
    """backward() from every other new root in a right order, and from the others leaves first,
    as an order following ids is on builds whose ids fall: which root is which depends on the
    roots before it."""

    roots = 0

    def order(self):
        if not hasattr(self, "leaves_first"):
            _OrderFlippingValue.roots += 1
            self.leaves_first = _OrderFlippingValue.roots % 2 == 0
        order = super().order()
        return order[::-1] if self.leaves_first else order


class _OrderFlipping(se.CorrectAdapter):
    value_class = _OrderFlippingValue


@pytest.mark.parametrize("roots_before", [0, 1])
def test_backward_itself_failing_on_some_builds_only_is_the_build_orders_finding(roots_before):
    # every rebuilt check fails on some of its builds only: one finding of the build order, no op
    # wrong under a gradient from above whichever build came first, and the shared-node checks run
    _OrderFlippingValue.roots = roots_before
    report = run_structure(_OrderFlipping())
    order = next(f for f in report.findings if f.where == BUILD_ORDER)
    assert order.kind is Kind.NONDETERMINISTIC and order.ops == ()
    # a deep chain is built once (the campaign judges it on shorter chains rebuilt: `settling`)
    assert {f.where for f in report.findings} <= {BUILD_ORDER, "a deep chain differs from torch"}
    upstream = [c for c in report.cases if c.cause == "upstream"]
    assert upstream and all(0 < c.failures < c.runs for c in upstream), "seen failing on some builds"
    assert any(c.cause == "sharing" and c.status == "failed" for c in report.cases)


FRESH_PROCESS_IDS = """
from itertools import pairwise
from gradcheck.campaign.rebuilding import spare_leaves
from gradcheck.testing.structural_engines import CorrectAdapter
adapter = CorrectAdapter()
kept = [adapter.leaf(0.0) for _ in range(4000)]  # what follows comes from fresh memory
falls = []
for build in range(4):
    kept.append(spare_leaves(adapter, build))
    made = [adapter.leaf(1.0) for _ in range(8)]
    falls.append(sum(id(a) > id(b) for a, b in pairwise(made)))
    kept.append(made)
print(*falls)
"""


def test_the_next_builds_ids_rise_after_even_builds_and_fall_after_odd_ones():
    # in a fresh process (a campaign's worker) addresses rise with each node made, so an order
    # that follows ids would pass every rebuild (a worker once found no id-ordered backward in 160)
    run = [sys.executable, "-c", FRESH_PROCESS_IDS]
    done = subprocess.run(run, capture_output=True, text=True, check=True)
    falls = [int(n) for n in done.stdout.split()]
    assert falls[0] <= 1 and falls[2] <= 1, f"of 7 ids, so many fall after each build: {falls}"
    assert falls[1] >= 5 and falls[3] >= 5, f"of 7 ids, so many fall after each build: {falls}"


class FirstNodeMulWrong(se.CorrectAdapter):
    """Right unless a graph's first op node is a mul: its verdict depends on the order the nodes
    are created in, not on which nodes there are."""

    mul_first = False  # of the graph built last (a rebuild's twin shares it)

    def build(self, graph, values, program=None):
        FirstNodeMulWrong.mul_first = bool(graph.nodes) and graph.nodes[0].op == "mul"
        return super().build(graph, values) if program is None else super().build(graph, values, program)

    def gradients(self, outputs, inputs, cotangent):
        grads = super().gradients(outputs, inputs, cotangent)
        return [2.0 * g if self.mul_first and g is not None else g for g in grads] if grads else grads


def test_a_random_finding_whose_verdict_changes_with_the_nodes_order_is_the_build_orders():
    nodes = [OpNode("mul", (0, 1)), OpNode("tanh", (2,))]
    inputs = [Input("x0", 0.5), Input("x1", -1.5), Input("x2", 0.25)]
    graph = Graph(inputs, nodes, [3, 4], cotangent=[1.0, 1.0])
    adapter = FirstNodeMulWrong()
    assert rebuild_failures(graph, adapter) == REBUILDS, "the same on every plain rebuild"
    assert verdict_changes_with_build(graph, adapter, BUILD_ORDER_REBUILDS), "not when tanh is created first"
    order = Finding(
        Kind.NONDETERMINISTIC, (), "gradient", graph.to_dict(), phase="structure", where=BUILD_ORDER
    )
    random = Finding(Kind.WRONG_GRADIENT, ("mul", "tanh"), "gradient", graph.to_dict(), graph_indices=(3,))
    (folded,) = fold_into_build_order([order, random], adapter)
    assert folded.kind is Kind.NONDETERMINISTIC and 3 in folded.graph_indices
    unfolded = fold_into_build_order([order, random])  # without the adapter, no rebuilds
    assert [f.ops for f in unfolded] == [(), ("mul", "tanh")]


class DoubledLastBitsVarying(se.CorrectAdapter):
    """Gradients twice torch's on every build, their last bit different on every other build (a
    sum taken in another order): wrong the same way whatever the build."""

    builds = 0

    def gradients(self, outputs, inputs, cotangent):
        DoubledLastBitsVarying.builds += 1
        wobble = 1.0 + 2.0**-52 * (DoubledLastBitsVarying.builds % 2)
        return [2.0 * wobble * g for g in super().gradients(outputs, inputs, cotangent)]


def test_a_verdict_changing_only_in_the_last_bits_does_not_depend_on_the_build():
    nodes = [OpNode("mul", (0, 1)), OpNode("tanh", (2,))]
    graph = Graph([Input("x0", 0.5), Input("x1", -1.5)], nodes, [3], cotangent=[1.0])
    assert not verdict_changes_with_build(graph, DoubledLastBitsVarying(), BUILD_ORDER_REBUILDS)


def test_replay_says_fixed_only_when_every_rebuild_agrees(capsys):
    graph = sharing_graphs("mul", "add")["a diamond"].instance(0)
    saved = Saved(graph, None, "a diamond")
    console = Console(force_terminal=False, width=200)
    assert replay(saved, f"{ENGINES}:CorrectAdapter", console) == 0
    assert replay(replace(saved), _Flaky(), console) == 1
    out = capsys.readouterr().out
    assert "fixed" in out and "nondeterministic (fails 4 of 8 rebuilds)" in out


@pytest.mark.slow
@pytest.mark.parametrize("adapter", sorted(BUGS))
def test_a_campaign_names_the_bug_once_and_blames_no_op(adapter, tmp_path, capsys):
    engine = f"{ENGINES}:{adapter}"
    status = main(["run", "--engine", engine, "--graphs", "12", "--out", str(tmp_path), "--no-save"])
    report = json.loads((tmp_path / "report.json").read_text())
    titles = [f["title"] for f in report["findings"]]
    assert status == 1
    assert len(report["findings"]) == 1, titles
    (finding,) = report["findings"]
    assert finding["kind"] in ("structural", "nondeterministic") and finding["ops"] == []
    assert all(op["failures"] == 0 for op in report["ops"].values())
    assert report["structure"]["checks"] and report["run"]["structure_seconds"] > 0
    assert "Structural phase" in (tmp_path / "report.html").read_text()
    assert f"structural phase: {len(report['structure']['checks'])} checks" in capsys.readouterr().out


@pytest.mark.slow
def test_without_the_phase_the_same_bug_is_blamed_on_ops(tmp_path):
    engine = f"{ENGINES}:DoubledSharedAdapter"
    main(["run", "--engine", engine, "--graphs", "12", "--out", str(tmp_path), "--no-save", "--no-structure"])
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["structure"] is None and "--no-structure" in report["run"]["repeat_command"]
    assert report["findings"] and all(f["ops"] for f in report["findings"])


def test_structural_findings_are_not_saved_as_corpus_graphs(tmp_path):
    # a recursion limit is no graph a corpus could replay; the phase runs again on every campaign
    engine = f"{ENGINES}:RecursiveSortAdapter"
    corpus = tmp_path / "corpus"
    status = main(
        ["run", "--engine", engine, "--graphs", "3", "--out", str(tmp_path), "--corpus", str(corpus)]
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert status == 1 and [f["phase"] for f in report["findings"]] == ["structure"]
    assert not list(corpus.glob("*.json"))


def test_a_structural_finding_replays_by_running_the_phase_again(tmp_path, capsys):
    engine = f"{ENGINES}:RecursiveSortAdapter"
    main(["run", "--engine", engine, "--graphs", "2", "--out", str(tmp_path), "--no-save", "--no-edges"])
    capsys.readouterr()
    report = str(tmp_path / "report.json")
    assert main(["replay", report, "--finding", "0"]) == 1
    assert f"still fails: structural: {RECURSION_LIMIT}" in capsys.readouterr().out
    assert main(["replay", report, "--finding", "0", "--engine", f"{ENGINES}:CorrectAdapter"]) == 0
    assert "(fixed)" in capsys.readouterr().out


# --- a backward that follows every path ------------------------------------------------------------


def test_a_backward_that_follows_every_path_is_found_by_its_time_and_one_that_sorts_is_not():
    found = paths_case(reordered.PathSum(), "add")
    assert found.status == "failed" and found.seconds_per_path > 0
    assert "follows each of the 2^depth paths" in found.detail and " s " not in found.detail
    # the same op rules, with a topological backward: microseconds at every depth
    assert paths_case(reordered.LocalDerivatives(), "add").status == "passed"
    assert paths_case(load_engine("minigrad"), "add").status == "passed"


@pytest.mark.slow
@pytest.mark.supervised
def test_an_exponential_backward_under_a_timeout_is_one_graph_code_finding(tmp_path, capsys):
    # a correct engine whose backward recurses down every path, with no cap on its graphs: main
    # d176279 reported its timeouts against every op, then died printing a finding with no graph
    engine = "gradcheck.testing.reordered_engines:UncappedPathSum"
    argv = ["run", "--engine", engine, "--graphs", "120", "--seed", "1", "--graph-timeout", "5"]
    status = main([*argv, "--out", str(tmp_path), "--no-save", "--no-edges"])
    report = json.loads((tmp_path / "report.json").read_text())
    (finding,) = report["findings"]
    assert status == 1 and finding["tier"] == "graph-code" and finding["where"] == EVERY_PATH
    assert finding["graphs"] > 1 and finding["graph_indices"], "the graphs it cannot finish count in it"
    assert not [f for f in report["findings"] if f["kind"] == "timeout"]
    assert report["settings"]["max_paths"] == PATH_BUDGET, "counted work, the same on any machine"
    assert f"more than {PATH_BUDGET} paths are not run" in " ".join(finding["problems"])
    assert "Traceback" not in capsys.readouterr().err


def test_replay_judges_a_finding_as_its_campaign_found_the_engines_backward(tmp_path):
    # a path sum's 512 products at -289.37: within the rounding of a sum over paths, not of torch's
    alarms = json.loads((ROOT / "gradcheck/parity/tests/data/path_sum_false_alarms.json").read_text())
    case = next(c for c in alarms["cases"] if c["title"].startswith("add ∘ atan ∘ neg ∘ sub"))
    report = {"tool": "gradcheck", "settings": {"engine": case["engine"]}, "findings": [case]}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    console = Console(file=io.StringIO(), width=100)
    assert replay(load_saved(path), None, console) == 1, "judged as torch sums, it differs"
    report["settings"]["accumulation"] = "paths"
    path.write_text(json.dumps(report))
    assert replay(load_saved(path), None, console) == 0
