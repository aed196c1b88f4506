"""One finding per root cause, through `gradcheck run`: each engine of `testing/cause_engines.py`
reproduces a class of bug the harness once reported wrongly, and comes out as exactly one finding
per bug, with the right op, kind and region."""

import json

import pytest

from gradcheck.campaign.checking import FailureExplainer, FailureShrinker, campaign_checker
from gradcheck.campaign.explain import Explaining
from gradcheck.campaign.records import record_of
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.validation import campaign_adapter, load_adapter
from gradcheck.cli import main
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.compare import check_graph
from gradcheck.parity.kinds import Kind

ENGINES = "gradcheck.testing.cause_engines"


def campaign(tmp_path, engine: str, *options: str) -> tuple[int, dict]:
    out = tmp_path / engine
    status = main(["run", "--engine", f"{ENGINES}:{engine}", "--out", str(out), *options])
    return status, json.loads((out / "report.json").read_text())


def causes(report: dict) -> list[tuple[tuple[str, ...], str, str]]:
    return sorted((tuple(f["ops"]), f["kind"], f["region"]) for f in report["findings"])


def every_failure_has_a_finding(report: dict) -> bool:
    return all(f["finding"] is not None for f in report["failures"])


def test_a_missing_rtruediv_is_one_division_finding(tmp_path):
    # `2.0 / x` raises TypeError: blamed on the div node with its constant, not on the ops around it
    status, report = campaign(tmp_path, "NoRtruediv", "--graphs", "150", "--ops", "div,add,mul,tanh")
    assert status == 1
    assert causes(report) == [(("div",), "exception", "ordinary")]
    (finding,) = report["findings"]
    assert finding["graphs"] > 20 and every_failure_has_a_finding(report)
    (node,) = finding["graph"]["nodes"]
    assert node["consts"][0]["at"] == 0, "the repro divides a number by a node"


def dead_zero_numerators(settings: Settings, indices) -> list[int]:
    """The graphs among `indices` holding a `0.0 / v` node that no output uses."""
    checker = campaign_checker(settings)
    dead = []
    for index in indices:
        graph: Graph = checker.graph(index)
        live = set(graph.outputs)
        for i in reversed(range(len(graph.nodes))):
            if graph.n_inputs + i in live:
                live.update(graph.nodes[i].args)
        for i, node in enumerate(graph.nodes):
            zero_left = any(c.at == 0 and c.value == 0.0 for c in node.consts)
            if node.op == "div" and zero_left and graph.n_inputs + i not in live:
                dead.append(index)
    return dead


def test_a_raise_in_a_node_no_output_uses_is_blamed_on_that_node(tmp_path):
    # the engine evaluates every node; `0.0 / v` raises in its forward even where nothing uses it
    options = ("--graphs", "500", "--ops", "div,add,mul,tanh")
    status, report = campaign(tmp_path, "ReversedQuotientRtruediv", *options)
    assert status == 1
    assert causes(report) == [(("div",), "exception", "ordinary")]
    (finding,) = report["findings"]
    settings = Settings(engine=f"{ENGINES}:ReversedQuotientRtruediv", ops=("div", "add", "mul", "tanh"))
    assert dead_zero_numerators(settings, finding["graph_indices"]), (
        "some failing graph raised in a dead node"
    )
    assert [n["op"] for n in finding["graph"]["nodes"]] == ["div"]
    assert every_failure_has_a_finding(report)


def test_two_bugs_in_one_engine_are_two_findings_and_no_graph_drifts_to_the_other(tmp_path):
    options = ("--graphs", "200", "--ops", "relu,tanh,add,mul", "--no-isolation", "--no-structure")
    status, report = campaign(tmp_path, "ReluTwoTanhOff", *options)
    assert status == 1
    assert causes(report) == [
        (("relu",), "wrong-gradient", "ordinary"),
        (("tanh",), "wrong-value", "ordinary"),
    ]
    assert len(report["failures"]) >= 20 and every_failure_has_a_finding(report)
    for failure in report["failures"]:
        finding = report["findings"][failure["finding"]]
        assert set(finding["ops"]) <= set(failure["ops"]), "a graph is explained by a bug it holds"


def test_an_x_to_the_zero_rule_raising_three_exception_types_at_0_is_one_bug(tmp_path):
    # ZeroDivisionError at 0.0, ValueError at -0.0 (torch: 1, gradient 0) and OverflowError at
    # +-5e-324 (a subnormal: by itself an edge, but the same rule): one bug-tier finding
    status, report = campaign(
        tmp_path, "NaiveZeroPower", "--graphs", "200", "--ops", "pow_const,add,mul,relu"
    )
    assert status == 1
    # at nan its slope is nan where torch's is 0: the same rule, but another region and kind
    assert causes(report) == [(("pow_const",), "exception", "pole"), (("pow_const",), "nonfinite", "nan/inf")]
    (pole,) = [f for f in report["findings"] if f["region"] == "pole"]
    assert pole["title"].startswith("`x ** 0` at `x = ") and pole["tier"] == "bug"
    assert pole["title"].endswith("; torch gives gradient 0"), pole["title"]
    assert pole["extra"]["raised"] == ["OverflowError", "ValueError", "ZeroDivisionError"]
    assert set(pole["extra"]["cases"]) == {"isolation", "random", "edges"}


@pytest.mark.usefixtures("shallow_chains")  # tensor chains 10^3 deep only
@pytest.mark.parametrize("conventions", ["torch", "subgradient"])
def test_maximum_with_partials_0_0_at_a_tie_is_a_wrong_gradient_under_any_conventions(tmp_path, conventions):
    options = ("--tensor", "--graphs", "40", "--ops", "maximum,add,mul", "--conventions", conventions)
    status, report = campaign(tmp_path, "MaximumZeroAtTie", *options)
    assert status == 1
    assert causes(report) == [(("maximum",), "wrong-gradient", "tie")]
    # the random graphs draw tied entries too (same node on both sides, tied entries)
    assert {"isolation", "edges"} <= set(report["findings"][0]["extra"]["cases"]), "one kind in every phase"


@pytest.mark.usefixtures("shallow_chains")
def test_maximum_with_partials_1_0_at_a_tie_is_a_convention_a_note_under_subgradient(tmp_path):
    options = ("--tensor", "--graphs", "40", "--ops", "maximum,add,mul", "--conventions", "subgradient")
    status, report = campaign(tmp_path, "MaximumFirstAtTie", *options)
    assert status == 0
    assert causes(report) == [(("maximum",), "convention", "tie")]


@pytest.mark.parametrize("step", [FailureShrinker, FailureExplainer])
def test_a_graph_failing_for_one_bug_is_not_blamed_on_another_bug_in_a_node_that_does_not_matter(step):
    # tanh's value is off (the output); relu's slope of 2 is in a node no output uses: the graph
    # fails for tanh, and a relu failing alone must not take the blame
    settings = Settings(engine=f"{ENGINES}:ReluTwoTanhOff")
    graph = Graph([Input("x0", 0.7)], [OpNode("relu", (0,)), OpNode("tanh", (0,))], [2])
    adapter = campaign_adapter(settings)
    record = record_of(0, check_graph(graph, adapter))
    work = step(settings, adapter)
    done = work(record) if step is FailureShrinker else work(record, Explaining(()))
    finding = done.failure.finding
    assert (finding.ops, finding.kind) == (("tanh",), Kind.WRONG_VALUE)


def test_a_division_of_0_by_a_sigmoid_shrinks_to_the_one_op_division():
    # `0.0 / sigmoid(x0) + x0` raises in the division: the repro is `0.0 / x0`, not div ∘ sigmoid or add ∘ div
    settings = Settings(engine=f"{ENGINES}:ReversedQuotientRtruediv")
    nodes = [OpNode("sigmoid", (0,)), OpNode("div", (1,), consts=(Constant(0, 0.0),)), OpNode("add", (2, 0))]
    graph = Graph([Input("x0", -1.25)], nodes, [3])
    record = record_of(0, check_graph(graph, load_adapter(settings.engine)))
    finding = FailureShrinker(settings, campaign_adapter(settings))(record).failure.finding
    assert (finding.ops, finding.kind) == (("div",), Kind.EXCEPTION)
    assert len(finding.graph["nodes"]) == 1
