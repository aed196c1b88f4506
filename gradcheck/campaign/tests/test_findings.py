"""Findings: failing checks with the same signature are one problem; the summary leads with them."""

import json
import shlex

import pytest

from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding, GraphCode, Merged, failing
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.report_session import replay_command
from gradcheck.graphs.ir import Graph, Input
from gradcheck.launcher import launcher
from gradcheck.parity.kinds import Kind

RELU = {"inputs": [{"name": "x0", "value": 0.5}], "nodes": [{"op": "relu", "args": [0]}], "outputs": [1]}
BIG = {
    "inputs": [{"name": "x0", "value": 0.5}, {"name": "x1", "value": 2.0}],
    "nodes": [{"op": "relu", "args": [0]}, {"op": "add", "args": [2, 1]}],
    "outputs": [3],
}


def relu_finding(index: int, graph=RELU, phase: str = "random") -> Finding:
    return Finding(Kind.WRONG_GRADIENT, ("relu",), "gradient", graph, phase=phase, graph_indices=(index,))


def test_graphs_with_one_signature_are_one_finding_with_every_index_and_the_smallest_graph():
    found = [relu_finding(7, BIG), relu_finding(3), relu_finding(5, BIG)]
    (merged,) = group_findings(found)
    assert merged.graphs == 3
    assert merged.graph_indices == (3, 5, 7)
    assert merged.graph == RELU


def test_a_different_kind_check_or_region_is_a_different_finding():
    base = relu_finding(1)
    other_kind = Finding(Kind.NONFINITE, ("relu",), "gradient", RELU, graph_indices=(2,))
    other_check = Finding(Kind.EXCEPTION, ("relu",), "second-derivative", RELU, graph_indices=(3,))
    other_region = Finding(
        Kind.WRONG_GRADIENT, ("relu",), "gradient", RELU, region="kink", graph_indices=(4,)
    )
    assert len(group_findings([base, other_kind, other_check, other_region])) == 4


def raised(exception: str, region: str, phase: str = "edges") -> Finding:
    problem = f"at x = 0.0: engine raised {exception}: boom"
    return Finding(
        Kind.EXCEPTION,
        ("pow_const",),
        "gradient",
        RELU,
        phase=phase,
        region=region,
        problems=sentences((problem,)),
    )


def test_exception_types_of_one_rule_at_one_region_are_one_finding_that_names_each_type():
    (merged,) = group_findings([raised("ZeroDivisionError", "pole"), raised("OverflowError", "pole")])
    assert merged.graphs == 2
    assert merged.title == "pow_const at a pole — engine raised OverflowError/ZeroDivisionError"


def test_the_same_exception_at_another_region_is_another_finding():
    found = group_findings([raised("OverflowError", "pole"), raised("OverflowError", "overflow point")])
    assert sorted(f.region for f in found) == ["overflow point", "pole"]


def test_a_rule_breaking_down_at_a_special_region_is_one_finding_whatever_the_kind_or_check():
    # micrograd's a * b**-1: OverflowError at (1e300, 1e-300), a nan gradient at (inf, 1e300)
    overflow = raised("OverflowError", "overflow point")
    nan_gradient = Finding(Kind.NONFINITE, ("pow_const",), "gradient", RELU, region="overflow point")
    nan_value = Finding(Kind.NONFINITE, ("pow_const",), "forward", RELU, region="overflow point")
    (merged,) = group_findings([overflow, nan_gradient, nan_value])
    assert merged.graphs == 3
    assert merged.title == (
        "pow_const at an overflow point — engine raised OverflowError; "
        "nan/inf unlike torch (value and gradient)"
    )
    assert Finding.from_dict(json.loads(json.dumps(merged.to_dict()))).title == merged.title


def test_an_answer_that_is_not_a_number_outside_the_domain_is_part_of_the_breakdown_there():
    # micrograd's (-5e-324) ** 0.5 is complex, (-5e-324) ** -0.5 raises OverflowError
    complex_value = Finding(Kind.WRONG_TYPE, ("pow_const",), "forward", RELU, region="outside the domain")
    (merged,) = group_findings([complex_value, raised("OverflowError", "outside the domain")])
    assert merged.title == (
        "pow_const outside its domain — engine raised OverflowError; not a number (value and gradient)"
    )
    ordinary = Finding(Kind.WRONG_TYPE, ("pow_const",), "forward", RELU, region="ordinary")
    assert len(group_findings([ordinary, raised("OverflowError", "ordinary")])) == 2


def test_a_breakdown_at_ordinary_inputs_stays_apart_from_a_wrong_number():
    nan_gradient = Finding(Kind.NONFINITE, ("pow_const",), "gradient", RELU, region="ordinary")
    overflow = raised("OverflowError", "ordinary")
    wrong = Finding(Kind.WRONG_GRADIENT, ("pow_const",), "gradient", RELU, region="overflow point")
    assert len(group_findings([nan_gradient, overflow, wrong])) == 3


def test_grouping_does_not_depend_on_arrival_order():
    found = [relu_finding(i, BIG if i % 2 else RELU) for i in range(6)]
    found.append(Finding(Kind.EXCEPTION, ("pow_const",), "gradient", RELU, where="at 0", graph_indices=(9,)))
    assert group_findings(found) == group_findings(list(reversed(found)))


def test_the_most_common_finding_comes_first():
    rare = Finding(Kind.EXCEPTION, ("pow_const",), "gradient", RELU, where="at 0", graph_indices=(9,))
    grouped = group_findings([rare, relu_finding(1), relu_finding(2)])
    assert [f.ops for f in grouped] == [("relu",), ("pow_const",)]


def test_an_isolation_finding_and_random_graphs_of_the_same_bug_merge():
    isolated = Finding(Kind.WRONG_GRADIENT, ("relu",), "gradient", RELU, phase="isolation")
    (merged,) = group_findings([isolated, relu_finding(4, BIG)])
    assert merged.graphs == 2
    assert merged.phase == "isolation"  # same size graph: the isolation case is the repro
    assert merged.graph_indices == (4,)


def test_each_problem_is_named_with_its_count():
    grouped = group_findings(
        [relu_finding(i) for i in range(93)]
        + [
            Finding(Kind.EXCEPTION, ("pow_const",), "gradient", RELU, where="at 0", graph_indices=(i,))
            for i in range(4)
        ]
    )
    assert [(f.title, f.count_text) for f in grouped] == [
        ("relu — wrong gradient", "93 graphs"),
        ("pow_const at 0 — engine raised", "4 graphs"),
    ]


def test_a_convention_fails_under_torch_conventions_and_is_a_note_under_subgradient():
    convention = Finding(Kind.CONVENTION, ("abs",), "gradient", RELU, where="at 0")
    assert convention.is_failure("torch")
    assert not convention.is_failure("subgradient")
    assert failing([convention], "subgradient") == []
    assert (convention.title, convention.count_text) == ("abs at 0 — convention at a kink", "1 graph")
    with pytest.raises(ValueError, match="conventions must be one of"):
        convention.is_failure("lenient")


def test_a_finding_survives_a_json_round_trip():
    f = Finding(
        Kind.WRONG_SECOND_DERIVATIVE,
        ("tanh", "mul"),
        "second-derivative",
        BIG,
        graphs=3,
        graph_indices=(1, 2, 8),
        problems=sentences(("second derivatives: entry 0",)),
        repro=replay_command("out/report.json", "minigrad", 0),
    )
    back = Finding.from_dict(json.loads(json.dumps(f.to_dict())))
    assert back == f
    assert back.ops == ("mul", "tanh")
    assert f.to_dict()["repro"] == shlex.join(
        [*launcher(), "replay", "out/report.json", "--engine", "minigrad", "--finding", "0"]
    )


def test_a_findings_typed_facts_survive_report_json_in_the_extra_keys_earlier_reports_have():
    f = Finding(
        Kind.NONDETERMINISTIC,
        (),
        "gradient",
        BIG,
        phase="structure",
        where="deep chains",
        excess=2.5,
        culprits=("mul.broadcast",),
        rate="fails 3 of 8 rebuilds",
        was=Kind.WRONG_GRADIENT,
        death="called sys.exit(0)",
        skipped=True,
        graph_code=GraphCode("depth", ("deep chains",), 1000),
        merged=Merged(
            cases={"structure": 1, "random": 4},
            raised=("OverflowError", "ZeroDivisionError"),
            kinds=(Kind.EXCEPTION, Kind.WRONG_GRADIENT),
            checks=("forward", "gradient"),
            folded=("relu — nondeterministic",),
        ),
    )
    written = json.loads(json.dumps(f.to_dict()))
    assert Finding.from_dict(written) == f
    assert written["extra"] == {
        "excess": 2.5,
        "culprits": ["mul.broadcast"],
        "cause": "depth",
        "checks": ["deep chains"],
        "rate": "fails 3 of 8 rebuilds",
        "depth": 1000,
        "was": "wrong-gradient",
        "death": "called sys.exit(0)",
        "skipped": True,
        "cases": {"structure": 1, "random": 4},
        "raised": ["OverflowError", "ZeroDivisionError"],
        "merged_checks": ["forward", "gradient"],
        "folded": ["relu — nondeterministic"],
        "merged_kinds": ["exception", "wrong-gradient"],
    }
    assert "extra" not in relu_finding(0).to_dict(), "a finding of one plain case has none"


def test_a_finding_names_a_known_check_and_at_least_one_graph():
    with pytest.raises(ValueError, match="check must be one of"):
        Finding(Kind.WRONG_GRADIENT, ("relu",), "backward", RELU)
    with pytest.raises(ValueError, match="graphs must be at least 1"):
        Finding(Kind.WRONG_GRADIENT, ("relu",), "gradient", RELU, graphs=0)
    with pytest.raises(ValueError, match="missing field"):
        Finding.from_dict({"kind": "wrong-gradient"})


def test_a_finding_says_what_its_count_counts():
    edge = Finding(Kind.EXCEPTION, ("div",), "forward", RELU, phase="edges", graphs=5)
    alone = Finding(Kind.WRONG_GRADIENT, ("relu",), "gradient", RELU, phase="isolation", graphs=3)
    random = Finding(Kind.WRONG_GRADIENT, ("relu",), "gradient", RELU, graphs=2, graph_indices=(4, 9))
    assert edge.covers == "5 edge-value case(s)"
    assert alone.covers == "3 case(s) of the op-isolation pass"
    assert random.covers == "2 graph(s): graphs 4, 9"


def test_a_finding_met_in_several_phases_counts_each_phase_in_its_own_unit():
    def raised(phase: str, graphs: int, indices: tuple[int, ...] = ()) -> Finding:
        problems = ("engine raised ZeroDivisionError: 0.0 cannot be raised to a negative power",)
        return Finding(
            Kind.EXCEPTION,
            ("pow_const",),
            "gradient",
            RELU,
            phase,
            "at 0",
            graphs,
            indices,
            sentences(problems),
        )

    edges_only = raised("edges", 5)
    assert edges_only.title.endswith("ZeroDivisionError") and edges_only.count_text == "5 edge-value cases"
    (merged,) = group_findings([raised("random", 2, (4, 9)), edges_only, raised("isolation", 1)])
    assert merged.graphs == 8 and merged.cases == {"random": 2, "edges": 5, "isolation": 1}
    assert merged.covers == (
        "1 case(s) of the op-isolation pass; 2 graph(s): graphs 4, 9; 5 edge-value case(s)"
    )
    assert merged.count_text == "1 op-isolation case, 2 graphs and 5 edge-value cases"
    assert Finding.from_dict(json.loads(json.dumps(merged.to_dict()))).cases == merged.cases


def test_an_exception_at_a_pole_is_one_finding_in_every_phase():
    def raised(name: str, phase: str, where: str = "") -> Finding:
        problem = f"at x = 0.0: engine raised {name}: boom"
        return Finding(
            Kind.EXCEPTION,
            ("pow_const",),
            "gradient",
            RELU,
            phase=phase,
            where=where,
            problems=sentences((problem,)),
            region="pole",
        )

    zero = [raised("ZeroDivisionError", "edges"), raised("ZeroDivisionError", "isolation", "at 0")]
    (merged,) = group_findings(zero)
    assert merged.graphs == 2 and merged.title == "pow_const at a pole — engine raised ZeroDivisionError"


def test_a_rule_wrong_at_ordinary_inputs_is_one_finding_with_its_special_inputs_but_not_its_pole():
    def wrong(region: str, phase: str = "edges") -> Finding:
        return Finding(Kind.WRONG_GRADIENT, ("relu",), "gradient", RELU, phase=phase, region=region)

    found = [
        wrong("ordinary", "random"),
        wrong("overflow point"),
        wrong("nan/inf"),
        wrong("tiny"),
        wrong("kink"),
    ]
    (merged,) = group_findings(found)
    assert merged.region == "ordinary" and merged.cases == {"random": 1, "edges": 4}
    assert len(group_findings([*found, wrong("pole")])) == 2, "a pole keeps its own finding"
    assert len(group_findings(found[1:])) == 4, "without an ordinary finding each region stands alone"


def test_the_example_shown_is_at_ordinary_inputs_before_it_is_the_furthest_outside_its_allowance():
    def mul_at(x0: float, excess: float) -> Finding:
        graph = {
            "inputs": [{"name": "x0", "value": x0, "shape": []}, {"name": "x1", "value": -0.9, "shape": []}],
            "nodes": [{"op": "mul", "args": [0, 1], "attrs": {}}],
            "outputs": [2],
        }
        return Finding(Kind.WRONG_GRADIENT, ("mul",), "gradient", graph, region="ordinary", excess=excess)

    tiny, ordinary, weaker = mul_at(-3.8e-9, 4.5e14), mul_at(0.3, 2e14), mul_at(0.7, 1e13)
    (merged,) = group_findings([tiny, weaker, ordinary])
    assert merged.graph == ordinary.graph and merged.graphs == 3, "a wrong rule read at 0.3, not 3.8e-09"


def _at_a_pole(op: str, inputs: list, consts=(), exponent=None, phase="isolation", tier="bug", *types: str):
    node = {"op": op, "args": list(range(len(inputs))), "consts": list(consts)}
    if exponent is not None:
        node["attrs"] = {"exponent": exponent}
    graph = Graph([Input(f"x{i}", v) for i, v in enumerate(inputs)], [], [len(inputs)]).to_dict()
    graph["nodes"] = [node]
    problems = sentences(tuple(f"at x = 0.0: engine raised {t}: boom" for t in types))
    return Finding(
        Kind.EXCEPTION, (op,), "gradient", graph, phase=phase, region="pole", tier=tier, problems=problems
    )


def test_an_exception_at_a_special_input_is_titled_in_the_engines_terms_with_what_torch_gives():
    zero_power = _at_a_pole("pow_const", [0.0], (), 0.0, "isolation", "bug", "ZeroDivisionError")
    assert zero_power.title == "`x ** 0` at `x = 0` raises ZeroDivisionError; torch gives gradient 0"
    division = _at_a_pole("div", [0.0, -0.0], (), None, "edges", "edge", "ZeroDivisionError")
    assert division.title == (
        "`x / y` at `x = 0, y = -0` raises ZeroDivisionError; torch gives gradients -inf and nan"
    )
    by_number = _at_a_pole(
        "div", [0.0], [{"at": 0, "value": 2.0}], None, "edges", "edge", "ZeroDivisionError"
    )
    assert by_number.title.startswith(
        "`2 / x` at `x = 0` raises ZeroDivisionError; torch gives gradient -inf"
    )
    (merged,) = group_findings(
        [zero_power, _at_a_pole("pow_const", [0.0], (), 0.0, "edges", "bug", "OverflowError")]
    )
    assert merged.title.startswith(
        "`x ** 0` at `x = 0` raises ZeroDivisionError (elsewhere also OverflowError)"
    )
    # only its words: what the finding is stays
    assert (merged.signature, merged.tier) == (zero_power.signature, "bug")


def test_a_graph_of_no_op_node_that_fails_on_some_builds_says_so_in_its_title():
    graph = Graph([Input("x0", 0.5)], [], [0, 0], cotangent=[1.0, 2.0]).to_dict()
    f = Finding(Kind.NONDETERMINISTIC, (), "gradient", graph, rate="fails 7 of 8 rebuilds")
    assert f.title == (
        "graph code — a graph of no op node (its outputs are its inputs)"
        " — nondeterministic (fails 7 of 8 rebuilds)"
    )
