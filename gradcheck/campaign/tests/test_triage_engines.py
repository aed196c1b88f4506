"""Each engine of `gradcheck/testing/triage_engines.py` comes out of `gradcheck run` as exactly one
finding, in the right tier, titled by its cause."""

import json
import xml.etree.ElementTree as ET

import pytest

from gradcheck.cli import main

ENGINES = "gradcheck.testing.triage_engines"


def campaign(tmp_path, engine: str, *options: str) -> tuple[int, dict]:
    out = tmp_path / engine
    argv = ["run", "--engine", f"{ENGINES}:{engine}", "--graphs", "60", "--no-edges", "--out", str(out)]
    status = main([*argv, *options])
    return status, json.loads((out / "report.json").read_text())


def items(report: dict) -> list[tuple[str, str]]:
    return [(f["tier"], f["title"]) for f in report["findings"]]


def test_an_adapter_listing_a_method_its_engine_lacks_is_one_adapter_finding_and_the_op_is_left_out(tmp_path):
    status, report = campaign(tmp_path, "ListsSigmoidItLacks")
    assert status == 1
    assert items(report) == [("adapter", "sigmoid — adapter fault (AttributeError)")]
    (finding,) = report["findings"]
    assert finding["fix"] == (
        "the adapter lists sigmoid but the engine has no `.sigmoid`: "
        "spell it in `apply` or leave it out of `ops`"
    )
    assert finding["problems"][0].split(": ", 1)[1].startswith("adapter raised AttributeError")
    assert report["settings"]["left_out"] == ["sigmoid"]
    assert "sigmoid" not in report["ops"], "no random graph drew the op once its spelling failed"


@pytest.mark.usefixtures("shallow_chains")  # tensor chains 10^3 deep only
def test_a_reduction_failing_for_a_tuple_of_dims_is_one_bug_titled_by_that_variant(tmp_path):
    status, report = campaign(tmp_path, "SumOverOneDimOnly", "--tensor")
    assert status == 1
    assert items(report) == [("bug", "sum over a tuple of dims — engine raised TypeError")]
    assert report["findings"][0]["variant"] == ["over a tuple of dims"]


def test_a_value_class_without_rtruediv_is_one_bug_in_every_report(tmp_path):
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    options = ("--junit-xml", str(junit), "--summary-md", str(summary))
    status, report = campaign(tmp_path, "NoRtruedivValue", *options)
    assert status == 1
    title = "`2.0 / x` raises TypeError: NoRtruedivValue has no __rtruediv__; torch takes the number"
    assert items(report) == [("bug", title)]
    assert report["findings"][0]["phase"] == "inspection"
    assert "NoRtruedivValue has no __rtruediv__" in report["findings"][0]["problems"][0]
    (case,) = [c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == title]
    assert case.find("properties/property[@name='tier']").get("value") == "bug"
    assert case.find("failure").get("message").startswith("bug: ")
    assert f"| bug | {title} |" in summary.read_text()
    assert title in (tmp_path / "NoRtruedivValue" / "report.html").read_text()


def test_an_adapter_with_gradients_only_and_wrapped_constants_gets_no_structural_finding(tmp_path):
    status, report = campaign(tmp_path, "TapeGradientsOnly")
    assert status == 1
    # its one planted bug, named: the planted cos' is sin(x)
    named = "cos's backward behaves like sin(x) · out.grad; the derivative is -sin(x)"
    assert items(report) == [("bug", named)]
    checks = {c["name"]: c for c in report["structure"]["checks"]}
    for name in ("backward() twice", "gradients reset and taken again", "interior nodes' gradients"):
        assert checks[name]["status"] == "not applicable"
        assert "the adapter cannot: AttributeError" in checks[name]["detail"]
    assert checks["deep chains"]["status"] == "passed", "the chains are built through `operand`"


def test_the_gate_records_and_gates_a_refused_number_as_a_bug(tmp_path, capsys):
    baseline, junit = tmp_path / "b.json", tmp_path / "junit.xml"
    argv = ["gate", "--engine", f"{ENGINES}:NoRtruedivValue", "--graphs", "30", "--baseline", str(baseline)]
    assert main([*argv, "--update-baseline"]) == 0
    out = capsys.readouterr().out
    title = "`2.0 / x` raises TypeError: NoRtruedivValue has no __rtruediv__; torch takes the number"
    assert f"accepted finding: {title}" in " ".join(out.split())
    recorded = json.loads(baseline.read_text())["parts"]["scalar"]["findings"]
    assert title in [f["title"] for f in recorded]
    assert main([*argv, "--junit-xml", str(junit)]) == 0, "the same build passes its baseline"
    (case,) = [c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == title]
    assert case.find("properties/property[@name='tier']").get("value") == "bug"


def test_the_gate_records_an_adapter_fault_and_passes_the_same_build(tmp_path, capsys):
    # the op left out for its adapter's fault is no op "never drawn": its finding gates it
    baseline = tmp_path / "b.json"
    engine = f"{ENGINES}:ListsSigmoidItLacks"
    argv = ["gate", "--engine", engine, "--graphs", "30", "--baseline", str(baseline)]
    assert main([*argv, "--update-baseline"]) == 0, capsys.readouterr().out
    part = json.loads(baseline.read_text())["parts"]["scalar"]
    assert [(f["tier"], f["title"]) for f in part["findings"]] == [
        ("adapter", "sigmoid — adapter fault (AttributeError)")
    ]
    assert "sigmoid" in part["surface"]["ops"] and "sigmoid" not in part["ops"]
    capsys.readouterr()
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "new coverage" not in out and "never drawn" not in out


def test_a_reciprocal_computed_as_a_power_is_one_bug_covering_the_graphs_its_complex_value_makes_raise(
    tmp_path,
):
    status, report = campaign(tmp_path, "ReciprocalPowerOff", "--graphs", "120")
    assert status == 1
    title = "div with a number on the left — wrong value; not a number (complex)"
    assert items(report) == [("bug", title)], "its value off, complex for x < 0: one bug of one op"
    (finding,) = report["findings"]
    assert finding["kind"] == "wrong-value", "shown by a plainly wrong number, not the complex one"
    assert set(finding["graph_indices"]) == {f["index"] for f in report["failures"]}
    raising = [f for f in report["failures"] if "engine raised TypeError" in f["problems"][0]]
    assert raising, "a relu or tanh fed the complex value raises: counted in the division's finding"
