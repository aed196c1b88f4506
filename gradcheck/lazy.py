"""Names a package imports on first use (PEP 562), and modules executed on first use
(`importlib.util.LazyLoader`), so importing gradcheck does not import what they need (torch, for
the parity check) until one of them is used."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Mapping
from types import ModuleType


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], object]:
    """A module `__getattr__` for `package`: each name of `modules` from the module it names,
    imported when the name is first asked for."""

    def __getattr__(name: str) -> object:
        if name in modules:
            return getattr(importlib.import_module(modules[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def lazy_module(name: str, then: Callable[[ModuleType], object] | None = None) -> ModuleType | None:
    """Module `name` (as `import name` would give it, and in `sys.modules`), executed when one of
    its attributes is first asked for, and `then` called on it once it is; None when it is not
    installed. One imported already is returned as it is (`then` called on it now)."""
    if name in sys.modules:
        module = sys.modules[name]
        if then is not None:
            then(module)
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return None
    loader = importlib.util.LazyLoader(_Then(spec.loader, then) if then is not None else spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


class _Then(importlib.abc.Loader):
    """A module's own loader, and a call on the module once it has run."""

    def __init__(self, loader: importlib.abc.Loader, then: Callable[[ModuleType], object]) -> None:
        self.loader, self.then = loader, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.then(module)
