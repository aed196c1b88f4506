"""Words are the renderers' alone: every problem reworded, no verdict, tier, title or gate identity
moves. The campaigns below run once with gradcheck's words and once with every template of
`gradcheck.parity.wording` (and the words for an exception and an adapter's frame, wherever they
are imported) replaced by other words; their findings must agree in everything but the problems'
text. Code that read a problem's words back ("adapter raised" for the tier, "engine raised X" for
a title, a problem's numbers for settling) would see the new words and decide otherwise."""

from __future__ import annotations

import sys

import pytest

from gradcheck.campaign import Settings, real_backend, run_campaign
from gradcheck.campaign.verdict import identities
from gradcheck.parity import wording

# Engines whose findings cover the kinds of problem: a wrong derivative, an exception, a non-number,
# an adapter's fault, a second derivative, a convention, graph code and edge values.
ENGINES = {
    "gradcheck.testing.broken_engines:WrongDerivative": {},
    "gradcheck.testing.kind_engines:ExpRaises": {},
    "gradcheck.testing.kind_engines:TanhFirstOrderOnly": {},
    "gradcheck.testing.kind_engines:ReluHalfAtZero": {},
    "gradcheck.testing.field_engines:NodeInData": {},
    "gradcheck.testing.triage_engines:ListsSigmoidItLacks": {},
    "gradcheck.testing.structural_engines:DoubledSharedAdapter": {},
    "gradcheck.testing.cause_engines:NaiveZeroPower": {},
}


def _reworded(render):
    return lambda *args: "reworded, " + render(*args)[::-1].upper()


def reword_everything(monkeypatch) -> None:
    """Every template, and the words for an exception and a frame, replaced (reversed, upper case,
    behind "reworded, ") in the renderer and in every module that imported them by name."""
    for what, template in list(wording.TEMPLATES.items()):
        monkeypatch.setitem(wording.TEMPLATES, what, _reworded(template))
    for name in ("exception", "frame", "at_point", "outside"):
        original = getattr(wording, name)
        new = _reworded(original)
        for module in list(sys.modules.values()):
            if (module.__name__ or "").startswith("gradcheck") and getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, new)


@pytest.fixture
def other_words(monkeypatch):
    reword_everything(monkeypatch)


def _verdicts(engine: str) -> list[tuple]:
    result = run_campaign(Settings(engine=engine, graphs=25, seed=3, points=2), real_backend())
    return [
        (
            f.title,
            f.kind,
            f.check,
            f.tier,
            f.region,
            f.ops,
            f.graphs,
            f.graph_indices,
            f.fix != "",
            f.signature,
            identities(f),
            tuple(p.what for p in f.problems),
        )
        for f in result.findings
    ] + [("passed", result.passed)]


@pytest.mark.parametrize("engine", ENGINES)
def test_rewording_every_problem_changes_no_verdict_tier_or_identity(engine, monkeypatch):
    # each test runs its engine's campaign in gradcheck's words itself: a module fixture of all
    # eight ran once in each xdist worker that met this module (eight campaigns twice at -n 2)
    findings = _verdicts(engine)
    assert len(findings) > 1, f"{engine} must have findings for the comparison to say anything"
    reword_everything(monkeypatch)
    assert _verdicts(engine) == findings


def test_the_rewording_reaches_the_problems(other_words):
    result = run_campaign(
        Settings(engine="gradcheck.testing.kind_engines:ExpRaises", graphs=20, seed=3, points=2),
        real_backend(),
    )
    texts = [str(p) for f in result.findings for p in f.problems]
    assert texts and all(t.startswith("reworded, ") for t in texts)
    assert not any("engine raised" in t for t in texts)
