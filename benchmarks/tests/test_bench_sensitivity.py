"""bench_sensitivity runs each harness with the options that harness accepts (no share is asserted)."""

from __future__ import annotations

from bench_scripts import script

bench_sensitivity = script("bench_sensitivity")


def test_one_campaign_of_this_trees_harness_on_the_planted_engine(tmp_path):
    counts = bench_sensitivity.campaign(bench_sensitivity.REPO, "mul", 1e-6, 10, 1, tmp_path / "out")
    assert counts["graphs"] == 10 and 0 < counts["failed"] <= 10, counts


def test_the_older_harness_is_given_its_own_spelling_of_the_shrink_limit(tmp_path):
    assert bench_sensitivity.shrink_option(tmp_path) == ["--max-shrink", "1"]
    assert bench_sensitivity.shrink_option(bench_sensitivity.REPO)[0] == "--shrink-budget"
