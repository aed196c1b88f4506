"""Where a named mistake breaks down: log's backward written 1/log(x) raises ZeroDivisionError at
x = 1, and that failure is the mistake's finding, not one of its own; log's ValueError below 0
(math's domain, the correct engine's too) and other ops' failures stay apart."""

from __future__ import annotations

import pytest

from gradcheck.campaign import Settings, real_backend, run_campaign
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.mistake_breakdowns import fold_into_mistakes
from gradcheck.engines.origin import Raised
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem
from gradcheck.parity.what import What

ONE_OVER_LOG = "log's backward behaves like 1/log(x) · out.grad; the derivative is 1/x"


def log_graph(x: float, op: str = "log") -> dict:
    return Graph([Input("x0", x)], [OpNode(op, (0,))], [1]).to_dict()


def named(graphs: int = 50) -> Finding:
    return Finding(
        kind=Kind.WRONG_GRADIENT,
        ops=("log",),
        check="gradient",
        graph=log_graph(0.7),
        graphs=graphs,
        graph_indices=tuple(range(graphs)),
        region="ordinary",
        tier="bug",
        mistake=ONE_OVER_LOG,
        mistake_rules=("log:0:output_for_input",),
    )


def raised(
    x: float, error: str, op: str = "log", region: str = "ordinary", tier: str = "bug", **kw
) -> Finding:
    problem = Problem(
        What.RAISED, point=0, inputs=(("x0", x),), raised=Raised(error, "float division by zero")
    )
    return Finding(
        kind=Kind.EXCEPTION,
        ops=(op,),
        check="gradient",
        graph=log_graph(x, op),
        problems=(problem,),
        region=region,
        tier=tier,
        **kw,
    )


def test_a_division_by_zero_the_named_rule_makes_is_the_mistakes():
    at_one = raised(1.0, "ZeroDivisionError", graphs=4, graph_indices=(60, 61, 62, 63))
    (folded,) = fold_into_mistakes([named(), at_one])
    assert folded.title == ONE_OVER_LOG and folded.graphs == 54 and 63 in folded.graph_indices
    said = "at x = 1 log's backward raises ZeroDivisionError: 1/log(x) is infinite there; counted here"
    assert folded.merged.explains == (said,) and said in folded.covers
    assert Finding.from_dict(folded.to_dict()).merged.explains == (said,)  # report.json keeps it


@pytest.mark.parametrize(
    "other",
    [
        raised(2.0, "ZeroDivisionError"),  # 1/log(2) is finite: not the rule's breakdown
        raised(-1.0, "ValueError", region="off-domain", tier="edge"),  # log(-1): the forward's
        raised(1.0, "ZeroDivisionError", op="exp"),  # another op's
    ],
    ids=["where-the-rule-is-finite", "outside-the-domain", "another-op"],
)
def test_a_failure_the_named_rule_does_not_cause_stays_apart(other):
    assert fold_into_mistakes([named(), other]) == [named(), other]


def test_without_a_named_rule_nothing_is_folded():
    unnamed = named().__class__(**{**named().__dict__, "mistake": None, "mistake_rules": ()})
    at_one = raised(1.0, "ZeroDivisionError")
    assert fold_into_mistakes([unnamed, at_one]) == [unnamed, at_one]


def test_an_exception_at_a_special_region_joins_an_ordinary_one_only_raising_the_same():
    at_one = raised(1.0, "ZeroDivisionError")
    tiny = raised(-5e-324, "ValueError", region="tiny", tier="edge")
    assert len(group_findings([at_one, tiny])) == 2  # math's domain is not the rule dividing by zero
    tiny_dividing = raised(5e-324, "ZeroDivisionError", region="tiny", tier="edge")
    (joined,) = group_findings([at_one, tiny_dividing])
    assert joined.graphs == 2 and joined.tier == "bug"


def test_a_tutorial_engines_log_written_one_over_log_x_has_one_log_finding():
    settings = Settings(
        engine="gradcheck.testing.tutorial_engines:LogOverOutput", graphs=300, points=2, seed=0
    )
    result = run_campaign(settings, real_backend())
    logs = [f for f in result.findings if f.ops == ("log",) and f.tier == "bug"]
    assert [f.title for f in logs] == [ONE_OVER_LOG]
    assert "at x = 1 log's backward raises ZeroDivisionError" in logs[0].covers
