"""`gradcheck run --reference exact`: the engine judged against the exact values, torch beside it.
Where torch alone is off the engine is right: such a finding (tier `torch-off`) never fails the
run, leads every report's first screen, and `replay` of the report judges as the campaign did."""

import json
import xml.etree.ElementTree as ET

import pytest

from gradcheck.campaign import tiers
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.grouping import group_findings
from gradcheck.campaign.overview import overview
from gradcheck.campaign.torch_off import torch_off_finding
from gradcheck.cli import main
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Off, Problem, What

KEPT_POW = "gradcheck.testing.accurate_engines:KeptPowHessian"
# seed 0 draws pow(a, b) at b == 0 at the first point of graphs 28 and 44 of these
POW_CAMPAIGN = ["--ops", "pow,mul,add", "--graphs", "45", "--no-edges", "--no-structure"]


def campaign(tmp_path, name: str, *options: str) -> tuple[int, dict]:
    out = tmp_path / name
    status = main(["run", *options, "--out", str(out), "--no-save"])
    return status, json.loads((out / "report.json").read_text())


def test_an_engine_right_where_torch_is_off_passes_with_a_torch_off_finding_first(tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    status, report = campaign(
        tmp_path,
        "exact",
        "--engine",
        KEPT_POW,
        *POW_CAMPAIGN,
        "--reference",
        "exact",
        "--junit-xml",
        str(junit),
    )
    out = " ".join(capsys.readouterr().out.split())
    assert status == 0 and report["passed"]
    assert report["settings"]["reference"] == "exact"
    assert "--reference exact" in report["run"]["repeat_command"]
    first = report["findings"][0]
    assert (first["tier"], first["title"]) == ("torch-off", "pow — torch is off: wrong second derivative")
    assert "torch is off: torch" in first["problems"][0]
    assert "1 finding where torch is off" in out and "PASS" in out
    html = (tmp_path / "exact" / "report.html").read_text()
    assert "torch is off" in html and "Repro, in torch's code, judged against the exact values" in html
    (case,) = [c for c in ET.parse(junit).iter("testcase") if c.get("classname") == "gradcheck.findings"]
    assert case.find("failure") is None and "the engine is right" in (case.findtext("system-out") or "")

    assert main(["replay", str(tmp_path / "exact" / "report.json"), "--engine", KEPT_POW]) == 0
    replayed = " ".join(capsys.readouterr().out.split())
    assert "against the exact values" in replayed and "torch is off here (the engine is right)" in replayed
    replay_against_torch = ["replay", str(tmp_path / "exact" / "report.json"), "--engine", KEPT_POW]
    assert main([*replay_against_torch, "--reference", "torch"]) == 0, (
        "against torch too, an answer off torch's is judged by the exact values before it fails"
    )
    capsys.readouterr()

    status, against_torch = campaign(tmp_path, "torch", "--engine", KEPT_POW, *POW_CAMPAIGN)
    assert status == 0, (
        "judged against torch, answers that differ from torch's are judged by the exact values"
    )
    assert [(f["tier"], f["title"]) for f in against_torch["findings"]] == [
        ("torch-off", "pow — torch is off: wrong second derivative")
    ]


def test_minigrad_judged_against_the_exact_values_has_no_bug(tmp_path):
    status, report = campaign(tmp_path, "minigrad", "--graphs", "25", "--no-edges", "--reference", "exact")
    assert status == 0, [f["title"] for f in report["findings"]]
    assert not [f for f in report["findings"] if f["tier"] in (tiers.BUG, tiers.GRAPH_CODE)]


@pytest.mark.usefixtures("shallow_chains")  # tensor chains 10^3 deep only
def test_torch_judged_against_the_exact_values_runs_as_the_engine_under_test(tmp_path):
    status, report = campaign(
        tmp_path,
        "torch",
        "--engine",
        "torch",
        "--tensor",
        "--graphs",
        "6",
        "--no-edges",
        "--reference",
        "exact",
    )
    assert report["settings"]["engine"] == "torch" and report["totals"]["graphs"] == 6
    assert status == 0, [f["title"] for f in report["findings"]]


def torch_off() -> Finding:
    graph = Graph([Input("a", 2.0), Input("b", 0.0)], [OpNode("pow", (0, 1))], [2])
    problem = Problem(What.HESSIAN, "second-derivative", index=1, reference=0.0, exact=0.5, off=Off.TORCH)
    return torch_off_finding(graph, [problem])


def test_a_finding_where_torch_alone_is_off_never_fails_and_leads_the_first_screen():
    off = torch_off()
    assert off.tier == tiers.TORCH_OFF and off.off is Off.TORCH
    assert not off.is_failure() and not off.is_failure("subgradient")
    ONE_OP = {
        "inputs": [{"name": "x0", "value": 0.5}],
        "nodes": [{"op": "tanh", "args": [0]}],
        "outputs": [1],
    }
    bug = Finding(Kind.WRONG_GRADIENT, ("tanh",), "gradient", ONE_OP, region="ordinary", tier="bug")
    findings = group_findings([bug, off])
    assert [f.tier for f in findings] == ["torch-off", "bug"]
    assert [r.tier for r in overview(findings).rows] == ["torch-off", "bug"]
    assert [f.is_failure() for f in findings] == [False, True]
