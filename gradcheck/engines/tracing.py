"""What the engine is doing right now, written where the process that watches it can read it.

A worker process that runs engine code (`gradcheck.campaign.workers`) holds a `Beacon` in memory
it shares with its supervisor (`gradcheck.campaign.supervisor`). The harness marks each unit of
work it starts (a graph, a case: `unit`), each engine op it applies (`traced`, one ctypes store
per op) and the backward pass (`stage`). When the worker dies, calls `sys.exit` or stops
answering, the supervisor reads there which graph and which op it was on, without the worker's
help. Outside a worker nothing is installed and every function here does nothing.

An op known to end the engine's process can be quarantined: applying it then raises
`Quarantined` instead of running the engine again (a hang costs the whole time limit, a crash a
new process), and the unit is reported as not run because of it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Collection
from typing import Any

OP_BYTES = 40
STAGE_BYTES = 24
ALL_UNITS = "*"  # quarantined: every unit is skipped (the engine died too often to go on)


class Beacon(ctypes.Structure):
    """The shared record: `job` is the job the worker took last; `progress` counts the units and
    stages begun (a watcher that sees it stand still for the time limit declares a hang); `unit`
    is the position of the current unit in its task; `op` the last op the engine applied in it,
    `stage` what the harness asked it to do."""

    _fields_ = [
        ("job", ctypes.c_uint64),
        ("progress", ctypes.c_uint64),
        ("unit", ctypes.c_int64),
        ("op", ctypes.c_char * OP_BYTES),
        ("stage", ctypes.c_char * STAGE_BYTES),
    ]


class Quarantined(BaseException):
    """An op was about to run that ended the engine's process before (a BaseException: no check's
    `except Exception` may take it for the engine's answer)."""

    def __init__(self, op: str) -> None:
        super().__init__(op)
        self.op = op


_beacon: Beacon | None = None
_quarantined: frozenset[str] = frozenset()


def install(beacon: Beacon | None) -> None:
    """Write to `beacon` from now on (None: stop)."""
    global _beacon
    _beacon = beacon


def quarantine(ops: Collection[str]) -> None:
    """Refuse to apply `ops` from now on (`ALL_UNITS` among them: refuse every unit)."""
    global _quarantined
    _quarantined = frozenset(ops)


def unit(position: int) -> None:
    """Unit `position` of the current task begins."""
    beacon = _beacon
    if beacon is None:
        return
    beacon.unit = position
    if ALL_UNITS in _quarantined:
        raise Quarantined(ALL_UNITS)
    beacon.op = b""
    beacon.stage = b"forward"
    beacon.progress += 1


def stage(name: str) -> None:
    """The harness moves on to `name` ("backward", a structural check's name): progress too."""
    beacon = _beacon
    if beacon is not None:
        beacon.stage = name.encode()[: STAGE_BYTES - 1]
        beacon.progress += 1


Apply = Callable[[list[Any], dict[str, Any]], Any]


def traced(resolve: Callable[[str], Apply]) -> Callable[[str], Apply]:
    """`resolve` (op name -> the callable applying it) with each call marked on the beacon, or
    `resolve` itself outside a worker."""
    if _beacon is None:
        return resolve

    def resolve_traced(op: str) -> Apply:
        apply, name = resolve(op), op.encode()[: OP_BYTES - 1]
        if op in _quarantined:

            def refuse(operands: list[Any], attrs: dict[str, Any]) -> Any:
                raise Quarantined(op)

            return refuse

        def apply_traced(operands: list[Any], attrs: dict[str, Any]) -> Any:
            beacon = _beacon
            if beacon is not None:
                beacon.op = name
                beacon.stage = b"forward"
            return apply(operands, attrs)

        return apply_traced

    return resolve_traced


def applying(op: str) -> None:
    """The engine is about to apply `op` outside a compiled program (the structural phase's
    chains): marked like a traced op, refused when quarantined."""
    beacon = _beacon
    if beacon is None:
        return
    if op in _quarantined:
        raise Quarantined(op)
    beacon.op = op.encode()[: OP_BYTES - 1]
