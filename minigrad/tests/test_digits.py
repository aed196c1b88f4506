"""examples/digits.py: a tensor MLP reaches 95% test accuracy on scikit-learn's 8x8 digits and
saves its loss-and-accuracy plot."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")
pytest.importorskip("rich")

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "digits.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def load_digits_example():
    spec = importlib.util.spec_from_file_location("example_digits", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_reaches_95_percent_test_accuracy_and_saves_the_plot(tmp_path, capsys):
    plot = tmp_path / "plots" / "digits.png"
    result = load_digits_example().main(plot, seed=0)
    assert result["accuracy"] >= 0.95
    assert result["losses"][-1] < result["losses"][0] / 10
    assert len(result["accuracies"]) == len(result["losses"]) == 20
    assert plot.read_bytes().startswith(PNG_MAGIC)
    assert f"test accuracy {result['accuracy']:.2%}" in capsys.readouterr().out


def test_digits_training_is_deterministic_for_a_seed(tmp_path, capsys):
    digits = load_digits_example()
    first = digits.main(tmp_path / "a.png", epochs=2, seed=3)
    second = digits.main(tmp_path / "b.png", epochs=2, seed=3)
    assert first["losses"] == second["losses"] and first["accuracies"] == second["accuracies"]


def test_digits_script_takes_the_plot_path_from_argv(tmp_path):
    plot = tmp_path / "from_argv.png"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(plot)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert plot.read_bytes().startswith(PNG_MAGIC)
    assert "plot saved to" in run.stdout
