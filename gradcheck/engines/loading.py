"""`load_engine`: an adapter from an engine's name: a built-in name, `module:Class`, or
`path/to/file.py:Class`.

`Class` is an adapter (an `EngineAdapter` subclass or instance), or a micrograd-style value
class, for which an adapter is built by inspecting it (`gradcheck.engines.value_class`). A file
is loaded from its path, never looked up on `sys.path`, so no folder of the same name (a
campaign's `--out`) can stand in for it.

`spec_of` names an object of this process as a spec (`gradcheck.check_engine`): a class reachable
by its module and name as `module:Class` (`__main__:Value` for a notebook's cell), anything else
(an adapter instance, a class made in a function) as `object:Name#N`, held here, so that this
process and its forked workers load it and no other process can.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.value_class import HELD_PREFIX, ValueClassAdapter, not_a_value_class
from gradcheck.graphs.registry import REGISTRY

# name -> "module:Class" for the engines that ship with the harness
BUILTIN_ENGINES: dict[str, str] = {
    "minigrad": "gradcheck.engines.minigrad_value:MinigradValue",
    "minigrad-tensor": "gradcheck.engines.minigrad_tensor:MinigradTensor",
    "micrograd": "gradcheck.engines.micrograd:MicrogradAdapter",
    # torch itself, to be judged against the exact values (`--reference exact`; tensor graphs)
    "torch": "gradcheck.engines.torch_engine:TorchAdapter",
}
# name -> "module:Class" for the built-in function-style engines (gradcheck.engines.functional)
FUNCTION_ENGINES: dict[str, str] = {
    "jax": "gradcheck.engines.jax_engine:JaxAdapter",
    "jax-tensor": "gradcheck.engines.jax_engine:JaxTensorAdapter",
    "autograd": "gradcheck.engines.autograd_engine:AutogradAdapter",
    "autograd-tensor": "gradcheck.engines.autograd_engine:AutogradTensorAdapter",
}


class UnknownEngineError(ValueError):
    """`load_engine` got a name it cannot resolve."""


# spec (`HELD_PREFIX`...) -> an object `spec_of` named (only this process and its forks have them)
_HELD: dict[str, object] = {}


def spec_of(engine: object) -> str:
    """The spec that loads `engine` (a value class, an adapter class or instance) in this process
    and in its forked workers: `module:Class` when the class is its module's attribute of that
    name (a notebook's cell: `__main__:Value`), else `object:Name#N`, held by this process."""
    if isinstance(engine, type):
        module = sys.modules.get(engine.__module__)
        if module is not None and getattr(module, engine.__qualname__, None) is engine:
            return f"{engine.__module__}:{engine.__qualname__}"
    for spec, held in _HELD.items():
        if held is engine:
            return spec
    name = engine.__name__ if isinstance(engine, type) else type(engine).__name__
    spec = f"{HELD_PREFIX}{name}#{len(_HELD) + 1}"
    _HELD[spec] = engine
    return spec


def needs_this_process(spec: str) -> bool:
    """Whether only this process and its forks can load `spec`: an object held here, or a class
    of `__main__` (a notebook's cells, a script run as a program: a fresh process has neither)."""
    return spec.startswith(HELD_PREFIX) or spec.rpartition(":")[0] == "__main__"


def unknown_engine(name: str) -> str | None:
    """What is wrong with engine `name` when it is neither a built-in engine's name nor a spec
    ('module:Class', 'path/to/file.py:Class'); None when it is one. Imports nothing: a command
    says it before it loads the campaign."""
    if ":" in (BUILTIN_ENGINES.get(name) or FUNCTION_ENGINES.get(name, name)):
        return None
    return (
        f"unknown engine {name!r}; valid: {', '.join([*BUILTIN_ENGINES, *FUNCTION_ENGINES])}, "
        "'module:Class' or 'path/to/file.py:Class' naming an EngineAdapter subclass or a "
        "micrograd-style Value class"
    )


def load_engine(name: str | EngineAdapter = "minigrad") -> EngineAdapter:
    """An adapter instance for `name`: a built-in engine name, 'package.module:Class' or
    'path/to/file.py:Class', where Class is an adapter or a micrograd-style value class."""
    if isinstance(name, EngineAdapter):
        return name
    unknown = unknown_engine(name)
    if unknown is not None:
        raise UnknownEngineError(unknown)
    target = BUILTIN_ENGINES.get(name) or FUNCTION_ENGINES.get(name, name)
    where, _, attr = target.rpartition(":")
    module: ModuleType | None = None
    if target.startswith(HELD_PREFIX):
        obj = _held(target)
    else:
        module = _module(name, where)
        obj = getattr(module, attr, None)
    if obj is None and getattr(module, "__file__", None) is None and hasattr(module, "__path__"):
        raise UnknownEngineError(
            f"engine {name!r}: {where!r} imported as the folder {', '.join(module.__path__)} (a folder "
            "without __init__.py, such as a campaign's --out folder), not as your module: put the "
            "module's folder on PYTHONPATH, or name its file (--engine path/to/file.py:Class)"
        )
    if obj is None:
        raise UnknownEngineError(f"engine {name!r}: module {where!r} has no attribute {attr!r}")
    if isinstance(obj, type) and issubclass(obj, EngineAdapter):
        adapter = obj()
    elif isinstance(obj, EngineAdapter):
        adapter = obj
    elif isinstance(obj, type):
        reason = not_a_value_class(obj)
        if reason:
            raise UnknownEngineError(
                f"engine {name!r}: {target} is not an EngineAdapter subclass or instance, and not a "
                f"micrograd-style value class ({reason}); write an adapter (docs/adapters.md)"
            )
        adapter = ValueClassAdapter(obj, canonical_spec(target))
    else:
        raise UnknownEngineError(f"engine {name!r}: {target} is not an EngineAdapter subclass or instance")
    unknown = sorted(set(adapter.ops) - set(REGISTRY))
    if unknown:
        raise UnknownEngineError(f"engine {name!r} lists ops unknown to the registry: {unknown}")
    adapter.spec = name if target != name else canonical_spec(target)
    return adapter


def _held(spec: str) -> object:
    """The object `spec_of` named `spec`; UnknownEngineError in a process that does not hold it."""
    if spec not in _HELD:
        raise UnknownEngineError(
            f"engine {spec!r} names an object of the Python process that checked it "
            "(gradcheck.check_engine); only that process and its forked workers can load it"
        )
    return _HELD[spec]


def is_path_spec(spec: str) -> bool:
    """Whether an engine spec names a file ('dir/engine.py:Value') rather than a module."""
    return spec.rpartition(":")[0].endswith(".py")


def canonical_spec(spec: str) -> str:
    """`spec` as it works from any directory: a file's path made absolute; module specs as they are."""
    if not is_path_spec(spec):
        return spec
    where, _, attr = spec.rpartition(":")
    return f"{Path(where).resolve()}:{attr}"


def missing_module(spec: str) -> str | None:
    """The module (or file) engine `spec` is loaded from, when this process cannot find it; None
    when it can (or `spec` names no module: loading it will say what is wrong). Found without
    importing anything, so no engine code runs: a Dask worker's check before a campaign sends it
    work (`gradcheck.campaign.cluster`)."""
    where = (BUILTIN_ENGINES.get(spec) or FUNCTION_ENGINES.get(spec, spec)).rpartition(":")[0]
    if not where:
        return None
    if where.endswith(".py"):
        return None if Path(where).is_file() else where
    locations = None  # where the next part is looked for: sys.path, then its package's folders
    parts = where.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name in sys.modules:
            locations = getattr(sys.modules[name], "__path__", None)
            continue
        found = _find_spec(name, locations) if depth == 1 or locations is not None else None
        if found is None:
            return name
        locations = found.submodule_search_locations
    return None


def _find_spec(name: str, locations: list[str] | None) -> importlib.machinery.ModuleSpec | None:
    """Module `name`'s spec from the import system's finders, its parent packages left unimported."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is not None and (spec := find(name, locations)) is not None:
            return spec
    return None


def import_root(spec: str) -> str | None:
    """The folder to put on PYTHONPATH so that `spec`'s module imports in a fresh process (None:
    it imports as it is: a file spec, a built-in name, or a module installed with Python)."""
    where = spec.rpartition(":")[0]
    if not where or is_path_spec(spec):
        return None
    top = sys.modules.get(where.split(".")[0])
    file = getattr(top, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    root = path.parent.parent if path.name == "__init__.py" else path.parent
    # where Python's own and installed packages live, and gradcheck itself: a replay imports those
    found = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib", "stdlib")}
    found.add(Path(__file__).resolve().parents[2])
    return None if root in found else str(root)


def _module(name: str, where: str) -> ModuleType:
    if where.endswith(".py"):
        return _module_from_file(name, Path(where))
    try:
        return importlib.import_module(where)
    except ImportError as e:
        raise UnknownEngineError(f"engine {name!r}: cannot import module {where!r}: {e}") from e


def _module_from_file(name: str, path: Path) -> ModuleType:
    """The module in file `path`: the one this process already imported from it (`import lesson`,
    importlib, `python lesson.py`), so the caller's own values are the engine's; else loaded once
    per process under a name of its own."""
    path = path.resolve()
    if not path.is_file():
        raise UnknownEngineError(f"engine {name!r}: no file {str(path)!r}")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"gradcheck_engine_file_{digest}_{path.stem}"
    imported = _imported_from(path, besides=module_name)
    if imported is not None:
        return imported
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UnknownEngineError(f"engine {name!r}: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # before running it: dataclasses and pickling look it up
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[module_name]
        raise UnknownEngineError(
            f"engine {name!r}: importing {str(path)!r} raised {type(e).__name__}: {e}"
        ) from e
    return module


def _imported_from(path: Path, besides: str) -> ModuleType | None:
    """A module already in `sys.modules` whose file is `path` (not the one named `besides`, the
    copy this loader makes), or None."""
    for module_name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if module_name == besides or not isinstance(file, str) or os.path.basename(file) != path.name:
            continue
        try:
            if os.path.samefile(file, path):
                return module
        except OSError:
            continue
    return None
