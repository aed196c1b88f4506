"""A learner's wrong local derivative is named where it is one of its op's table
(`gradcheck.graphs.mistakes`), from the op-isolation pass's points with the cotangent divided
out, and nothing is named otherwise: not on a correct engine, not for a wrong derivative the
table does not hold, never two entries for one failure."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.inspection import inspection_findings
from gradcheck.campaign.isolation import GRAPHS_PER_OP, IsolationCase, check_case, gathered, isolation_cases
from gradcheck.campaign.mistake_match import MATCH_RTOL, named_mistake, swapped_operands, upstream_probe
from gradcheck.campaign.settings import Settings
from gradcheck.campaign.validation import campaign_variants
from gradcheck.cli import main
from gradcheck.engines.loading import load_engine
from gradcheck.engines.value_class import ValueClassAdapter
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.graphs.mistakes import DERIVATIVES, MISTAKES
from gradcheck.graphs.registry import REGISTRY
from gradcheck.parity.compare import check_graph
from gradcheck.parity.kinds import Kind
from gradcheck.testing import mistake_engines, tutorial_engines
from gradcheck.testing.mistake_engines import Value, planted

TANH = "tanh's backward behaves like (1 - t) · out.grad, where t = tanh(x); the derivative is (1 - t²)"
ENTRIES = [(op, m) for op, table in MISTAKES.items() for m in table]


def isolation(cls: type, *checked: str) -> list[Finding]:
    """The op-isolation pass's findings for the `checked` ops on the value class `cls` (inspected,
    no adapter), gathered as the pass gathers them."""
    adapter = ValueClassAdapter(cls, cls.__name__)
    assert set(checked) <= set(adapter.ops), f"{cls.__name__} lacks some of {checked}"
    run = Settings(engine=cls.__name__)
    ops = sorted(adapter.ops)
    variants = campaign_variants(run, adapter)
    outcomes = [
        check_case(IsolationCase(op, k), run, ops, adapter, variants)
        for op in checked
        for k in range(GRAPHS_PER_OP + 1)  # the pass's draws, and its graph of inputs only
    ]
    return gathered(outcomes)[0]


def one_op_graph(op: str, seed: int = 0) -> Graph:
    """`op` on distinct inputs at 8 generic points of its domain (exponent 2.5 for pow_const)."""
    args, attrs = _generic_points(op, seed, n=8, attrs={"exponent": 2.5} if op == "pow_const" else None)
    inputs = [Input(f"x{i}", float(a[0])) for i, a in enumerate(args)]
    node = OpNode(op, tuple(range(len(args))), tuple(sorted(attrs.items())))
    return Graph(inputs, [node], [len(args)], list(args))


@pytest.mark.parametrize(("op", "mistake"), ENTRIES, ids=[f"{op}-{m.key}-{m.operand}" for op, m in ENTRIES])
def test_each_wrong_derivative_of_the_table_planted_in_an_engine_is_named(op, mistake):
    """At the isolation points (cotangent divided out) for a derivative written wrong; with the
    upstream probe's out.grad = 1.75 for one that leaves out.grad out (right where it is 1)."""
    adapter = ValueClassAdapter(planted(op, mistake), "planted")
    graph = one_op_graph(op)
    check = check_graph(graph, adapter)
    if mistake.upstream:
        assert not check.passed, "the planted derivative is wrong at these points"
        named = named_mistake(graph, adapter)
        sentence = named.sentence if named else None
    else:
        assert check.passed, "with out.grad = 1, leaving it out is right"
        probed = upstream_probe(graph, adapter)
        sentence = probed[1].sentence if probed else None
    assert sentence is not None, f"{mistake.wrote!r} is not named"
    said = "behaves like" if mistake.upstream else "leaves out the upstream gradient: it gives"
    assert sentence.startswith(f"{op}'s backward {said} {mistake.wrote}")
    assert DERIVATIVES[op][mistake.operand] in sentence.partition("; ")[2]
    assert named_mistake(graph, ValueClassAdapter(Value, "correct")) is None
    assert upstream_probe(graph, ValueClassAdapter(Value, "correct")) is None


@pytest.mark.parametrize("op", sorted(MISTAKES))
def test_a_correct_engine_has_no_isolation_finding_and_nothing_named(op):
    assert isolation(Value, op) == []


def test_the_tutorial_mistakes_written_by_hand_are_named_in_words():
    (tanh,) = {f.mistake for f in isolation(mistake_engines.TanhOneMinusT, "tanh")}
    assert tanh == TANH
    (power,) = {f.mistake for f in isolation(mistake_engines.PowUnreduced, "pow_const")}
    assert power == "pow_const's backward behaves like n · x^n · out.grad; the derivative is n · x^(n-1)"
    (mul,) = {f.mistake for f in isolation(mistake_engines.MulWithoutUpstream, "mul")}
    assert mul == (
        "mul's backward leaves out the upstream gradient: it gives y without out.grad for x and x "
        "without out.grad for y; "
        "the derivatives are y · out.grad and x · out.grad"
    )


@pytest.mark.parametrize(
    ("engine", "op", "said"),
    [
        (
            "MulNoUpstream",
            "mul",
            "mul's backward leaves out the upstream gradient: it gives y without out.grad",
        ),
        ("PowUnreduced", "pow_const", "pow_const's backward behaves like n · x^n · out.grad;"),
    ],
)
def test_a_primitive_checked_under_an_upstream_gradient_too_keeps_its_name(engine, op, said):
    """A primitive's isolation cases with an input beside its result (`IsolationCase.upstream`)
    have no partial of their own to read: their failures say nothing against the name."""
    adapter = load_engine(f"{tutorial_engines.__name__}:{engine}")
    primitives = {p for parts in adapter.built_from.values() for p in parts}
    run, ops = Settings(engine=engine), sorted(adapter.ops)
    variants = campaign_variants(run, adapter)
    cases = [c for c in isolation_cases(ops, primitives) if c.op == op and not c.kink]
    assert any(c.upstream for c in cases), f"{op} is a primitive of the tutorial engine"
    findings = gathered([check_case(c, run, ops, adapter, variants) for c in cases])[0]
    assert any(f.mistake is None for f in findings), "an upstream case names nothing itself"
    (finding,) = group_findings(findings)
    assert finding.title.startswith(said), finding.title


def test_a_wrong_derivative_the_table_does_not_hold_stays_a_wrong_gradient_without_a_name():
    findings = isolation(mistake_engines.ExpDoubled, "exp")
    assert findings, "the doubled derivative is found"
    assert all(f.mistake is None for f in findings)
    assert {f.title for f in findings} == {"exp — wrong gradient"}


def test_the_named_mistake_and_the_local_derivative_reach_the_console_and_report_json(tmp_path, capsys):
    out = tmp_path / "run"
    engine = "gradcheck.testing.mistake_engines:TanhOneMinusT"
    argv = ["run", "--engine", engine, "--graphs", "40", "--no-edges", "--ops", "add,mul,tanh"]
    argv += ["--out", str(out)]
    assert main(argv) == 1
    screen = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    first = report["findings"][0]
    sentence = TANH
    assert first["title"] == sentence
    assert first["extra"]["mistake"] == sentence
    assert Finding.from_dict(first).mistake == sentence, "report.json reads back"
    (local,) = first["local_derivatives"]
    assert local.startswith("local derivative of x0 (cotangent ")
    assert f"0 · bug · {sentence}" in " ".join(screen.split())
    assert "local derivative of x0" in screen
    assert sentence in (out / "report.html").read_text().replace("&#x27;", "'")


def test_an_earlier_report_without_the_field_reads_back_with_no_mistake():
    finding = Finding(Kind.WRONG_GRADIENT, ("tanh",), "gradient", {})
    record = finding.to_dict()
    assert "mistake" not in record.get("extra", {})
    assert Finding.from_dict(record).mistake is None


def _generic_points(
    op: str, seed: int, n: int = 16, attrs: dict | None = None
) -> tuple[list[np.ndarray], dict]:
    """`n` generic points of `op`'s domain (no constants, nothing at a kink), and its attributes
    (drawn, unless given)."""
    spec = REGISTRY[op]
    rng = np.random.default_rng(seed)
    if attrs is None:
        attrs = {name: options[int(rng.integers(len(options)))] for name, options in spec.attrs.items()}
    args: list[np.ndarray] = [np.empty(0) for _ in range(spec.arity)]
    while args[0].size < n:
        draw = [rng.uniform(-4.0, 4.0, 4 * n) for _ in range(spec.arity)]
        inside = spec.domain(draw, attrs) if spec.domain is not None else np.ones(4 * n, dtype=bool)
        args = [np.concatenate([a, d[inside]]) for a, d in zip(args, draw)]
    return [a[:n] for a in args], attrs


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cotangent=st.floats(1.5, 3.0), sign=st.sampled_from([-1.0, 1.0]))
def test_no_two_entries_of_one_op_coincide_at_generic_points(seed, cotangent, sign):
    """Two entries that agree at every point, where the right derivative does not, would make a
    name a guess: the matcher then names neither; the table must have no such pair."""
    c = sign * cotangent
    for op, table in MISTAKES.items():
        spec = REGISTRY[op]
        args, attrs = _generic_points(op, seed)
        out = spec.numpy(args, attrs)
        correct = spec.grads(args, attrs, out)
        with np.errstate(all="ignore"):
            values = [np.broadcast_to(m.local(args, attrs, out, c), args[0].shape) for m in table]
        for i, a in enumerate(table):
            for b, vb in zip(table[i + 1 :], values[i + 1 :]):
                if a.operand != b.operand or a.upstream != b.upstream:
                    continue  # never candidates for one partial together
                wrong = not np.allclose(values[i], correct[a.operand], rtol=MATCH_RTOL, atol=0)
                assert not (wrong and np.allclose(values[i], vb, rtol=MATCH_RTOL, atol=0)), (
                    f"{op}: {a.wrote!r} and {b.wrote!r} coincide at {args}, {attrs}"
                )


class SubSwapped(tutorial_engines.TutorialValue):
    """ "x - y is y plus minus x." (Its `-` computes y - x.)"""

    def __sub__(self, other):
        return other + (-self)


def test_a_forward_that_swaps_its_operands_is_named():
    graph = one_op_graph("sub")
    swapped = swapped_operands(graph, ValueClassAdapter(SubSwapped, "SubSwapped"))
    assert swapped is not None
    assert swapped.sentence == "`x - y` computes `y - x`: sub's forward swaps its operands"
    assert swapped_operands(graph, ValueClassAdapter(tutorial_engines.TutorialValue, "TutorialValue")) is None


def test_a_reflected_method_that_swaps_its_operands_is_named_from_the_number_on_the_left_case():
    """The pass checks each operator op with a number on either side (`IsolationCase.number_at`),
    which the random one-op draws may not give: `__rsub__` computing x - 2 for 2 - x fails there."""
    adapter = load_engine(f"{tutorial_engines.__name__}:RsubSwapped")
    run, ops = Settings(engine="RsubSwapped"), sorted(adapter.ops)
    cases = [c for c in isolation_cases(ops) if c.op == "sub" and c.number_at is not None]
    assert [c.number_at for c in cases] == [0, 1]
    left, right = (check_case(c, run, ops, adapter).findings for c in cases)
    assert [f.title for f in left] == ["`2 - x` computes `x - 2`: __rsub__ swaps its operands"]
    assert right == []  # its x - 2 is right


def test_a_correct_engine_passes_with_a_number_on_either_side():
    adapter = load_engine(f"{tutorial_engines.__name__}:TutorialValue")
    run, ops = Settings(engine="TutorialValue"), sorted(adapter.ops)
    cases = [c for c in isolation_cases(ops) if c.number_at is not None]
    assert {c.op for c in cases} == {"add", "sub", "mul", "div"}
    assert [f.title for c in cases for f in check_case(c, run, ops, adapter).findings] == []


def test_a_failure_through_the_engines_weighting_of_its_outputs_is_muls_where_mul_is_wrong():
    # add's and pow_const's cases with an input beside the result are weighted by the engine's mul:
    # a mul that gives each operand its own value makes them fail, and they are mul's
    def wrong(cls: type) -> list[Finding]:  # every case of the pass; the tutorial's own `x ** 0` aside
        adapter = ValueClassAdapter(cls, cls.__name__)
        run, ops = Settings(engine=cls.__name__), sorted(adapter.ops)
        primitives = {p for built in adapter.built_from.values() for p in built}
        cases = isolation_cases(["add", "pow_const", "mul"], primitives)
        outcomes = [check_case(case, run, ops, adapter) for case in cases]
        return [f for f in gathered(outcomes)[0] if f.kind is Kind.WRONG_GRADIENT]

    findings = wrong(tutorial_engines.MulOwnOperand)
    assert findings and {f.ops for f in findings} == {("mul",)}, [f.title for f in findings]
    assert not wrong(tutorial_engines.TutorialValue)


def test_a_binary_ops_second_partial_is_named_though_the_pass_draws_a_number_there_mostly():
    # div's draws mostly hold a number as y: the pass's graph with every operand an input is
    # where d/dy is checked, and a y-partial without its square named
    (found,) = [f for f in isolation(tutorial_engines.DivSquareLost, "div") if f.kind is Kind.WRONG_GRADIENT]
    assert found.mistake.startswith("div's backward behaves like -x/y · out.grad for y"), found.title


def test_a_number_refused_on_both_sides_of_an_operator_is_one_mistake_that_says_wrap_it():
    adapter = ValueClassAdapter(tutorial_engines.AddNoWrap, "AddNoWrap")
    (add,) = [f for f in inspection_findings(adapter) if f.ops == ("add",)]
    assert add.mistake.startswith("`2.0 + x` and `x + 2.0` raise AttributeError: AddNoWrap refuses a number")
    assert "wrap it first, as AddNoWrap(2.0)" in add.mistake
    # one side only, or a method missing: said of that side
    (rsub,) = inspection_findings(ValueClassAdapter(tutorial_engines.NoRsub, "NoRsub"))
    assert rsub.mistake == "`2.0 - x` raises TypeError: NoRsub has no __rsub__; torch takes the number"
