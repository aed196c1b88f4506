"""The benchmark scripts, imported by their tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1]


def script(name: str) -> ModuleType:
    """benchmarks/<name>.py as a module, kept out of sys.modules (hypothesis draws constants from
    the modules there)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
