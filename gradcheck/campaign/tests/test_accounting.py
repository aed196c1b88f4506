"""Every failing graph accounted for once: explained by the finding shown to be its
cause, shrunk into one, or counted among the unexplained graphs, never a finding of its own; and
each finding shows its most telling example.

The engines are `gradcheck.testing.fragment_engines`: one bug each that once came out as many
findings, or shown at its weakest point.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from gradcheck.campaign import (
    METRICS,
    Backend,
    Failure,
    GraphRecord,
    Settings,
    real_backend,
    run_campaign,
    unexplained,
)
from gradcheck.campaign.accounting import account_for_failures
from gradcheck.campaign.alike import DID_NOT_FAIL_AGAIN, Likeness, first_alike
from gradcheck.campaign.blame import Diagnosed, finding_of, node_values
from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.explain import Explaining, culprits, explain, variant, weighting_graph
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.pool import Campaign, Inline
from gradcheck.campaign.settling import reordered
from gradcheck.campaign.structure import BUILD_ORDER
from gradcheck.campaign.supervisor import Supervisor
from gradcheck.cli import main
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.classify import classify, torch_at
from gradcheck.parity.compare import failing_check
from gradcheck.parity.kinds import Kind
from gradcheck.testing import fragment_engines as fe

ENGINES = "gradcheck.testing.fragment_engines"


def campaign(adapter: str, runner=None, **settings):
    options = {"graphs": 150, "seed": 1, **settings}
    return run_campaign(Settings(engine=f"{ENGINES}:{adapter}", **options), real_backend(), runner=runner)


def only_finding(result):
    assert len(result.findings) == 1, [f.title for f in result.findings]
    assert unexplained(result.records) is None, "every failing graph has its finding"
    (finding,) = result.findings
    assert set(finding.graph_indices) == {r.index for r in result.failures}
    return finding


# --- one bug, one item -----------------------------------------------------------------------------


@pytest.mark.slow
def test_an_abs_that_overwrites_its_input_is_one_finding_against_abs():
    # abs alone is right; the graphs that use its (negative) input elsewhere fail in many ways
    result = campaign("InplaceAbsAdapter")
    assert len(result.failures) > 20
    finding = only_finding(result)
    assert "abs" in finding.ops and finding.culprits == ("abs",)
    assert finding.kind in (Kind.WRONG_VALUE, Kind.WRONG_GRADIENT)


@pytest.mark.slow
def test_a_backward_in_id_order_is_one_graph_code_finding_with_the_op_echoes_folded_into_it():
    # in a worker process of its own, as `gradcheck run` runs an engine: the ids, and so this
    # engine's backward order, depend on what its process allocated before (a test worker's
    # earlier tests, here)
    # a budget that lets every graph shrink to the end (counted in checks: the same when loaded)
    with Supervisor(jobs=1) as runner:
        result = campaign("IdOrderedBackwardAdapter", runner=runner, shrink_budget=30_000)
    finding = only_finding(result)
    assert finding.phase == "structure" and finding.ops == () and finding.kind is Kind.NONDETERMINISTIC
    assert any(" — nondeterministic" in title for title in finding.merged.folded), "per-op echoes"
    assert all(stats.failures == 0 for stats in result.ops.values()), "no op is blamed"


@pytest.mark.slow
def test_a_wrong_mul_is_one_finding_also_where_only_the_weighting_of_several_outputs_uses_it():
    result = campaign("MulGradientOffAdapter")
    finding = only_finding(result)  # not one per op a graph ends in, and no graph-code finding
    assert finding.ops == ("mul",) and finding.kind is Kind.WRONG_GRADIENT
    through_weighting = [
        g
        for r in result.failures
        if "mul" not in (g := Graph.from_dict(r.failure.graph)).ops() and len(g.outputs) > 1
    ]
    assert through_weighting, "graphs with no mul node fail through the mul weighting their outputs"


def test_a_node_failing_by_a_known_rule_is_counted_in_its_finding_unless_it_is_a_better_example():
    adapter = fe.MulGradientOffAdapter()

    def failing(x0: float, x1: float):
        nodes = [OpNode("mul", (0, 1)), OpNode("tanh", (2,))]
        check = failing_check(Graph([Input("x0", x0), Input("x1", x1)], nodes, [3], cotangent=[1.0]), adapter)
        assert check is not None
        return check.failure, classify(check.problems, check.failure, adapter)

    first = explain(*failing(0.5, 1.5), Explaining(()), adapter, index=0).finding
    assert first.ops == ("mul",) and len(first.graph["nodes"]) == 1, "a finding made of the node alone"
    graph, cause = failing(0.7, -1.2)
    strongest = replace(first, excess=math.inf)
    again = explain(graph, cause, Explaining((strongest,)), adapter, index=1).finding
    assert again.graph == strongest.graph and again.graph_indices == (1,), "counted, not made anew"
    weakest = replace(first, excess=0.0)
    better = explain(graph, cause, Explaining((weakest,)), adapter, index=1).finding
    assert better.graph != weakest.graph and better.ops == ("mul",), "a better example is a finding"


def test_the_weighting_of_several_outputs_as_a_graph_computes_their_weighted_sum():
    graph = Graph(
        [Input("x0", 0.5)], [OpNode("tanh", (0,)), OpNode("neg", (0,))], [1, 2], cotangent=[0.25, -3.0]
    )
    values = node_values(graph)
    weighting = weighting_graph(graph, values)
    assert [n.op for n in weighting.nodes] == ["mul", "mul", "add"] and len(weighting.outputs) == 1
    (total,) = torch_at(weighting, weighting.input_values(0), [1.0]).forward[:, 0]
    assert total == 0.25 * math.tanh(0.5) + -3.0 * -0.5
    assert torch_at(weighting, weighting.input_values(0), [1.0]).grads[:, 0].tolist() == [0.25, -3.0]


def test_a_graph_built_in_another_order_computes_the_same_bits():
    rng = np.random.default_rng(0)
    for seed in range(20):
        graph = random_graph(np.random.default_rng(seed), ops=["add", "mul", "tanh", "neg", "sub"])
        other = reordered(graph, rng)
        for i, node in enumerate(other.nodes):
            assert all(a < other.n_inputs + i for a in node.args), "each node after its arguments"
        assert sorted(other.ops()) == sorted(graph.ops())
        point, cotangent = graph.input_values(0), [1.0] * len(graph.outputs)
        mine, theirs = torch_at(graph, point, cotangent), torch_at(other, point, cotangent)
        assert np.array_equal(mine.forward, theirs.forward) and np.array_equal(mine.grads, theirs.grads)


@pytest.mark.slow
def test_a_tanh_derivative_written_1_minus_t_is_one_finding_shown_where_it_is_far_off():
    finding = only_finding(campaign("TanhOneMinusTAdapter"))
    assert finding.ops == ("tanh",) and finding.kind is Kind.WRONG_GRADIENT
    graph = Graph.from_dict(finding.graph)
    (x,) = graph.input_values(0)
    assert abs(x) > 0.1, "not a tiny input, where 1 - t and 1 - t**2 nearly agree"
    engine = fe.TanhOneMinusTAdapter().run(graph, [x], list(graph.cotangent))[1][0]
    torch = torch_at(graph, [x], list(graph.cotangent)).grads[0, 0]
    assert abs(engine - torch) > 0.1 * abs(torch), "far off, not barely outside the allowance"
    assert finding.excess is not None and finding.excess > 1e6


# --- the unexplained graphs --------------------------------------------------------------------


def test_graphs_nothing_explains_and_no_time_to_shrink_are_one_unexplained_entry(tmp_path, capsys):
    # abs alone is right, so nothing explains the first abs graph until one is shrunk: no budget
    out = tmp_path / "out"
    argv = ["run", "--engine", f"{ENGINES}:InplaceAbsAdapter", "--graphs", "40", "--seed", "1"]
    status = main([*argv, "--no-edges", "--shrink-budget", "0", "--no-save", "--out", str(out)])
    console = " ".join(capsys.readouterr().out.split())
    report = json.loads((out / "report.json").read_text())
    assert status == 1 and report["findings"] == [], "no finding of their own"
    entry = report["unexplained"]
    assert entry["graphs"] == report["totals"]["failed"] > 0
    assert entry["reasons"] == {"the shrink budget was spent before its turn": entry["graphs"]}
    smallest = entry["smallest"]
    assert smallest["index"] in entry["graph_indices"] and smallest["graph"]["nodes"] and smallest["problems"]
    assert f"unexplained graphs: {entry['graphs']} failing graph(s) that no finding explains" in console
    assert f"the smallest, graph {smallest['index']}" in console


def flaky_accounting(known, shrunk_to_no_op=False):
    """Graphs 0..9 failing, each shrunk by a shrinker that finds it passing when checked again
    (`shrunk_to_no_op`: that shrinks it to a graph of no op node, its inputs its outputs)."""

    def record(index):
        wrong = sentences(("wrong",))
        failure = Failure(wrong, "x", {"index": index})
        return GraphRecord(index, ("mul",), False, dict.fromkeys(METRICS, 0.0), wrong, failure)

    def passes_again(record, budget):
        if shrunk_to_no_op:
            leaves = Graph([Input("x0", 1.5), Input("x1", -0.75)], [], [0, 1], cotangent=[1.0, 2.0])
            indices = (record.index,)
            finding = Finding(Kind.WRONG_GRADIENT, (), "gradient", leaves.to_dict(), graph_indices=indices)
            return replace(record, failure=replace(record.failure, finding=finding))
        return replace(record, failure=replace(record.failure, unexplained=DID_NOT_FAIL_AGAIN))

    backend = Backend(make_checker=lambda s, a: record, make_shrinker=lambda s, a: passes_again)
    records = {i: record(i) for i in range(10)}
    engine = Campaign(backend, Settings(graphs=10))
    with Inline() as runner:
        account_for_failures(runner, engine, records, known, lambda phase: None, lambda *a: None)
    return list(records.values())


def test_a_graph_that_passes_when_checked_again_is_the_build_orders_when_gradients_depend_on_it():
    assert unexplained(flaky_accounting([])).reasons == {DID_NOT_FAIL_AGAIN: 10}
    graph = Graph([Input("x0", 1.5), Input("x1", -0.75)], [OpNode("mul", (0, 1))], [2]).to_dict()
    order = Finding(Kind.NONDETERMINISTIC, (), "gradient", graph, phase="structure", where=BUILD_ORDER)
    records = flaky_accounting([order])
    assert unexplained(records) is None
    assert {r.failure.finding.signature for r in records} == {order.signature}
    # shrunk to its inputs alone: no op's rule is left, only the code summing and differentiating
    assert {r.failure.finding.ops for r in flaky_accounting([], shrunk_to_no_op=True)} == {()}
    records = flaky_accounting([order], shrunk_to_no_op=True)
    assert {r.failure.finding.signature for r in records} == {order.signature}


# --- explaining one graph ------------------------------------------------------------------------


class ReversedRsub(MinigradValue):
    """minigrad with `c - x` computed as `x - c`: a wrong value of sub with a number on the left."""

    def apply(self, op, args, attrs):
        if op == "sub" and isinstance(args[0], float):
            return args[1] - args[0]
        return super().apply(op, args, attrs)


def failing_instance(graph: Graph, engine) -> tuple[Graph, Diagnosed]:
    check = failing_check(graph, engine)
    assert check is not None, "the graph fails"
    return check.failure, Diagnosed.of(check)


def test_a_node_failing_alone_another_way_explains_the_graph_when_freezing_it_makes_it_pass():
    # 2.0 - x is a wrong value alone; downstream its log meets a negative number: not a number
    engine = ReversedRsub()
    nodes = [OpNode("sub", (0,), consts=(Constant(0, 2.0),)), OpNode("log", (1,)), OpNode("mul", (2, 0))]
    graph, found = failing_instance(Graph([Input("x0", 0.5)], nodes, [3]), engine)
    cause = finding_of(found, engine)
    assert cause.kind is not Kind.WRONG_VALUE, "the graph itself does not fail with sub's wrong value"
    explained = explain(graph, None, Explaining(()), engine, index=7)
    finding = explained.finding
    assert finding.ops == ("sub",) and finding.kind is Kind.WRONG_VALUE and finding.graph_indices == (7,)


def test_a_finding_whose_op_a_graph_merely_contains_does_not_explain_it():
    # the graph holds an abs, but fails because of tanh: freezing abs leaves it failing
    engine = fe.TanhOneMinusTAdapter()
    nodes = [OpNode("tanh", (0,)), OpNode("mul", (0, 1)), OpNode("add", (2, 3))]
    graph, _ = failing_instance(Graph([Input("x0", 0.4), Input("x1", -0.8)], nodes, [4]), engine)
    mul = Graph([Input("x0", 0.5), Input("x1", 0.25)], [OpNode("mul", (0, 1))], [2])
    known = finding_of(Diagnosed(sentences(("made up",)), mul, None), engine)
    known = replace(known, culprits=("mul",))
    assert explain(graph, None, Explaining((known,), culprits_only=True), engine, index=0).finding is None


def test_the_culprit_of_a_shrunk_graph_is_the_op_whose_freezing_makes_it_pass_with_the_rest_in_place():
    # abs(x0) makes x0 positive for the sub after it; freezing sub (the output) would pass too,
    # but leaves nothing to fail: the culprit is abs alone
    engine = fe.InplaceAbsAdapter()
    nodes = [OpNode("abs", (0,)), OpNode("sub", (0, 1))]
    graph, _ = failing_instance(Graph([Input("x0", -0.5), Input("x1", 0.25)], nodes, [3]), engine)
    assert culprits(graph, engine) == ("abs",)
    twice = Graph([Input("x0", -1.0)], [OpNode("abs", (0,)), OpNode("abs", (0,))], [1, 2])
    assert culprits(twice, engine) == ("abs",), "a graph of one op blames that op"


def test_a_nodes_variant_says_which_operands_are_constants_and_the_kind_of_each_attribute():
    assert variant(OpNode("sub", (0,), consts=(Constant(0, 2.0),))) == "sub(c, x)"
    assert variant(OpNode("sub", (0,), consts=(Constant(1, 2.0),))) == "sub(x, c)"
    assert variant(OpNode("sum", (0,), (("dims", (-2, -1)), ("keepdim", True)))) == (
        "sum[dims: several, keepdim: True]"
    )
    assert (
        variant(OpNode("sum", (0,), (("dims", (-1,)), ("keepdim", False))))
        == "sum[dims: one, keepdim: False]"
    )


# --- the most telling example --------------------------------------------------------------------


def test_a_shrink_candidate_must_fail_the_same_way_about_as_strongly():
    engine = fe.TanhOneMinusTAdapter()
    tiny, far = (Graph([Input("x0", x)], [OpNode("tanh", (0,))], [1], cotangent=[1.0]) for x in (3e-9, 0.37))
    strong = failing_check(far, engine)
    assert strong is not None and failing_check(tiny, engine) is not None, "both fail"
    like = Likeness(finding_of(Diagnosed.of(strong), engine).kind and None, strong.failing_excess)
    index, found = first_alike([tiny, far], like, engine)
    assert index == 1 and found.excess == strong.failing_excess
    assert not Likeness(None, math.inf).strong_enough(1e9) and Likeness(None, 10.0).strong_enough(5.0)
