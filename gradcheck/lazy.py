"""Names a package imports on first use (PEP 562), so importing it does not import what they need
(torch, for the parity check) until one of them is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` for `package`: each name of `modules` from the module it names,
    imported when the name is first asked for."""

    def __getattr__(name: str) -> object:
        if name in modules:
            return getattr(importlib.import_module(modules[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
