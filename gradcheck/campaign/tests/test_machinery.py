"""backward() itself is checked before any op, and its findings name the mistake and explain the
graphs it makes fail: the tutorial engine's machinery mistakes, one at a time."""

from __future__ import annotations

import pytest

from gradcheck.campaign import Settings, real_backend, run_campaign, tiers, unexplained
from gradcheck.campaign.checking import too_many_paths
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.machinery import ACCUMULATION, ORDER, SEED, UNREVERSED, UPSTREAM
from gradcheck.campaign.phases import PATH_BUDGET
from gradcheck.campaign.settling import fold_into_every_path
from gradcheck.campaign.structure import EVERY_PATH, NO_VISITED, RECURSION_LIMIT, ladder_graph
from gradcheck.campaign.structure_findings import run_structure
from gradcheck.engines import load_engine
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.kinds import Kind
from gradcheck.testing.reordered_engines import PathSum

TUTORIAL = "gradcheck.testing.tutorial_engines"


def structure(name: str):
    return run_structure(load_engine(f"{TUTORIAL}:{name}"))


def machinery_findings(name: str) -> list[Finding]:
    causes = (SEED, ACCUMULATION, UPSTREAM)
    return [f for f in structure(name).findings if f.structural_cause in causes]


def test_the_correct_tutorial_engine_passes_every_check_of_backward_itself():
    report = structure("TutorialValue")
    mine = [c for c in report.cases if c.cause in (SEED, ACCUMULATION, UPSTREAM)]
    assert mine and all(c.status != "failed" for c in mine), [c.detail for c in mine if c.status == "failed"]


@pytest.mark.parametrize(
    ("engine", "words"),
    [
        ("NoSeed", "never sets the root's gradient to 1"),
        ("SeedEveryNode", "sets every node's gradient to 1"),
    ],
)
def test_a_root_seeded_wrong_is_the_one_finding_of_the_phase(engine, words):
    (finding,) = structure(engine).findings
    assert finding.structural_cause == SEED and words in finding.where
    assert finding.tier == tiers.GRAPH_CODE and finding.ops == ()


@pytest.mark.parametrize(
    ("engine", "op"), [("AddAssigns", "add"), ("MulAssigns", "mul"), ("AddAssignsFirst", "add")]
)
def test_an_op_that_assigns_its_gradients_is_named(engine, op):
    (finding,) = machinery_findings(engine)
    assert finding.where == f"{op}'s backward assigns its gradients (`=` where `+=` belongs)"
    # the shared-node checks it makes fail are its evidence, not findings of their own
    assert not [f for f in structure(engine).findings if f.structural_cause == "sharing"]


@pytest.mark.parametrize(("engine", "op"), [("MulNoUpstream", "mul"), ("TanhNoUpstream", "tanh")])
def test_a_backward_that_leaves_out_the_upstream_gradient_is_the_ops_bug(engine, op):
    found = [f for f in machinery_findings(engine) if f.ops == (op,)]
    (finding,) = found
    assert (finding.kind, finding.tier, finding.culprits) == (Kind.WRONG_GRADIENT, tiers.BUG, (f"{op}(*)",))
    assert "leaves out out.grad" in finding.problems[0].note


def test_an_op_wrong_under_an_upstream_gradient_is_not_built_on_by_the_graph_code_checks():
    # mul's missing out.grad would fail every shared-node check built on mul
    # and (x0 * x1) * x0, the check for an `=` hidden by x * x, which it fails though it assigns nothing
    titles = [f.title for f in structure("MulNoUpstream").findings]
    assert not [t for t in titles if "shared node" in t or "zero_grad" in t or "used again" in t], titles


def test_the_ladder_has_two_distinct_parents_per_level():
    # an engine keeping a node's parents in a set sees `x + x` as one parent: no paths to follow
    graph = ladder_graph("add", 3)
    combining = [n for n in graph.nodes if len(n.args) == 2]
    assert len(combining) == 3 and all(a != b for a, b in (n.args for n in combining))


def test_a_build_topo_without_its_visited_set_is_one_finding_naming_the_visited_set():
    # the shared nodes counted once per path, the ladder's time and backward() twice: one slip
    (finding,) = [f for f in structure("NoVisited").findings if f.where != RECURSION_LIMIT]
    assert finding.where == NO_VISITED and "without its visited set" in finding.where
    checks = finding.graph_code.checks
    assert "a ladder of shared nodes" in checks and "a diamond" in checks and "backward() twice" in checks


def test_a_backward_down_every_path_with_right_gradients_is_only_its_time():
    wheres = [f.where for f in run_structure(PathSum()).findings if f.where != RECURSION_LIMIT]
    assert wheres == [EVERY_PATH]


def campaign(engine: str, graphs: int = 40):
    settings = Settings(engine=f"{TUTORIAL}:{engine}", graphs=graphs, points=2, seed=1, edges=False)
    return run_campaign(settings, real_backend())


@pytest.mark.parametrize("engine", ["NoSeed", "AddAssigns"])
def test_a_machinery_mistake_explains_the_graphs_it_makes_fail(engine):
    result = campaign(engine)
    first = result.findings[0]
    assert first.structural_cause in (SEED, ACCUMULATION), [f.title for f in result.findings]
    assert unexplained(result.records) is None
    wrong = [f for f in result.findings if f.tier == tiers.BUG and f.kind is Kind.WRONG_GRADIENT]
    assert not wrong, [f.title for f in wrong]


def test_bugs_and_graph_code_rank_together_by_the_graphs_each_explains():
    one = Graph([Input("x0", 0.5)], [OpNode("tanh", (0,))], [1]).to_dict()
    code = Finding(Kind.STRUCTURAL, (), "gradient", one, where="a shared node", phase="structure", graphs=800)
    bug = Finding(Kind.WRONG_GRADIENT, ("tanh",), "gradient", one, graphs=28, tier=tiers.BUG)
    assert [f.tier for f in group_findings([bug, code])] == [tiers.GRAPH_CODE, tiers.BUG]


def test_the_graphs_not_run_for_their_paths_count_in_the_visited_sets_finding():
    (target,) = [f for f in structure("NoVisited").findings if f.where == NO_VISITED]
    ladder = ladder_graph("add", 13)
    not_run = [too_many_paths(i, ladder, PATH_BUDGET).failure.finding for i in (3, 7)]
    (folded,) = fold_into_every_path([target, *group_findings(not_run)])
    assert folded.where == NO_VISITED and set(folded.graph_indices) >= {3, 7}
    assert folded.graphs == target.graphs + 2


def test_a_topological_order_left_unreversed_is_one_graph_code_finding_not_every_op_wrong():
    # each op's backward runs before the gradient from above reaches it: every op "fails" under
    # a gradient from above, so the op findings are echoes of backward() itself
    (finding,) = structure("NotReversed").findings
    assert finding.where == UNREVERSED and finding.structural_cause == ORDER
    assert finding.graph_code.checks and all("from above" in name for name in finding.graph_code.checks)
    # an op whose backward alone leaves out the gradient from above keeps its own finding
    assert not [f for f in structure("MulNoUpstream").findings if f.structural_cause == ORDER]


def test_the_unreversed_order_explains_every_wrong_gradient_but_no_exception():
    result = campaign("NotReversed")
    assert result.findings[0].where == UNREVERSED
    assert unexplained(result.records) is None
    bugs = [f for f in result.findings if f.tier == tiers.BUG]
    assert all(f.kind is Kind.EXCEPTION for f in bugs), [f.title for f in bugs]
