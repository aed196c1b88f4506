"""minigrad ships `py.typed`: its code type-checks, as pyproject.toml configures mypy for it."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]


def test_minigrad_type_checks(tmp_path):
    config = str(ROOT / "pyproject.toml")
    report, errors, status = api.run(
        ["--config-file", config, "--cache-dir", str(tmp_path), str(ROOT / "minigrad")]
    )
    assert status == 0, report + errors


def test_tensor_has_no_instance_dict_though_its_mixins_share_a_typed_base():
    from minigrad import Tensor

    assert not hasattr(Tensor([1.0]), "__dict__")
