"""Whose exception: the engine's, or its adapter's.

An adapter that lists an op its engine cannot spell (`expand` on an engine with no `.expand`)
fails before any of the engine's code runs; that is the adapter's fault, not the engine's bug.
The innermost frame of the traceback decides, library frames (numpy, Python's own modules)
skipped: a frame of the adapter's own code (a method of its class, or a module-level lambda of
its module, as a spellings table) or of gradcheck's default spellings (the registry's
`a0.expand(*sizes)`, `EngineAdapter.backward`'s `output.backward()`, a value class's spelling)
makes it the adapter's; any other frame, the engine's.

One exception stays the engine's wherever it is raised: Python's "unsupported operand type(s)"
for a number on one side of an operator the engine's class defines (`2.0 / x` with
`__truediv__` but no `__rtruediv__`), which is the class's missing reflected method.
"""

from __future__ import annotations

import re
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import FrameType
from typing import Any


class Producer(str, Enum):
    """Whose code an exception (or a value) came from: the engine's, or its adapter's (its own
    code, or gradcheck's default spellings the adapter relied on)."""

    ENGINE = "engine"
    ADAPTER = "adapter"

    def __str__(self) -> str:
        return self.value


class FrameKind(str, Enum):
    """Which of the adapter's places an exception came from."""

    DEFAULT_SPELLING = "default-spelling"  # gradcheck's default spelling of an op (the registry's)
    DEFAULT_METHOD = "default-method"  # a default method of gradcheck's adapters (`EngineAdapter.value`)
    ADAPTER_METHOD = "adapter-method"  # a method of the adapter's own class
    ADAPTER_MODULE = "adapter-module"  # a module-level lambda of the adapter's module (a spellings table)


@dataclass(frozen=True)
class Frame:
    """Where in the adapter's code (or gradcheck's defaults it relied on) an exception was raised:
    the kind of place, its qualified name ("TapeAdapter.apply", "EngineAdapter.value") or, for a
    module's lambda, the file's name and `line`."""

    kind: FrameKind
    name: str = ""
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "name": self.name, "line": self.line}

    @classmethod
    def from_dict(cls, d: Any) -> Frame:
        return cls(FrameKind(d["kind"]), str(d.get("name", "")), d.get("line"))


@dataclass(frozen=True)
class Raised:
    """An exception met while running an engine, as a record: its type's name, its message, who
    raised it (`producer`), for the adapter's the frame it came from (None for the engine's), and
    for an AttributeError the attribute it names (`AttributeError.name`)."""

    type: str
    message: str
    producer: Producer = Producer.ENGINE
    frame: Frame | None = None
    attribute: str | None = None

    @classmethod
    def of(cls, e: BaseException, adapter: Any = None) -> Raised:
        """`e` as a record; with the `adapter` whose engine was running, attributed by its frame
        (`adapter_frame`); without, the engine's."""
        where = None if adapter is None else adapter_frame(e, adapter)
        producer = Producer.ENGINE if where is None else Producer.ADAPTER
        attribute = getattr(e, "name", None) if isinstance(e, AttributeError) else None
        return cls(
            type(e).__name__, str(e), producer, where, attribute if isinstance(attribute, str) else None
        )

    @property
    def by_adapter(self) -> bool:
        return self.producer is Producer.ADAPTER

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "message": self.message, "producer": self.producer.value}
        if self.frame is not None:
            out["frame"] = self.frame.to_dict()
        if self.attribute is not None:
            out["attribute"] = self.attribute
        return out

    @classmethod
    def from_dict(cls, d: Any) -> Raised:
        frame = Frame.from_dict(d["frame"]) if d.get("frame") else None
        return cls(
            str(d["type"]),
            str(d.get("message", "")),
            Producer(d.get("producer", "engine")),
            frame,
            d.get("attribute"),
        )


_GRADCHECK = Path(__file__).resolve().parents[1]
# gradcheck's default spellings of the ops and default adapter methods: a frame here is the
# adapter's when it raises (the adapter relied on a default its engine cannot take)
DEFAULT_SPELLINGS = frozenset(
    str(_GRADCHECK / part)
    for part in (
        "graphs/opspec.py",
        "graphs/scalar_ops.py",
        "graphs/tensor_ops.py",
        "graphs/layout_ops.py",
        "graphs/nn_ops.py",
        "engines/adapter.py",
        "engines/functional.py",
        "engines/value_class.py",
    )
)
_LIBRARIES = tuple(
    str(Path(p).resolve()) + "/"
    for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)
_SITE = tuple(str(Path(sysconfig.get_paths()[k]).resolve()) + "/" for k in ("purelib", "platlib"))
# Python's words for an operator that takes neither operand type
_UNSUPPORTED = re.compile(r"unsupported operand type\(s\) for (\S+?): '([\w.]+)' and '([\w.]+)'")
_NUMBERS = frozenset({"float", "int", "bool"})
_FORWARD = {
    "+": "__add__",
    "-": "__sub__",
    "*": "__mul__",
    "/": "__truediv__",
    "**": "__pow__",
    "** or pow()": "__pow__",
    "pow()": "__pow__",
    "@": "__matmul__",
}


def adapter_frame(e: BaseException, adapter: Any) -> Frame | None:
    """Where in the adapter's code or gradcheck's default spellings `e` was raised (the adapter's
    `TapeAdapter.apply`, gradcheck's default spelling, gradcheck's default `EngineAdapter.value`);
    None when the engine's code raised it (or a number refused by an operator the engine's class
    defines: a missing reflected method is the engine's)."""
    frames = [frame for frame, _ in traceback.walk_tb(e.__traceback__)]
    if not frames or _refused_number(e, frames):
        return None
    inner = next((f for f in reversed(frames) if not _library(f)), None)
    if inner is None:
        return None
    code = inner.f_code
    file = str(Path(code.co_filename).resolve())
    if file in DEFAULT_SPELLINGS:
        owner = code.co_qualname.split(".")[0]
        if owner in ("EngineAdapter", "FunctionAdapter", "ValueClassAdapter"):
            return Frame(FrameKind.DEFAULT_METHOD, code.co_qualname.split(".<locals>")[0])
        return Frame(FrameKind.DEFAULT_SPELLING)
    for cls in type(adapter).__mro__:
        module = sys.modules.get(cls.__module__)
        source = getattr(module, "__file__", None)
        if source is None or str(Path(source).resolve()) != file:
            continue
        if str(Path(source).resolve()) in DEFAULT_SPELLINGS:
            continue
        if code.co_qualname.split(".")[0] == cls.__name__:
            return Frame(FrameKind.ADAPTER_METHOD, code.co_qualname.split(".<locals>")[0])
        if code.co_qualname.startswith("<lambda>"):  # a module-level spellings table
            return Frame(FrameKind.ADAPTER_MODULE, Path(file).name, inner.f_lineno)
    return None


def _library(frame: FrameType) -> bool:
    """A frame of numpy or Python's own modules: neither the engine's nor the adapter's code."""
    file = str(Path(frame.f_code.co_filename).resolve())
    if file.startswith("<"):
        return True
    if "/numpy/" in file:
        return True
    return file.startswith(_LIBRARIES) and not file.startswith(_SITE)


def _refused_number(e: BaseException, frames: list[FrameType]) -> bool:
    """Whether `e` is Python refusing a number beside a value whose class defines the operator
    (so the class lacks the reflected method, or refuses numbers): the engine's."""
    match = _UNSUPPORTED.search(str(e)) if isinstance(e, TypeError) else None
    if match is None:
        return False
    symbol, left, right = match.groups()
    if (left in _NUMBERS) == (right in _NUMBERS):
        return False  # two values (or two numbers): the engine has no such operator at all
    other = right if left in _NUMBERS else left
    forward = _FORWARD.get(symbol)
    cls = _class_named(other, frames)
    return forward is None or cls is None or hasattr(cls, forward)


def _class_named(name: str, frames: list[FrameType]) -> type | None:
    """The class called `name` of a value in the innermost frames' locals (one level into lists)."""
    for frame in reversed(frames[-3:]):
        for value in frame.f_locals.values():
            items = value if isinstance(value, (list, tuple)) else (value,)
            for item in items:
                if type(item).__name__ == name.rpartition(".")[2]:
                    return type(item)
    return None
