"""minigrad ships `py.typed`: its code type-checks, as pyproject.toml configures mypy for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_minigrad_type_checks(tmp_path):
    """In its own process: mypy's `api.run` raises the recursion limit and leaves it raised."""
    config = str(ROOT / "pyproject.toml")
    command = [sys.executable, "-m", "mypy", "--config-file", config, "--cache-dir", str(tmp_path)]
    done = subprocess.run([*command, str(ROOT / "minigrad")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_tensor_has_no_instance_dict_though_its_mixins_share_a_typed_base():
    from minigrad import Tensor

    assert not hasattr(Tensor([1.0]), "__dict__")
