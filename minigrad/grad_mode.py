"""Global autograd switches: whether ops record a graph, and whether anomaly detection is on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class _Switches:
    """Mutable flags read by every op; one instance, so reads stay a single attribute lookup.

    `unusual` is True while grad mode is off or anomaly detection on: a Value op then asks one
    flag instead of two (it is read once per node, on the engine's hottest path).
    """

    __slots__ = ("_grad_enabled", "_anomaly_enabled", "closures_allowed", "unusual")

    def __init__(self) -> None:
        self._grad_enabled = True
        self._anomaly_enabled = False
        self.unusual = False
        # True only inside backward(): micrograd-style `_backward` closures may run (not in grad()).
        self.closures_allowed = False

    @property
    def grad_enabled(self) -> bool:
        return self._grad_enabled

    @grad_enabled.setter
    def grad_enabled(self, on: bool) -> None:
        self._grad_enabled = on
        self.unusual = not on or self._anomaly_enabled

    @property
    def anomaly_enabled(self) -> bool:
        return self._anomaly_enabled

    @anomaly_enabled.setter
    def anomaly_enabled(self, on: bool) -> None:
        self._anomaly_enabled = on
        self.unusual = on or not self._grad_enabled


switches = _Switches()


def is_grad_enabled() -> bool:
    """True when new ops record the graph needed for backward."""
    return switches.grad_enabled


def is_anomaly_enabled() -> bool:
    """True inside `detect_anomaly()`."""
    return switches.anomaly_enabled


@contextlib.contextmanager
def set_grad_enabled(mode: bool) -> Iterator[None]:
    """Record the graph (True) or not (False) inside the block, restoring the previous mode after."""
    previous = switches.grad_enabled
    switches.grad_enabled = bool(mode)
    try:
        yield
    finally:
        switches.grad_enabled = previous


def no_grad() -> contextlib.AbstractContextManager[None]:
    """Ops inside record no graph: their results are leaves (like `torch.no_grad`)."""
    return set_grad_enabled(False)


def enable_grad() -> contextlib.AbstractContextManager[None]:
    """Turn graph recording back on inside a `no_grad` block."""
    return set_grad_enabled(True)


@contextlib.contextmanager
def detect_anomaly() -> Iterator[None]:
    """Raise at the first op whose forward or backward produces NaN from non-NaN inputs."""
    previous = switches.anomaly_enabled
    switches.anomaly_enabled = True
    try:
        yield
    finally:
        switches.anomaly_enabled = previous
