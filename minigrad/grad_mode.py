"""Global autograd switches: whether ops record a graph, and whether anomaly detection is on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class _Switches:
    """Mutable flags read by every op; one instance, so reads stay a single attribute lookup."""

    __slots__ = ("grad_enabled", "anomaly_enabled", "closures_allowed")

    def __init__(self) -> None:
        self.grad_enabled = True
        self.anomaly_enabled = False
        # True only inside backward(): micrograd-style `_backward` closures may run (not in grad()).
        self.closures_allowed = False


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
