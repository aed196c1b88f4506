"""Spec for the demos in examples/: each trains deterministically to its goal and prints its progress."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def loss_lines(output):
    return [line for line in output.splitlines() if line.startswith("step ")]


def test_xor_is_solved_and_the_loss_is_printed_every_20_steps(capsys):
    result = load("xor").main()
    out = capsys.readouterr().out
    assert result["solved"] is True
    assert result["loss"] < 0.05
    assert [p > 0.5 for p in result["probabilities"]] == [False, True, True, False]
    assert len(loss_lines(out)) == 200 // 20 + 1
    assert "solved: True" in out


def test_xor_training_is_deterministic(capsys):
    xor = load("xor")
    assert xor.main(steps=30) == xor.main(steps=30)


def test_four_points_fits_its_targets_in_200_sgd_steps(capsys):
    result = load("four_points").main()
    out = capsys.readouterr().out
    assert result["loss"] < 1e-3
    assert result["predictions"] == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=0.05)
    assert len(loss_lines(out)) == 200 // 20 + 1
    assert out.strip().endswith(f"final loss {result['loss']:.6f}")


def test_fewer_steps_fit_less_well(capsys):
    four_points = load("four_points")
    assert four_points.main(steps=5)["loss"] > four_points.main(steps=200)["loss"]


def test_moons_reaches_ninety_percent_accuracy_in_ten_steps(capsys):
    result = load("moons").main(steps=10)  # the script's default, 20 steps, reaches 99%
    out = capsys.readouterr().out
    assert result["accuracy"] >= 0.9
    assert "accuracy" in loss_lines(out)[-1]
    assert out.strip().endswith("on 100 points")


def test_noiseless_moons_are_sklearns_moons():
    datasets = pytest.importorskip("sklearn.datasets")
    points, labels = load("moons").make_moons(100, noise=0.0)
    expected_points, expected_labels = datasets.make_moons(100, shuffle=False, noise=0.0)
    np.testing.assert_allclose(points, expected_points, atol=1e-15)
    np.testing.assert_array_equal(labels, 2 * expected_labels - 1)


@pytest.mark.parametrize("name", ["xor", "four_points"])
def test_examples_run_as_scripts(name):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "final loss" in done.stdout
