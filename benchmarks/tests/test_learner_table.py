"""learner_table reads a campaign's report.json into its row: the first finding, the tiers' counts,
the unexplained graphs, and whether that finding is the one the tutorial engines' table expects."""

from __future__ import annotations

from bench_scripts import script

from gradcheck.testing.tutorial_mistakes import MISTAKES

learner_table = script("learner_table")
BY_ENGINE = {m.engine: m for m in MISTAKES}


def finding(tier: str, ops: list[str], title: str, kind: str = "gradient", problems=()) -> dict:
    return {"tier": tier, "ops": ops, "title": title, "kind": kind, "problems": list(problems)}


def report(*findings: dict, unexplained: int = 0) -> dict:
    tiers: dict[str, int] = {}
    for f in findings:
        tiers[f["tier"]] = tiers.get(f["tier"], 0) + 1
    left = {"graphs": unexplained} if unexplained else None
    return {"findings": list(findings), "totals": {"tiers": tiers}, "unexplained": left}


def test_a_mistake_blamed_on_an_op_built_from_its_primitive_is_not_the_expected_first_finding():
    mistake = BY_ENGINE["MulNoUpstream"]
    neg = finding("bug", ["neg"], "neg — wrong gradient")
    mul = finding(
        "bug", ["mul"], "mul's backward leaves out the upstream gradient: it gives y without out.grad for x"
    )
    row = learner_table.row_of(mistake, report(neg, mul, unexplained=627), 12.0)
    assert (row.first, row.bugs, row.graph_code, row.unexplained) == ("bug: neg — wrong gradient", 2, 0, 627)
    assert not row.expected_first and row.named == "no"
    row = learner_table.row_of(mistake, report(mul, neg), 12.0)
    assert row.expected_first and row.named == "yes"


def test_new_counts_the_bug_and_graph_code_findings_the_correct_engine_does_not_have():
    inherited = finding("bug", ["pow_const"], "`x ** 0` at `x = 0` raises ZeroDivisionError")
    edge = finding("edge", ["div"], "div at a pole")
    correct = learner_table.row_of(BY_ENGINE["TutorialValue"], report(inherited, edge), 10.0)
    tanh = finding("bug", ["tanh"], "tanh — wrong gradient")
    other_edge = finding("edge", ["tanh"], "tanh at inf")
    campaign = report(inherited, tanh, edge, other_edge)
    variant = learner_table.row_of(BY_ENGINE["TanhOneMinusT"], campaign, 11.0)
    assert variant.new(correct) == "1" and variant.new(None) == "?" and correct.new(correct) == "-"
    assert variant.cells(correct)[learner_table.HEADER.index("new")] == "1"


def test_a_named_mistake_is_its_phrase_as_a_whole_not_a_letter_of_an_input_name():
    exp = BY_ENGINE["ExpUsesInput"]
    named = finding("bug", ["exp"], "exp's backward behaves like x · out.grad")
    assert learner_table.names_it(exp, named) == "yes"
    plain = finding("bug", ["exp"], "exp — wrong gradient", problems=["point 0 (x0=0.7): looks like x0"])
    assert learner_table.names_it(exp, plain) == "no"
    tanh = finding("bug", ["tanh"], "tanh's backward behaves like (1 - t)·out.grad; the derivative is 1 - t²")
    assert learner_table.names_it(BY_ENGINE["TanhOneMinusT"], tanh) == "yes"
    assert learner_table.names_it(BY_ENGINE["AddAssigns"], tanh) == "-"
    # a phrase that ends the title is whole, whatever the first problem starts with
    swapped = finding(
        "bug", ["sub"], "`2 - x` computes `x - 2`: __rsub__ swaps its operands", problems=["point 0"]
    )
    assert learner_table.names_it(BY_ENGINE["RsubSwapped"], swapped) == "yes"


def test_a_backward_mistake_is_expected_as_graph_code_and_an_op_mistake_on_exactly_its_op():
    structural = finding("graph-code", [], "graph code — the root's gradient is never 1", kind="structural")
    assert learner_table.is_expected(BY_ENGINE["NoSeed"], structural)
    assert not learner_table.is_expected(BY_ENGINE["NoSeed"], finding("bug", ["add"], "add — wrong gradient"))
    composite = finding("bug", ["exp", "sub"], "exp ∘ sub — wrong gradient")
    assert not learner_table.is_expected(BY_ENGINE["ExpUsesInput"], composite)
    assert learner_table.is_expected(BY_ENGINE["AddAssigns"], finding("graph-code", ["add"], "add assigns"))


def test_a_campaign_that_writes_no_report_or_runs_too_long_says_so(tmp_path):
    mistake = BY_ENGINE["NoVisited"]
    row = learner_table.run_campaign(mistake, graphs=300, jobs=1, timeout=0.5, out=tmp_path)
    assert row.outcome == "timed out after 0 s"
    assert row.cells()[learner_table.HEADER.index("expected first")] == "no"
