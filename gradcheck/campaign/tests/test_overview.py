"""The overview every report opens on: what to fix first, the edge behaviour compact, conventions
as notes."""

from gradcheck.campaign.earlier_schema import problems_from_sentences as sentences
from gradcheck.campaign.findings import Finding, Merged
from gradcheck.campaign.overview import edge_outcome, overview, title_parts
from gradcheck.parity.kinds import Kind

ONE_OP = {"inputs": [{"name": "x0", "value": 0.5}], "nodes": [{"op": "div", "args": [0, 0]}], "outputs": [1]}


def made(kind: Kind, ops: tuple[str, ...] = ("div",), **fields) -> Finding:
    fields.setdefault("variant", ())
    return Finding(kind, ops, "gradient", ONE_OP, **fields)


def raised(exception: str, region: str, **fields) -> Finding:
    problem = f"at (0.0, 0.0): engine raised {exception}: float division by zero"
    fields.setdefault("tier", "edge")
    return made(Kind.EXCEPTION, region=region, problems=sentences((problem,)), **fields)


BUG = made(Kind.WRONG_GRADIENT, ("tanh",), region="ordinary", tier="bug", graphs=93)
STRUCTURAL = made(
    Kind.STRUCTURAL, (), phase="structure", where="backward() twice does not accumulate like torch"
)
ADAPTER = made(
    Kind.EXCEPTION,
    ("expand",),
    problems=sentences(
        (
            "point 0: adapter raised AttributeError: 'T' object has no attribute 'expand' "
            "(in gradcheck's default spelling)",
        )
    ),
)
CONVENTION = made(Kind.CONVENTION, ("amax",), region="tie", graphs=29)


def test_rows_are_the_bugs_then_graph_code_then_adapter_faults_each_numbered_as_the_report():
    findings = [BUG, STRUCTURAL, ADAPTER, raised("ZeroDivisionError", "pole"), CONVENTION]
    view = overview(findings)
    assert [(r.number, r.tier) for r in view.rows] == [(0, "bug"), (1, "graph-code"), (2, "adapter")]
    assert [r.number for r in view.notes] == [4]
    assert [row.numbers for row in view.edges] == [(3,)]
    assert (
        view.tier_counts() == "1 bug, 1 graph-code finding, 1 adapter fault, 1 edge behaviour, 1 convention"
    )


def test_a_title_splits_into_what_it_is_about_and_what_happened():
    assert title_parts(BUG) == ("tanh", "wrong gradient")
    assert title_parts(raised("ZeroDivisionError", "pole")) == ("div at a pole", "raised ZeroDivisionError")
    assert title_parts(STRUCTURAL) == ("backward() twice does not accumulate like torch", "structural")
    rate = "fails 3 of 8 rebuilds"
    shared = made(Kind.NONDETERMINISTIC, (), phase="structure", where="a node used twice", rate=rate)
    assert title_parts(shared) == ("a node used twice", "nondeterministic (fails 3 of 8 rebuilds)")


def test_the_adapters_faults_carry_their_fix():
    (row,) = overview([ADAPTER]).fixes
    assert row.finding.fix == (
        "the adapter lists expand but the engine has no `.expand`: "
        "spell it in `apply` or leave it out of `ops`"
    )


def test_edge_behaviour_is_one_row_per_op_with_what_happened_at_each_region():
    findings = [
        raised("ZeroDivisionError", "pole"),
        raised("OverflowError", "overflow point"),
        made(Kind.NONFINITE, region="overflow point", tier="edge"),
        made(Kind.WRONG_GRADIENT, ("relu",), region="nan/inf", tier="edge"),
    ]
    view = overview(findings)
    assert [row.op for row in view.edges] == ["div", "relu"], "most graphs first"
    div = view.edges[0]
    assert dict(div.cells) == {
        "pole": "raises ZeroDivisionError",
        "overflow point": "raises OverflowError, inf/nan",
    }
    assert div.numbers == (0, 1, 2) and div.graphs == 3
    assert view.regions == ["nan/inf", "pole", "overflow point"], "the columns in scan order"


def test_two_findings_raising_at_one_region_say_raises_once_with_each_type():
    findings = [
        raised("ZeroDivisionError", "pole"),
        raised("OverflowError", "pole", variant=("to the power 0",)),
    ]
    (row,) = overview(findings).edges
    assert dict(row.cells) == {"pole": "raises OverflowError/ZeroDivisionError"}


def test_an_outcome_merged_across_kinds_says_each():
    merged = raised(
        "OverflowError", "outside the domain", merged=Merged(kinds=(Kind.EXCEPTION, Kind.WRONG_TYPE))
    )
    assert edge_outcome(merged) == ["raises OverflowError", "not a number"]


def test_conventions_are_a_line_of_notes():
    other = made(Kind.CONVENTION, ("clamp",), region="kink", where="at -0.5", graphs=2, phase="isolation")
    view = overview([CONVENTION, other])
    assert view.notes_line() == "amax at a tie (29 graphs); clamp at -0.5 (2 graphs)"


def test_the_unexplained_graphs_are_one_line_from_report_jsons_entry():
    entry = {
        "graphs": 12,
        "graph_indices": list(range(12)),
        "smallest": {"index": 417, "ops": ["add", "exp"]},
    }
    view = overview([BUG], entry)
    assert view.unexplained_line() == (
        "12 failing graph(s) no finding explains; the smallest, graph 417 (add, exp), in full below"
    )
    assert view.tier_counts() == "1 bug, 12 unexplained graph(s)"
    assert overview([BUG], None).unexplained_line() == ""


def test_the_verdict_leads_with_what_is_right():
    edges = overview([raised("ZeroDivisionError", "pole"), raised("OverflowError", "overflow")])
    assert edges.verdict(False, 0, 2000) == "FAIL: all 2000 random graphs agree; 2 edge behaviours"
    assert overview([BUG]).verdict(False, 81, 2000) == "FAIL: 81 of 2000 graphs disagree; 1 bug"
    assert overview([CONVENTION]).verdict(True, 0, 10) == "PASS: all 10 graphs agree; 1 convention"
    assert overview([]).verdict(True, 0, 500) == "PASS: all 500 graphs agree, no findings"


def test_graphs_failing_only_at_a_special_region_say_every_op_agrees_elsewhere_first():
    at_zero = raised("ZeroDivisionError", "pole", tier="bug", phase="isolation", graph_indices=(35, 54))
    found = [at_zero, STRUCTURAL, raised("OverflowError", "overflow point")]
    assert overview(found).verdict(False, 2, 300) == (
        "FAIL: every op agrees with torch on all 300 graphs but at a pole, where 2 of them fail; "
        "1 bug, 1 graph-code finding, 1 edge behaviour"
    )
    # a failing graph at ordinary inputs, an op's bug there, or a graph no finding explains: as before
    ordinary = made(Kind.WRONG_GRADIENT, ("tanh",), region="ordinary", tier="bug", graph_indices=(7,))
    assert overview([at_zero, ordinary]).verdict(False, 3, 300).startswith("FAIL: 3 of 300 graphs disagree")
    assert overview([at_zero, BUG]).verdict(False, 2, 300).startswith("FAIL: 2 of 300 graphs disagree")
    left = {"graphs": 1, "graph_indices": [8], "smallest": {"index": 8, "ops": ["tanh"]}}
    assert overview([at_zero], left).verdict(False, 3, 300).startswith("FAIL: 3 of 300 graphs disagree")
