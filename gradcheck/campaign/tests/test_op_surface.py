"""The op surface in campaigns and the gate: an attribute variant reaches an adapter only when it
says it handles it, and a gate baseline keeps gating what it gated when the registry adds one."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gradcheck.campaign import regression_gate
from gradcheck.campaign.checking import campaign_checker, real_backend
from gradcheck.campaign.phases import run_campaign
from gradcheck.campaign.settings import CampaignError, Settings
from gradcheck.campaign.validation import surface_note, validate
from gradcheck.engines.loading import load_engine
from gradcheck.graphs import tensor_ops
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.surface import VARIANTS, variants_of

ENGINES = "gradcheck.testing.surface_engines"
GRAPHS = 40
# the gate's campaigns here run the structural phase: no test here is about depth, and a baseline
# recorded and gated in one test meets the same chains both times (conftest.py)
pytestmark = pytest.mark.usefixtures("shallow_chains")


def settings(adapter: str, **options) -> Settings:
    engine = f"{ENGINES}:{adapter}"
    return Settings(engine=engine, graphs=GRAPHS, seed=3, tensor=True, structure=False, **options)


def drawn_variants(s: Settings) -> set[str]:
    checker = campaign_checker(s)
    return {v for i in range(s.graphs) for n in checker.graph(i).nodes for v in variants_of(n.op, n.attr)}


def test_an_adapter_written_before_keepdim_never_meets_it_and_passes():
    s = settings("BeforeKeepdim")
    assert drawn_variants(s) == set()
    result = run_campaign(s, real_backend())
    assert result.passed and not result.findings, [f.title for f in result.findings]
    note = surface_note(s, load_engine(s.engine))
    assert note is not None and "sum.keepdim" in note and "mean.keepdim" in note
    assert "no registry_release (release 1)" in note


def test_the_same_adapter_naming_release_2_meets_keepdim_and_fails_on_it():
    s = settings("BeforeKeepdimClaimingRelease2")
    assert drawn_variants(s) == {"sum.keepdim", "mean.keepdim"}
    result = run_campaign(s, real_backend())
    assert not result.passed
    assert {op for f in result.failing_findings for op in f.ops} & {"sum", "mean"}
    # the variant the surface let through is the one the titles name (campaign/variants.py), for a
    # minimal graph of one keepdim node (one of several nodes is titled by its ops alone)
    titles = {f.title for f in result.failing_findings}
    expected = "keeping the reduced dims — wrong shape (the adapter may not pass keepdim on)"
    assert {f"{op} {expected}" for op in ("sum", "mean")} <= titles, titles
    assert surface_note(s, load_engine(s.engine)) is None


def test_an_unknown_release_is_bad_input_before_the_campaign(monkeypatch):
    from gradcheck.testing import surface_engines

    monkeypatch.setattr(surface_engines.BeforeKeepdim, "registry_release", 3)
    with pytest.raises(CampaignError, match="registry_release: unknown registry release 3"):
        validate(settings("BeforeKeepdim"))


def _registry_before_keepdim(patch: pytest.MonkeyPatch) -> None:
    """The registry as it was before keepdim (release 1's sum and mean): dims only, no variant."""
    for op in ("sum", "mean"):
        patch.setitem(REGISTRY, op, dataclasses.replace(REGISTRY[op], tensor_attrs=tensor_ops._reduce_attrs))
        patch.delitem(VARIANTS, f"{op}.keepdim")


def test_a_variant_added_after_a_baseline_was_recorded_keeps_the_gate_passing(tmp_path):
    part = regression_gate.part_for(f"{ENGINES}:KeepdimIgnored", tensor=True, graphs=GRAPHS)
    path = tmp_path / "baseline.json"
    with pytest.MonkeyPatch.context() as earlier_release:
        _registry_before_keepdim(earlier_release)
        assert regression_gate.update_baseline([part], path, jobs=1, accept_findings=False).written
    recorded = json.loads(path.read_text())["parts"]["tensor"]["surface"]
    assert recorded["variants"] == [], "no variant of its ops existed then"
    assert recorded["ops"] == ["add", "mul", "tanh", "sum", "mean"], "the ops drawn from, in registry order"
    # this registry draws keepdim, which the adapter mishandles: a campaign on all of it fails
    assert not run_campaign(part.settings(), real_backend()).passed
    outcome = regression_gate.run_gate([part], path, 1)
    assert outcome.passed, outcome.verdict_lines()
    (coverage,) = outcome.new_coverage
    # named as titles name them, with the name an adapter opts in by
    start = "new coverage (tensor): variant(s) mean keeping the reduced dims (mean.keepdim); "
    assert coverage.startswith(start)
    assert "sum keeping the reduced dims (sum.keepdim)" in coverage
    assert coverage.endswith("run --update-baseline to include it")
    # recorded again, the baseline gates keepdim too, and accepts what the adapter does with it
    assert regression_gate.update_baseline([part], path, jobs=1).accepted
    again = regression_gate.run_gate([part], path, 1)
    assert again.passed and again.new_coverage == []


def test_a_baseline_that_records_no_surface_was_recorded_by_release_2(tmp_path):
    # ops and variants of both releases (minigrad-tensor's every op took 3 times as long)
    part = regression_gate.part_for(f"{ENGINES}:FewOpsOfBothReleases", tensor=True, graphs=GRAPHS)
    path = tmp_path / "baseline.json"
    assert regression_gate.update_baseline([part], path, jobs=1, accept_findings=False).written
    data = json.loads(path.read_text())
    surface = data["parts"]["tensor"]["surface"]
    assert "max_dim" in surface["ops"] and {"sum.keepdim", "matmul.vector"} <= set(surface["variants"])
    del data["parts"]["tensor"]["surface"]  # as 7dfac76 wrote it
    path.write_text(json.dumps(data))
    outcome = regression_gate.run_gate([part], path, 1)
    assert outcome.passed and outcome.new_coverage == [], outcome.verdict_lines()
