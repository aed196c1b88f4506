"""An op's figures come from the evidence about that op (`records.aggregate`), and the gate
knows a finding by an identity that holds no number of the run (`verdict.finding_identity`)."""

from __future__ import annotations

import numpy as np

from gradcheck.campaign.findings import Finding
from gradcheck.campaign.records import METRICS, GraphRecord, aggregate, faulted_ops
from gradcheck.campaign.structure import BUILD_ORDER, RECURSION_LIMIT
from gradcheck.campaign.verdict import accepted_faults, compare, finding_identity
from gradcheck.graphs.ir import Graph, Input, OpNode

GRAPH = {"inputs": [], "nodes": [], "outputs": []}


def record(index: int, ops: tuple[str, ...], error: float, passed: bool = True) -> GraphRecord:
    return GraphRecord(index, ops, passed, dict.fromkeys(METRICS, error))


def finding(ops: tuple[str, ...], indices: tuple[int, ...] = (), region: str = "ordinary", **kw) -> Finding:
    kw.setdefault("kind", "wrong-gradient")
    return Finding(ops=ops, check="gradient", graph=GRAPH, graph_indices=indices, region=region, **kw)


# a tanh rule 1e-7 off: every graph holding tanh is that far off, failing or not
TANH_BUG = [
    record(0, ("add", "tanh"), 1e-7, passed=False),
    record(1, ("add",), 1e-16),
    record(2, ("add", "mul"), 2e-16),
    record(3, ("mul", "tanh"), 3e-10),  # passes: tanh's part of the gradient is small here
    record(4, ("tanh",), 1e-7, passed=False),
]


def test_a_graph_holding_an_op_with_a_finding_is_that_ops_evidence_only():
    stats = aggregate(TANH_BUG, [finding(("tanh",), (0, 4))])
    assert (stats["add"].graphs, stats["add"].elsewhere, stats["add"].failures) == (2, 1, 0)
    assert stats["add"].maxima["max_rel_err_torch"] == 2e-16, "tanh's error is not charged to add"
    assert stats["mul"].maxima["max_rel_err_torch"] == 2e-16, "nor a passing graph's: tanh has a finding"
    assert (stats["tanh"].graphs, stats["tanh"].failures, stats["tanh"].failing_graphs) == (3, 2, [0, 4])
    assert stats["tanh"].maxima["max_rel_err_torch"] == 1e-7


def test_without_the_finding_every_graph_is_evidence_for_its_ops():
    stats = aggregate(TANH_BUG)  # failures no finding covers count for all their ops
    assert stats["add"].graphs == 3 and stats["add"].failures == 1
    assert stats["add"].maxima["max_rel_err_torch"] == 1e-7


def test_a_finding_at_a_pole_taints_only_the_graphs_it_covers_and_carries_no_figures():
    records = [
        record(0, ("add", "div"), float("nan"), passed=False),
        record(1, ("add", "div"), 3e-16),
        record(2, ("div",), 1e-16),
    ]
    stats = aggregate(records, [finding(("div",), (0,), region="pole", kind="exception")])
    assert faulted_ops([finding(("div",), (0,), region="pole")]) == set()
    assert (stats["add"].graphs, stats["add"].elsewhere) == (1, 1)
    assert (stats["div"].graphs, stats["div"].failures) == (3, 1)
    assert stats["div"].maxima["max_rel_err_torch"] == 3e-16, "the pole's nan says nothing of div"


def test_a_finding_of_several_ops_taints_no_op_beyond_its_own_graphs():
    records = [record(0, ("add", "mul"), 1e-6, passed=False), record(1, ("add", "mul"), 1e-16)]
    stats = aggregate(records, [finding(("add", "mul"), (0,))])
    assert stats["add"].graphs == stats["mul"].graphs == 2
    assert stats["add"].failures == stats["mul"].failures == 1


def test_the_op_isolation_graphs_are_evidence_about_their_op():
    stats = aggregate([record(0, ("add", "tanh"), 1e-16)], [], [record(-1, ("tanh",), 5e-16)])
    assert stats["tanh"].graphs == 2 and stats["tanh"].maxima["max_rel_err_torch"] == 5e-16
    assert stats["tanh"].failing_graphs == []


def test_ops_a_baseline_accepted_a_finding_for_stay_out_of_the_others_evidence():
    part = {"findings": [{"signature": ["wrong-gradient", ["tanh"], "gradient", "ordinary"]}]}
    assert accepted_faults(part) == {"tanh"}
    assert accepted_faults({"findings": [{"signature": ["breakdown", ["div"], "", "pole"]}]}) == set()
    fixed = [record(0, ("add", "tanh"), 1e-14), record(1, ("add",), 1e-16)]
    assert aggregate(fixed, faulted={"tanh"})["add"].graphs == 1


def test_a_structural_finding_is_one_identity_whatever_depth_or_values_it_was_met_with():
    def named(name: str) -> list:
        return ["structural", [], "gradient", name]

    today = finding_identity(named(RECURSION_LIMIT))
    assert finding_identity(named("recursion limit at depth 982")) == today
    assert finding_identity(named("recursion limit at depth 948")) == today
    twice = "backward() twice does not accumulate like torch"
    with_values = f"{twice} (gradient of x0: engine -6.75, torch -3.375)"
    assert finding_identity(named(with_values)) == finding_identity(named(twice))
    chain = "a chain 1000 deep: engine raised MemoryError: no room at 12345"
    assert finding_identity(named(chain)) == finding_identity(named("a deep chain raises MemoryError"))
    assert finding_identity(named(RECURSION_LIMIT)) != finding_identity(named(twice))
    shared = "a shared node's gradient depends on the build (an order that follows object ids or sets)"
    build_order = finding_identity(["nondeterministic", [], "gradient", BUILD_ORDER])
    assert finding_identity(["nondeterministic", [], "gradient", shared]) == build_order, "its earlier name"
    op = ["wrong-gradient", ["tanh"], "gradient", "ordinary"]
    assert finding_identity(op) == finding_identity(tuple(op))


def test_a_baseline_recorded_with_a_depth_accepts_the_finding_met_at_another_depth():
    recorded = {"signature": ["structural", [], "gradient", "recursion limit at depth 982"], "title": "t"}
    base = {"parts": {"scalar": {"ops": {}, "findings": [recorded]}}}
    now = Finding(
        kind="structural", ops=(), check="gradient", graph=GRAPH, phase="structure", where=RECURSION_LIMIT
    )
    outcome = compare(base, {"parts": {"scalar": {"ops": {}}}}, [], {"scalar": [now]})
    assert outcome.passed and not outcome.new_findings and not outcome.gone


def test_a_finding_of_a_plainer_form_than_the_accepted_variant_is_new_and_an_old_entry_matches_either():
    # the baseline accepted amax over a tuple of dims raising; now amax over one dim raises too:
    # grouped, the finding is titled by the plainer form, and that is a new finding
    def raised(dims: tuple[int, ...]) -> Finding:
        node = OpNode("amax", (0,), (("dims", dims),))
        graph = Graph([Input("x0", np.ones((2, 2)), (2, 2))], [node], [1], meta={"kind": "tensor"})
        return Finding(kind="exception", ops=("amax",), check="gradient", graph=graph.to_dict())

    tuples, one = raised((-2, -1)), raised((-1,))
    assert tuples.signature == one.signature
    assert (tuples.variant, one.variant) == (("over a tuple of dims",), ())
    sig = list(tuples.signature)
    recorded = {"signature": sig, "variant": list(tuples.variant), "tier": "bug", "title": "t"}
    base = {"parts": {"tensor": {"ops": {}, "findings": [recorded]}}}
    run = {"parts": {"tensor": {"ops": {}}}}
    assert compare(base, run, [], {"tensor": [tuples]}).passed
    plainer = compare(base, run, [], {"tensor": [one]})
    assert [f.finding.title for f in plainer.new_findings] == [one.title] and plainer.gone == ["tensor: t"]
    legacy = {"parts": {"tensor": {"ops": {}, "findings": [{"signature": sig, "title": "t"}]}}}
    assert compare(legacy, run, [], {"tensor": [one]}).passed, "no variant recorded: by signature alone"


def test_failing_graphs_of_an_accepted_finding_fail_no_row_however_many_there_are():
    figures = dict.fromkeys(("p50_rel_err_torch", "p99_rel_err_torch", "p50_rel_err_numeric"), 1e-16)
    figures |= {"p99_rel_err_numeric": 1e-10, "p99_forward_err": 0.0}
    row = lambda failing: {"graphs": 50, "failures": len(failing), "failing_graphs": failing, **figures}
    accepted = finding(("pow_const",), (3, 9, 11, 40), region="pole", kind="exception")
    base = {
        "parts": {
            "scalar": {
                "ops": {"pow_const": row([3, 9])},
                "findings": [{"signature": list(accepted.signature)}],
            }
        }
    }
    now = {"parts": {"scalar": {"ops": {"pow_const": row([3, 9, 11, 40])}}}}
    assert compare(base, now, ["pow_const"], {"scalar": [accepted]}).passed
    unexplained = {"parts": {"scalar": {"ops": {"pow_const": row([3, 9, 12])}}}}
    (verdict,) = compare(base, unexplained, ["pow_const"], {"scalar": [accepted]}).verdicts
    assert verdict.reasons == ["1 failing graph(s) (12): no finding explains them"]


def test_an_op_whose_evidence_shrank_is_read_at_the_baselines_rank_from_the_top():
    from gradcheck.campaign.regression_gate import read_at_baseline_ranks

    # 300 graphs in the baseline, 4 of them noisy: its p99 is the 4th largest, 5e-8
    noisy = [1e-7, 9e-8, 8e-8, 5e-8]
    before = {"add": {"graphs": 300, "p99_rel_err_numeric": 5e-8}}
    # another op's new finding took 120 of them away, none of the noisy ones: the p99 of the 180
    # left would be the 2nd largest, 9e-8, though no graph changed; the 4th largest is 5e-8 again
    left = aggregate([record(i, ("add",), e) for i, e in enumerate([*noisy, *[1e-10] * 176])])
    assert left["add"].quantile("max_rel_err_numeric", 0.99) == 9e-8
    now = {"add": {"graphs": 180, "p99_rel_err_numeric": 9e-8}}
    read_at_baseline_ranks(now, before, left)
    assert now["add"]["p99_rel_err_numeric"] == 5e-8
    # an op gone worse still shows: every graph 1e-6 off
    worse = aggregate([record(i, ("add",), 1e-6) for i in range(180)])
    read_at_baseline_ranks(now, before, worse)
    assert now["add"]["p99_rel_err_numeric"] == 1e-6
