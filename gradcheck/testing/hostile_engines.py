"""Engines that attack the harness instead of computing wrong numbers (ending their process,
hanging, answers that raise), and tasks that misbehave the same way for the supervisor's own tests.

Each engine is minigrad's Value over a few ops, with relu misbehaving: it calls `sys.exit(0)`,
ends the process with `os._exit(3)`, reads address 0 (a segmentation fault, as a crashing C
extension gives), never returns, or answers a value whose `__float__` raises. `SlowRelu` is only
slow (a campaign still running when a test signals it), `Benign` not even that;
`SlowToLoad` and `slow_checker` load slowly (loading is not a graph's time);
`EndsProcessInReluMisspellsSigmoid` also has an adapter fault in sigmoid. Run them only in
a worker process (`gradcheck.campaign.supervisor`): in the test's own process they end or hang it. An engine
that exits while it is imported needs a module of its own: `EXITS_AT_IMPORT` is its source.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.engines.tracing import unit

OPS = frozenset({"add", "mul", "neg", "relu"})


class _Hostile(MinigradValue):
    ops = OPS

    def misbehave(self) -> Any:
        raise NotImplementedError

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "relu":
            self.misbehave()
        return super().apply(op, args, attrs)


class Benign(_Hostile):
    """The same engine with relu behaving: what the others' gate baselines are recorded from."""

    def misbehave(self) -> Any:
        return None


class ExitsInRelu(_Hostile):
    def misbehave(self) -> Any:
        sys.exit(0)


class EndsProcessInRelu(_Hostile):
    def misbehave(self) -> Any:
        os._exit(3)


class EndsProcessInReluMisspellsSigmoid(EndsProcessInRelu):
    """relu ends the process (os._exit), and the adapter's own spelling of sigmoid fails (an adapter fault:
    sigmoid is left out of the random graphs, relu must stay quarantined across that)."""

    ops = OPS | {"sigmoid"}

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op == "sigmoid":
            return args[0].sigmoid_of_a_typo()
        return super().apply(op, args, attrs)


class SegfaultsInRelu(_Hostile):
    def misbehave(self) -> Any:
        ctypes.string_at(0)


class HangsInRelu(_Hostile):
    def misbehave(self) -> Any:
        while True:
            time.sleep(0.05)


class SlowRelu(_Hostile):
    def misbehave(self) -> Any:
        time.sleep(0.5)


class _Unreadable:
    """A value no number can be read from."""

    def __float__(self) -> float:
        raise RuntimeError("this value cannot be read as a float")

    def __repr__(self) -> str:
        return "Unreadable()"


class UnreadableRelu(MinigradValue):
    """relu's results answer `value()` with an object whose `__float__` raises."""

    ops = OPS

    def __init__(self) -> None:
        self.relu_outputs: dict[int, Any] = {}  # id -> node (kept alive: ids are not reused)

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        out = super().apply(op, args, attrs)
        if op == "relu":
            self.relu_outputs[id(out)] = out
        return out

    def value(self, node: Any) -> Any:
        return _Unreadable() if id(node) in self.relu_outputs else super().value(node)


EXITS_AT_IMPORT = """
import sys

from gradcheck.testing.hostile_engines import ExitsInRelu

sys.exit(0)


class Adapter(ExitsInRelu):
    pass
"""


# --- tasks for the supervisor's tests -------------------------------------------------------------


@dataclass(frozen=True)
class NoEngine:
    """A campaign stand-in for tasks that need no engine: its state is None."""

    settings: Any = None

    def state(self) -> None:
        return None


@dataclass(frozen=True)
class SlowToLoad(NoEngine):
    """A campaign stand-in whose state takes `seconds` to make, as an engine and torch take to load
    on a busy machine."""

    seconds: float = 2.0

    def state(self) -> None:
        time.sleep(self.seconds)


def slow_checker(settings: Any, adapter: Any) -> Any:
    """A checker factory (`pool.Backend.make_checker`) that takes 2 s, as a checker's first use of
    torch may on a busy machine; its checker answers each graph index with itself."""
    time.sleep(2.0)
    return lambda index: index


def echo(state: Any, units: Sequence[Any], extra: Any = None) -> list[Any]:
    """Each unit as it is, with the worker's pid."""
    return [(u, os.getpid()) for u in _each(units, object(), None)]


def ends_on(state: Any, units: Sequence[Any], extra: Any) -> list[Any]:
    """Each unit as it is; unit `extra` ends the process (`os._exit(3)`)."""
    return _each(units, extra, lambda: os._exit(3))


def hangs_on(state: Any, units: Sequence[Any], extra: Any) -> list[Any]:
    """Each unit as it is; unit `extra` never returns."""
    return _each(units, extra, HangsInRelu().misbehave)


def starved_on(state: Any, units: Sequence[Any], extra: tuple[Any, float]) -> list[Any]:
    """Each unit as it is; unit `extra[0]` runs at the lowest priority and computes for `extra[1]`
    seconds of its own CPU time: on a loaded machine it waits for a CPU far longer than that."""

    def compute() -> None:
        os.nice(19)
        start = time.process_time()
        while time.process_time() - start < extra[1]:
            pass

    return _each(units, extra[0], compute)


def _each(units: Sequence[Any], bad: Any, misbehave: Any) -> list[Any]:
    out = []
    for position, u in enumerate(units):
        unit(position)
        if u == bad:
            misbehave()
        out.append(u)
    return out
